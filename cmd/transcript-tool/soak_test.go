package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
)

// TestSoakS3Kill (make soak) kills in-bucket migrations (transcripts and
// store in S3) at random times with SIGKILL, then runs them again: the
// rerun leaves no temporary behind, in $TMPDIR, beside the transcripts or
// in the store, and every transcript rehydrates to its original.
func TestSoakS3Kill(t *testing.T) {
	if os.Getenv("TT_SOAK") == "" {
		t.Skip("set TT_SOAK=1 (make soak)")
	}
	const kills = 25 // per server
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TT_SOAK_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("TT_SOAK_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	sessions := filepath.Join("..", "..", "testdata", "sessions")
	entries, err := os.ReadDir(sessions)
	require.NoError(t, err)
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			// One run, start to exit, at its fastest: kills land in it.
			var span time.Duration
			for range 3 {
				bkt, tmp := soakBucket(t, srv, sessions, entries)
				start := time.Now()
				killed, _ := soakRun(t, srv, tmp, time.Hour, "migrate", "--backup", "--store", "s3://"+bkt+"/store", "s3://"+bkt+"/s/")
				require.False(t, killed)
				if d := time.Since(start); span == 0 || d < span {
					span = d
				}
			}
			t.Logf("%s: an in-bucket run takes %v", srv.Name, span)
			var landed atomic.Int32
			for i := 0; landed.Load() < kills && i < 4*kills; i++ {
				delay := time.Duration(rng.Int64N(int64(span)))
				t.Run(fmt.Sprintf("%d-%v", i, delay), func(t *testing.T) {
					bkt, tmp := soakBucket(t, srv, sessions, entries)
					args := []string{"migrate", "--backup", "--store", "s3://" + bkt + "/store", "s3://" + bkt + "/s/"}
					if killed, _ := soakRun(t, srv, tmp, delay, args...); killed {
						landed.Add(1)
					}
					_, out := soakRun(t, srv, tmp, time.Hour, args...)
					left, err := os.ReadDir(tmp)
					require.NoError(t, err)
					assert.Empty(t, left, "left in $TMPDIR after a rerun")
					objs := newObjects(t, srv, bkt)
					for _, key := range objs.keys("") {
						assert.NotContains(t, key, ".tmp-", "a temporary left in the bucket")
					}
					back := t.TempDir()
					_, rh := soakRun(t, srv, tmp, time.Hour, "rehydrate", "--store", "s3://"+bkt+"/store", "--out", back, "s3://"+bkt+"/s/")
					for _, e := range entries {
						orig := readFile(t, filepath.Join(sessions, e.Name()))
						got, err := os.ReadFile(filepath.Join(back, e.Name()))
						assert.NoError(t, err, rh)
						assert.True(t, bytes.Equal(orig, got), "%s does not rehydrate to its original (rerun: %s)", e.Name(), out)
					}
				})
				if t.Failed() {
					break
				}
			}
			t.Logf("%s: %d in-bucket runs killed, every rerun clean", srv.Name, landed.Load())
			assert.GreaterOrEqual(t, int(landed.Load()), kills)
		})
	}
}

// soakBucket returns a new bucket holding the sessions under s/, and an
// empty $TMPDIR for the runs over it.
func soakBucket(t *testing.T, srv *s3test.Server, dir string, entries []os.DirEntry) (bkt, tmp string) {
	t.Helper()
	bkt = srv.Bucket(t, "tt-soak")
	objs := newObjects(t, srv, bkt)
	for _, e := range entries {
		objs.put("s/"+e.Name(), readFile(t, filepath.Join(dir, e.Name())))
	}
	return bkt, t.TempDir()
}

// soakRun runs the command line in a child process with $TMPDIR tmp,
// killed with SIGKILL after delay; it reports whether the kill ended it,
// and its output.
func soakRun(t *testing.T, srv *s3test.Server, tmp string, delay time.Duration, args ...string) (bool, string) {
	t.Helper()
	a, err := json.Marshal(append([]string{"--progress", "never"}, args...))
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), srv.Env()...), cliArgsEnv+"="+string(a), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true, out.String()
		}
	}
	if delay == time.Hour {
		require.NoError(t, err, "%s: %s", strings.Join(args, " "), out.String())
	}
	return false, out.String()
}
