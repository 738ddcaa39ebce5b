#!/bin/sh
# Migrate the transcripts under s3://team-transcripts/sessions/ in 4 shards
# on one machine (or, with parallel's --sshlogin, on several), each
# writing its JSON report; the AWS credentials come from the environment.
seq 0 3 | parallel -j 4 'transcript-tool migrate --json --shard {}/4 --store s3://team-transcripts/artifacts s3://team-transcripts/sessions/ > report-{}.json'
