package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
)

// TestS3Store: the bundled sessions migrated into a store in S3 (gofakes3
// in process, and a real versitygw on loopback) leave the same transcripts
// as a local store, every one rehydrates exactly from S3, and verify, ls,
// cat, show, recall and gc work against the bucket.
func TestS3Store(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			srv.Setenv(t)
			bucket := srv.Bucket(t, "tt-cli")
			url := "s3://" + bucket + "/team/store"
			dir, local := t.TempDir(), t.TempDir()
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			copyTree(t, sessions, filepath.Join(dir, "s"))
			copyTree(t, sessions, filepath.Join(local, "s"))

			r := runCLI(t, "migrate", "--store", url, "--store-as", "/srv/store", "--json", filepath.Join(dir, "s"))
			require.Contains(t, []int{exitOK, exitProblems}, r.code, r.stderr)
			var sum struct{ Migrated, Failed int }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum), r.stdout)
			require.Positive(t, sum.Migrated)
			rl := runCLI(t, "migrate", "--store", filepath.Join(local, "store"), "--store-as", "/srv/store", filepath.Join(local, "s"))
			require.Equal(t, r.code, rl.code, rl.stderr)

			entries, err := os.ReadDir(filepath.Join(dir, "s"))
			require.NoError(t, err)
			for _, e := range entries {
				migrated := filepath.Join(dir, "s", e.Name())
				assert.Equal(t, string(readFile(t, filepath.Join(local, "s", e.Name()))), string(readFile(t, migrated)),
					"%s: migrated into S3 and into a folder, the transcripts differ", e.Name())
				rh := runCLI(t, "rehydrate", "--store", url, migrated)
				if assert.Equal(t, exitOK, rh.code, "%s: %s", e.Name(), rh.stderr) {
					assert.Equal(t, string(readFile(t, filepath.Join(sessions, e.Name()))), rh.stdout, "%s does not rehydrate exactly", e.Name())
				}
			}

			v := runCLI(t, "verify", "--store", url, filepath.Join(dir, "s"))
			assert.Equal(t, exitOK, v.code, v.stdout+v.stderr)
			assert.Contains(t, v.stdout, "0 errors")

			ls := runCLI(t, "ls", "--store", url, "--json")
			require.Equal(t, exitOK, ls.code, ls.stderr)
			var rows []struct{ ID, Path string }
			require.NoError(t, json.Unmarshal([]byte(ls.stdout), &rows))
			require.NotEmpty(t, rows)
			assert.True(t, strings.HasPrefix(rows[0].Path, url+"/objects/"+rows[0].ID[:2]+"/"), rows[0].Path)

			cat := runCLI(t, "cat", "--store", url, rows[0].ID[:12])
			assert.Equal(t, exitOK, cat.code, cat.stderr)
			assert.NotEmpty(t, cat.stdout)

			session := filepath.Join(dir, "s", "claude-session.jsonl")
			show := runCLI(t, "show", "--store", url, session)
			assert.Equal(t, exitOK, show.code, show.stderr)
			assert.Contains(t, show.stdout, url+"/objects/")
			rc := runCLI(t, "recall", "--store", url, session)
			assert.Equal(t, exitOK, rc.code, rc.stderr)
			assert.Contains(t, rc.stdout, url+"/objects/")

			gc := runCLI(t, "gc", "--store", url, filepath.Join(dir, "s"))
			assert.Equal(t, exitOK, gc.code, gc.stderr)
			assert.Contains(t, gc.stdout, "would delete 0 of", "nothing is unreferenced")
			assert.Regexp(t, `kept [1-9][0-9]* referenced`, gc.stdout)
		})
	}
}
