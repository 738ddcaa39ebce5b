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

			// A grace under the minimum needs --force; forced, gc --yes
			// says what it risks in S3, and leaves no lease behind.
			gc = runCLI(t, "gc", "--store", url, "--grace", "0s", "--yes", filepath.Join(dir, "s"))
			assert.Equal(t, exitUsage, gc.code)
			assert.Contains(t, gc.stderr, "transcript-tool: error: --grace 0s is shorter than 10m0s")
			assert.Contains(t, gc.stderr, "hint: add --force")
			gc = runCLI(t, "gc", "--store", url, "--grace", "0s", "--force", "--yes", filepath.Join(dir, "s"))
			assert.Equal(t, exitOK, gc.code, gc.stderr)
			assert.Contains(t, gc.stdout, "deleted 0 of")
			assert.Equal(t, "transcript-tool: warning: --grace 0s on "+url+": a migration by an earlier version of transcript-tool, "+
				"which takes no lease, may lose the artifacts it has just stored or found there\n", gc.stderr)
			assert.Empty(t, newObjects(t, srv, bucket).keys("team/store/locks/"), "a lease is left")
		})
	}
}

// TestS3FaultsConverge: with one request in 20 failing (500, 503, a
// reset) and the server unreachable for a stretch of the run (every
// request reset, as while it restarts), migrate into S3 loses nothing:
// every transcript is its original or completely migrated and
// restorable; a rerun migrates the rest, and verify is clean.
func TestS3FaultsConverge(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bucket := srv.Bucket(t, "tt-faults")
			url := "s3://" + bucket + "/store"
			faults := []s3test.Fault{{Status: 500}, {Status: 503}, {Reset: true}}
			proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
				switch {
				case r.N >= 120 && r.N < 140:
					return s3test.Fault{Reset: true} // the server is down
				case r.N%20 == 0:
					return faults[r.N/20%len(faults)]
				}
				return s3test.Fault{}
			})
			proxy.Setenv(t)
			dir := t.TempDir()
			sessions := filepath.Join("..", "..", "testdata", "sessions")
			copyTree(t, sessions, filepath.Join(dir, "s"))

			r := runCLI(t, "migrate", "--store", url, "--jobs", "2", "--json", filepath.Join(dir, "s"))
			require.Contains(t, []int{exitOK, exitProblems}, r.code, r.stderr)
			require.Greater(t, proxy.Requests(), 140, "the run ended before the outage")
			var first struct{ Migrated, Failed int }
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &first), r.stdout)
			t.Logf("first run: %d requests, %d faults, %d migrated, %d failed", proxy.Requests(), len(proxy.Faults()), first.Migrated, first.Failed)
			require.Positive(t, first.Failed, "the outage failed nothing: the test shows nothing")

			srv.Setenv(t) // past the proxy: what is there now
			entries, err := os.ReadDir(filepath.Join(dir, "s"))
			require.NoError(t, err)
			check := func(when string) {
				for _, e := range entries {
					orig := string(readFile(t, filepath.Join(sessions, e.Name())))
					path := filepath.Join(dir, "s", e.Name())
					if string(readFile(t, path)) == orig {
						continue
					}
					rh := runCLI(t, "rehydrate", "--store", url, path)
					if assert.Equal(t, exitOK, rh.code, "%s: %s: %s", when, e.Name(), rh.stderr) {
						assert.Equal(t, orig, rh.stdout, "%s: %s does not rehydrate exactly", when, e.Name())
					}
				}
			}
			check("after the faults")

			again := runCLI(t, "migrate", "--store", url, "--json", filepath.Join(dir, "s"))
			require.Contains(t, []int{exitOK, exitProblems}, again.code, again.stderr)
			clean := t.TempDir()
			copyTree(t, sessions, filepath.Join(clean, "s"))
			ref := runCLI(t, "migrate", "--store", filepath.Join(clean, "store"), "--json", filepath.Join(clean, "s"))
			var a, b struct{ Failed int }
			require.NoError(t, json.Unmarshal([]byte(again.stdout), &a))
			require.NoError(t, json.Unmarshal([]byte(ref.stdout), &b))
			assert.Equal(t, b.Failed, a.Failed, "the rerun fails only what a run without faults fails:\n%s", again.stdout)
			check("after the rerun")
			v := runCLI(t, "verify", "--store", url, filepath.Join(dir, "s"))
			assert.Equal(t, exitOK, v.code, v.stdout+v.stderr)
			assert.Contains(t, v.stdout, "0 errors")
		})
	}
}
