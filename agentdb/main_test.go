package agentdb

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain runs the tests, or, in a child process a test started, what
// the child was started for (see child).
func TestMain(m *testing.M) {
	if mode := os.Getenv("AGENTDB_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	dir, err := os.MkdirTemp("", "agentdb-locks-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// OpenClaw's lifecycle coordinators of the tests' state folders, and
	// none of the machine's.
	lockRuntimeDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// child does what a test started this process for, with its arguments in
// AGENTDB_ARGS (tab-separated), and returns its exit status:
//
//   - hold FILE: hold the coordinator FILE as OpenClaw does, say "ready",
//     and keep it until stdin closes;
//   - replace DB SESSION FILE POINT: fetch SESSION of the database DB,
//     then replace it with FILE, stopping for ever at POINT (see pause)
//     after saying "paused".
func child(mode string) int {
	args := strings.Split(os.Getenv("AGENTDB_ARGS"), "\t")
	lockRuntimeDir = os.Getenv("AGENTDB_LOCKS")
	ctx := context.Background()
	var err error
	switch mode {
	case "hold":
		var db *sql.DB
		db, err = sql.Open("sqlite", dsn(args[0], url.Values{"_pragma": {"busy_timeout(0)", "journal_mode(MEMORY)"}}))
		if err == nil {
			var conn *sql.Conn
			if conn, err = db.Conn(ctx); err == nil {
				if _, err = conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err == nil {
					fmt.Println("ready")
					_, _ = io.Copy(io.Discard, os.Stdin)
				}
			}
		}
	case "replace":
		d := newDatabase(args[0])
		var snap *Snapshot
		if snap, err = d.Fetch(ctx, args[1], io.Discard); err == nil {
			pause = func(at string) {
				if at == args[3] {
					fmt.Println("paused")
					select {}
				}
			}
			_, err = d.Replace(ctx, snap, args[2])
		}
	default:
		err = fmt.Errorf("unknown child mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild starts this test binary as a child in mode with args and
// returns once it printed want; the child is killed when t ends.
func startChild(t *testing.T, want, mode string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGENTDB_CHILD="+mode, "AGENTDB_ARGS="+strings.Join(args, "\t"), "AGENTDB_LOCKS="+lockRuntimeDir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case got := <-line:
		require.Equal(t, want, got, "child %s %v; stderr:\n%s", mode, args, &stderr)
	case <-time.After(time.Minute):
		t.Fatalf("child %s %v said nothing in a minute", mode, args)
	}
	return cmd
}

// coordinatorPath returns where OpenClaw keeps the coordinator of family
// for the database at path, in the tests' runtime folder.
func coordinatorPath(t *testing.T, family, path string) string {
	t.Helper()
	dir := filepath.Join(lockRuntimeDir, fmt.Sprintf("openclaw-state-locks-%d", os.Getuid()))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	return filepath.Join(dir, family+"."+pathHash(path)+".lock.sqlite")
}
