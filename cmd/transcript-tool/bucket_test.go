package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
)

// objects is a test's client of one bucket of a server.
type objects struct {
	t      *testing.T
	c      *awss3.Client
	bucket string
}

func newObjects(t *testing.T, srv *s3test.Server, bucket string) objects {
	return objects{t: t, c: awss3.NewFromConfig(srv.Config(), func(o *awss3.Options) { o.UsePathStyle = true }), bucket: bucket}
}

func (o objects) put(key string, data []byte) {
	o.t.Helper()
	_, err := o.c.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: &o.bucket, Key: &key, Body: bytes.NewReader(data)})
	require.NoError(o.t, err, key)
}

func (o objects) get(key string) []byte {
	o.t.Helper()
	out, err := o.c.GetObject(context.Background(), &awss3.GetObjectInput{Bucket: &o.bucket, Key: &key})
	require.NoError(o.t, err, key)
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	require.NoError(o.t, err, key)
	return data
}

func (o objects) keys(prefix string) []string {
	o.t.Helper()
	var keys []string
	p := awss3.NewListObjectsV2Paginator(o.c, &awss3.ListObjectsV2Input{Bucket: &o.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(o.t, err)
		for _, obj := range page.Contents {
			keys = append(keys, *obj.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// upload puts the files of dir under prefix, and returns their names.
func (o objects) upload(dir, prefix string) []string {
	o.t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(o.t, err)
	var names []string
	for _, e := range entries {
		o.put(prefix+e.Name(), readFile(o.t, filepath.Join(dir, e.Name())))
		names = append(names, e.Name())
	}
	return names
}

// TestS3Transcripts: the bundled sessions uploaded into a bucket migrate
// in place to the same bytes as on disk, every object rehydrates exactly
// (to stdout and into a local --out), and check, stats, verify, show and
// recall read them.
func TestS3Transcripts(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			srv.Setenv(t)
			bkt := srv.Bucket(t, "tt-paths")
			objs := newObjects(t, srv, bkt)
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			names := objs.upload(sessions, "team/sessions/")
			local := t.TempDir()
			copyTree(t, sessions, filepath.Join(local, "s"))
			store := "s3://" + bkt + "/team/store"
			prefix := "s3://" + bkt + "/team/sessions/"

			r := runCLI(t, "migrate", "--store", store, "--store-as", "/srv/store", "--json", prefix)
			require.Contains(t, []int{exitOK, exitProblems}, r.code, r.stderr)
			var sum struct{ Files, Migrated int }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum), r.stdout)
			require.Positive(t, sum.Migrated)
			assert.Equal(t, len(names), sum.Files)
			assert.NotContains(t, r.stdout+r.stderr, os.TempDir()+"/transcript-tool-s3-", "messages name objects by their URLs")
			rl := runCLI(t, "migrate", "--store", filepath.Join(local, "store"), "--store-as", "/srv/store", filepath.Join(local, "s"))
			require.Equal(t, r.code, rl.code, rl.stderr)

			out := t.TempDir()
			rh := runCLI(t, "rehydrate", "--store", store, "--out", out, prefix)
			require.Equal(t, exitOK, rh.code, rh.stderr)
			for _, name := range names {
				assert.Equal(t, string(readFile(t, filepath.Join(local, "s", name))), string(objs.get("team/sessions/"+name)),
					"%s: migrated in the bucket and on disk, the transcripts differ", name)
				orig := string(readFile(t, filepath.Join(sessions, name)))
				one := runCLI(t, "rehydrate", "--store", store, prefix+name)
				if assert.Equal(t, exitOK, one.code, "%s: %s", name, one.stderr) {
					assert.Equal(t, orig, one.stdout, "%s does not rehydrate exactly", name)
				}
				assert.Equal(t, orig, string(readFile(t, filepath.Join(out, name))), "%s does not rehydrate exactly into --out", name)
			}

			again := runCLI(t, "migrate", "--store", store, "--store-as", "/srv/store", "--json", prefix)
			require.Equal(t, r.code, again.code, again.stderr)
			assert.Contains(t, again.stdout, `"migrated": 0`, "a second run changes nothing")

			v := runCLI(t, "verify", "--store", store, prefix)
			assert.Equal(t, exitOK, v.code, v.stdout+v.stderr)
			assert.Contains(t, v.stdout, "0 errors")
			st := runCLI(t, "stats", "--json", prefix)
			assert.Equal(t, exitOK, st.code, st.stderr)
			ck := runCLI(t, "check", "--store", store, prefix+"claude-session.jsonl")
			assert.Equal(t, exitOK, ck.code, ck.stdout+ck.stderr)
			session := prefix + "claude-session.jsonl"
			show := runCLI(t, "show", "--store", store, session)
			assert.Equal(t, exitOK, show.code, show.stderr)
			assert.Contains(t, show.stdout, store+"/objects/")
			rc := runCLI(t, "recall", "--store", store, session)
			assert.Equal(t, exitOK, rc.code, rc.stderr)
			assert.Contains(t, rc.stdout, store+"/objects/")

			// Every artifact is referenced by a transcript given, known as
			// the source of its records by the object's URL.
			gc := runCLI(t, "gc", "--store", store, "--grace", "0s", "--force", prefix)
			assert.Equal(t, exitOK, gc.code, gc.stderr)
			assert.Contains(t, gc.stdout, "would delete 0 of", "nothing is unreferenced")
			assert.Regexp(t, `kept [1-9][0-9]* referenced`, gc.stdout)
		})
	}
}

// TestS3TranscriptsDefaultStore: with no --store, the store of a prefix
// of transcripts is artifacts/ in it, in the bucket, which later runs
// skip and read; rehydrate --in-place puts the original back.
func TestS3TranscriptsDefaultStore(t *testing.T) {
	srv := s3test.Gofakes3(t)
	srv.Setenv(t)
	bkt := srv.Bucket(t, "tt-default")
	objs := newObjects(t, srv, bkt)
	orig := readFile(t, filepath.Join("..", "..", "testdata", "sessions", "claude-session.jsonl"))
	objs.put("s/claude-session.jsonl", orig)

	r := runCLI(t, "migrate", "s3://"+bkt+"/s/")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotEqual(t, string(orig), string(objs.get("s/claude-session.jsonl")))
	assert.NotEmpty(t, objs.keys("s/artifacts/objects/"))
	assert.NotEmpty(t, objs.keys("s/artifacts/registry/"))

	again := runCLI(t, "migrate", "s3://"+bkt+"/s/")
	require.Equal(t, exitOK, again.code, again.stderr)
	assert.Contains(t, again.stdout, "migrated 0 of 1 file", "the store's keys are no transcripts")
	rh := runCLI(t, "rehydrate", "s3://"+bkt+"/s/claude-session.jsonl")
	require.Equal(t, exitOK, rh.code, rh.stderr)
	assert.Equal(t, string(orig), rh.stdout)

	in := runCLI(t, "rehydrate", "--in-place", "s3://"+bkt+"/s/")
	require.Equal(t, exitOK, in.code, in.stderr)
	assert.Contains(t, in.stdout, "restored 1 of 1 file")
	assert.Equal(t, string(orig), string(objs.get("s/claude-session.jsonl")), "rehydrate --in-place puts the original back")
}

// TestS3TranscriptChanged: an object another writer replaces between its
// fetch and migrate's replace is left as that writer wrote it and its file
// is reported failed, nothing lost; --backup leaves KEY.bak with the
// original bytes of the others.
func TestS3TranscriptChanged(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bkt := srv.Bucket(t, "tt-changed")
			objs := newObjects(t, srv, bkt)
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			for _, name := range []string{"claude-session.jsonl", "codex-rollout.jsonl"} {
				objs.put("s/"+name, readFile(t, filepath.Join(sessions, name)))
			}
			other := []byte(`{"written":"by another writer"}` + "\n")
			proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
				if r.Method == "PUT" && r.Key == "/"+bkt+"/s/claude-session.jsonl" {
					objs.put("s/claude-session.jsonl", other)
				}
				return s3test.Fault{}
			})
			proxy.Setenv(t)

			r := runCLI(t, "migrate", "--backup", "--store", "s3://"+bkt+"/store", "s3://"+bkt+"/s/")
			assert.Equal(t, exitProblems, r.code, r.stdout)
			assert.Contains(t, r.stderr, "s3://"+bkt+"/s/claude-session.jsonl: the file changed while it was migrated")
			assert.Contains(t, r.stdout, "migrated 1 of 2 files (0 unchanged, 0 skipped, 1 failed)")
			assert.Equal(t, string(other), string(objs.get("s/claude-session.jsonl")), "the other writer's bytes are kept")
			assert.NotContains(t, objs.keys("s/"), "s/claude-session.jsonl.bak", "no backup of what was not replaced")
			codex := string(readFile(t, filepath.Join(sessions, "codex-rollout.jsonl")))
			assert.Equal(t, codex, string(objs.get("s/codex-rollout.jsonl.bak")))
			assert.NotEqual(t, codex, string(objs.get("s/codex-rollout.jsonl")))
		})
	}
}

// TestS3TranscriptsShards: four runs of --shard K/4 over a prefix take
// every object once between them.
func TestS3TranscriptsShards(t *testing.T) {
	srv := s3test.Gofakes3(t)
	srv.Setenv(t)
	bkt := srv.Bucket(t, "tt-shards")
	objs := newObjects(t, srv, bkt)
	names := objs.upload(filepath.Join("..", "..", "testdata", "sessions"), "s/")
	var seen []string
	for k := range 4 {
		r := runCLI(t, "migrate", "--dry-run", "--json", "--shard", fmt.Sprintf("%d/4", k), "s3://"+bkt+"/s/")
		require.Contains(t, []int{exitOK, exitProblems}, r.code, r.stderr)
		var rep struct {
			Results []struct{ Path string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
		for _, f := range rep.Results {
			seen = append(seen, strings.TrimPrefix(f.Path, "s3://"+bkt+"/s/"))
		}
	}
	sort.Strings(seen)
	assert.Equal(t, names, seen)
}

// TestS3TranscriptsOut: --out names another prefix, which gets the
// migrated transcripts under their keys relative to the PATH, the
// originals untouched; they rehydrate exactly.
func TestS3TranscriptsOut(t *testing.T) {
	srv := s3test.Gofakes3(t)
	srv.Setenv(t)
	bkt := srv.Bucket(t, "tt-out")
	objs := newObjects(t, srv, bkt)
	sessions := filepath.Join("..", "..", "testdata", "sessions")
	for _, name := range []string{"claude-session.jsonl", "whitespace.jsonl"} {
		objs.put("in/sub/"+name, readFile(t, filepath.Join(sessions, name)))
	}
	store := "s3://" + bkt + "/store"
	r := runCLI(t, "migrate", "--store", store, "--out", "s3://"+bkt+"/out", "s3://"+bkt+"/in/")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, []string{"out/sub/claude-session.jsonl", "out/sub/whitespace.jsonl"}, objs.keys("out/"))
	for _, name := range []string{"claude-session.jsonl", "whitespace.jsonl"} {
		orig := string(readFile(t, filepath.Join(sessions, name)))
		assert.Equal(t, orig, string(objs.get("in/sub/"+name)), "the original is untouched")
		rh := runCLI(t, "rehydrate", "--store", store, "s3://"+bkt+"/out/sub/"+name)
		require.Equal(t, exitOK, rh.code, rh.stderr)
		assert.Equal(t, orig, rh.stdout, name)
	}
	assert.NotEqual(t, string(readFile(t, filepath.Join(sessions, "claude-session.jsonl"))), string(objs.get("out/sub/claude-session.jsonl")))
}

// TestS3TranscriptMemory: a transcript of 256 MiB, one tool result of
// nearly all of it, migrates in place in a bucket in bounded memory: the
// object streams to its local copy and back. It takes a while, so it runs
// only with TT_S3_MEMTEST=1, against versitygw (whose memory is another
// process's).
func TestS3TranscriptMemory(t *testing.T) {
	if os.Getenv("TT_S3_MEMTEST") != "1" {
		t.Skip("TT_S3_MEMTEST=1 runs it")
	}
	srv := s3test.Versitygw(t)
	srv.Setenv(t)
	bkt := srv.Bucket(t, "tt-memory")
	objs := newObjects(t, srv, bkt)
	big := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(big)
	require.NoError(t, err)
	_, err = f.WriteString(`{"role":"user","content":"hi"}` + "\n" + `{"role":"tool","tool_call_id":"c1","content":"`)
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for range 256 {
		_, err = f.Write(chunk)
		require.NoError(t, err)
	}
	_, err = f.WriteString(`"}` + "\n")
	require.NoError(t, err)
	_, err = f.Seek(0, io.SeekStart)
	require.NoError(t, err)
	key := "s/big.jsonl"
	_, err = objs.c.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: &bkt, Key: &key, Body: f})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	peak := s3test.WatchMemory(t)
	r := runCLI(t, "migrate", "--store", "s3://"+bkt+"/store", "s3://"+bkt+"/s/")
	m := peak()
	require.Equal(t, exitOK, r.code, r.stderr)
	t.Logf("256 MiB transcript migrated in a bucket: peak heap in use %d MiB, Go runtime total %d MiB, peak RSS %d MiB",
		m.HeapInuse>>20, m.Sys>>20, m.RSS>>20)
	assert.Less(t, len(objs.get(key)), 4096, "the payload was moved out")
	assert.Less(t, m.HeapInuse, uint64(128<<20))
}

// TestS3ReplaceReplyLost: a replace the server made whose reply was lost
// (the SDK's retry then meets the new ETag: 412) counts as done, and the
// backup of the original stays. (Found by an adversarial review: it was
// reported as changed by another writer, and KEY.bak deleted.)
func TestS3ReplaceReplyLost(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bkt := srv.Bucket(t, "tt-lost")
			objs := newObjects(t, srv, bkt)
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			orig := readFile(t, filepath.Join(sessions, "claude-session.jsonl"))
			objs.put("s/claude-session.jsonl", orig)
			dropped := false
			proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
				if r.Method == "PUT" && r.Key == "/"+bkt+"/s/claude-session.jsonl" && r.Query.Get("x-id") != "CopyObject" && !dropped {
					dropped = true
					return s3test.Fault{DropReply: true}
				}
				return s3test.Fault{}
			})
			proxy.Setenv(t)
			r := runCLI(t, "migrate", "--backup", "--store", "s3://"+bkt+"/store", "s3://"+bkt+"/s/")
			require.True(t, dropped, "no replace went through the proxy")
			assert.Equal(t, exitOK, r.code, r.stdout+r.stderr)
			assert.NotEqual(t, string(orig), string(objs.get("s/claude-session.jsonl")), "not migrated")
			assert.Equal(t, string(orig), string(objs.get("s/claude-session.jsonl.bak")), "the backup of the original is gone")
			rh := runCLI(t, "rehydrate", "--store", "s3://"+bkt+"/store", "s3://"+bkt+"/s/claude-session.jsonl")
			assert.Equal(t, exitOK, rh.code, rh.stderr)
			assert.Equal(t, string(orig), rh.stdout)
		})
	}
}

// TestS3FetchFails: an object that cannot be fetched fails alone: it is
// reported by its URL, the others are migrated (or read), and the run
// exits 1; a command given only that object has nothing to do, and
// exits 2.
func TestS3FetchFails(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bkt := srv.Bucket(t, "tt-fetch")
			objs := newObjects(t, srv, bkt)
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			names := []string{"claude-session.jsonl", "codex-rollout.jsonl", "generated-v1.jsonl"}
			for _, name := range names {
				objs.put("s/"+name, readFile(t, filepath.Join(sessions, name)))
			}
			bad := "/" + bkt + "/s/codex-rollout.jsonl"
			proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
				if r.Method == "GET" && r.Key == bad {
					return s3test.Fault{Status: 403}
				}
				return s3test.Fault{}
			})
			proxy.Setenv(t)
			store := "s3://" + bkt + "/store"

			r := runCLI(t, "migrate", "--store", store, "s3://"+bkt+"/s/")
			assert.Equal(t, exitProblems, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stderr, "s3:/"+bad)
			assert.Contains(t, r.stdout, "migrated 2 of 3 files (0 unchanged, 0 skipped, 1 failed)", "an object that cannot be fetched fails alone")
			for _, name := range names {
				orig := string(readFile(t, filepath.Join(sessions, name)))
				same := orig == string(objs.get("s/"+name))
				assert.Equal(t, "/"+bkt+"/s/"+name == bad, same, "%s: only the object not fetched is as it was", name)
			}

			ck := runCLI(t, "stats", "s3://"+bkt+"/s/")
			assert.Equal(t, exitProblems, ck.code, ck.stdout+ck.stderr)
			assert.Contains(t, ck.stderr, "s3:/"+bad)

			one := runCLI(t, "show", "s3:/"+bad)
			assert.Equal(t, exitUsage, one.code, one.stdout+one.stderr)
			assert.Contains(t, one.stderr, "s3:/"+bad)
		})
	}
}
