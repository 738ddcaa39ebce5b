package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/agentdb"
	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// TestOpenClawHeld has a real OpenClaw hold its agent database: an
// `openclaw agent --local` turn in flight, its model request stalled by
// the stand-in. migrate of the state folder then refuses, naming the
// database, the process and the lock it holds, exits with status 1 (an
// input failed), and leaves the database's files byte for byte as they
// were. Once OpenClaw has finished its turn, the same migrate rewrites
// the session, and rehydrate --in-place gives back every row's JSON;
// after each, the state OpenClaw derives from the rows is what its own
// rebuild makes of them.
func TestOpenClawHeld(t *testing.T) {
	forEachPin(t, openclawPin, func(t *testing.T, pin string) {
		oc := findAgent(t, pin, "openclaw")
		root := t.TempDir()
		w := newWorkload(t, root, 0)
		home := filepath.Join(root, "home")
		gate := newStall()
		script := w.script(openclawTools)
		api := newAnthropicAPI(t, func(req *messagesRequest) turn {
			if prompt, _ := req.Exchange(setupPrompt, recallPrompt); prompt == recallPrompt {
				gate.wait()
			}
			return script(req)
		})
		configureOpenClaw(t, home, api.URL(), w.Dir)
		env := []string{"HOME=" + home}
		runAgent(t, oc, w.Dir, env, openclawTimeout, "agent", "--local", "--agent", "main", "--message", setupPrompt, "--json")

		state := filepath.Join(home, ".openclaw")
		db := filepath.Join(state, "agents", "main", "agent", agentdb.FileName)

		// OpenClaw's turn, in flight until the gate opens.
		ctx, cancel := context.WithTimeout(context.Background(), openclawTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, oc.Bin, "agent", "--local", "--agent", "main", "--message", recallPrompt,
			"--session-key", "agent:main:main", "--json")
		cmd.Dir = w.Dir
		cmd.Env = append([]string{"PATH=" + oc.Path, "LANG=C.UTF-8", "TERM=dumb", "CI=1"}, env...)
		// The launcher starts the process that does the work: end both.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer gate.open()
		select {
		case <-gate.arrived:
		case err := <-exited:
			t.Fatalf("openclaw agent ended before it asked the model: %v\n%s", err, out.Bytes())
		case <-ctx.Done():
			t.Fatalf("openclaw agent asked the model nothing in %s\n%s", openclawTimeout, out.Bytes())
		}

		rows := sessionRows(t, db)
		files := stateFiles(t, db)
		stdout, stderr, code := runToolStatus(t, "migrate", state)
		t.Logf("migrate while OpenClaw (pid %d) runs: exit %d\nstdout: %s\nstderr: %s", cmd.Process.Pid, code, stdout, stderr)
		assert.Equal(t, 1, code, "migrate of a held database exits with status 1: an input failed")
		// OpenClaw's `agent --local` holds, while its turn runs, the
		// gateway locks of the state folder, which say what it is.
		locks := filepath.Join(state, "tmp", "openclaw-"+strconv.Itoa(os.Getuid())) + string(filepath.Separator)
		m := regexp.MustCompile(`transcript-tool: error: ` + regexp.QuoteMeta(db) + `: an OpenClaw process \(pid ([0-9]+), agent-embedded\) holds the database: lock ` +
			regexp.QuoteMeta(locks) + `gateway\.[.0-9a-z]+\.sqlite; stop it and try again\n`).FindStringSubmatch(stderr)
		if assert.NotNil(t, m, "migrate names the database, the process, its role and the lock it holds") {
			pid, _ := strconv.Atoi(m[1])
			assert.True(t, descends(pid, cmd.Process.Pid), "the process named, %d, is not the OpenClaw started, %d, nor one it started", pid, cmd.Process.Pid)
		}
		assert.Equal(t, files, stateFiles(t, db), "migrate changed the database's files while OpenClaw held it")
		assert.Equal(t, digests(rows), digests(sessionRows(t, db)), "migrate changed rows while OpenClaw held the database")

		gate.open()
		select {
		case err := <-exited:
			require.NoError(t, err, "openclaw agent:\n%s", out.Bytes())
		case <-ctx.Done():
			t.Fatalf("openclaw agent did not end after its answer\n%s", out.Bytes())
		}

		held := sessionRows(t, db)
		written := map[string]openclawgen.Projection{}
		for id := range held {
			p, err := openclawgen.ReadProjection(db, id)
			require.NoError(t, err)
			written[id] = p
		}
		zstdBefore, storedBefore := storage(t, db)
		t.Logf("migrate after OpenClaw ended: %s", runTool(t, "migrate", state))
		for id, want := range held {
			assert.Less(t, len(sessionRows(t, db)[id]), len(want), "migrate did not shrink session %s once OpenClaw ended", id)
		}
		zstdMigrated, storedMigrated := storage(t, db)
		asRebuilt(t, oc, db, held, "migrated")
		t.Logf("rehydrate: %s", runTool(t, "rehydrate", "--in-place", state))
		assert.Equal(t, held, sessionRows(t, db), "rehydrate gives back every row's JSON")
		asRebuilt(t, oc, db, held, "rehydrated")
		for id, want := range written {
			got, err := openclawgen.ReadProjection(db, id)
			require.NoError(t, err)
			assert.Equal(t, want, got, "rehydrated session %s: its search projection is not the one OpenClaw wrote", id)
		}
		zstd, stored := storage(t, db)
		t.Logf("rows stored as zstd, bytes of the rows' payload columns: %d, %d before migrate; %d, %d migrated; %d, %d rehydrated",
			zstdBefore, storedBefore, zstdMigrated, storedMigrated, zstd, stored)
	})
}

// stall holds the stand-in's answer to a request until it is opened.
type stall struct {
	arrived chan struct{} // receives when a request waits
	release chan struct{} // closed by open
}

// newStall returns a closed stall.
func newStall() *stall {
	return &stall{arrived: make(chan struct{}, 1), release: make(chan struct{})}
}

// wait says a request waits, then waits until the stall is opened.
func (s *stall) wait() {
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	<-s.release
}

// open lets every request waiting, and every later one, through.
func (s *stall) open() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

// runToolStatus runs transcript-tool with args and returns its stdout,
// stderr and exit status.
func runToolStatus(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolBin, append([]string{"--progress", "never"}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("transcript-tool %v: %v", args, err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// stateFiles returns the SHA-256 of the agent database at path and of
// its WAL and shared-memory index, those there are, by name.
func stateFiles(t *testing.T, path string) map[string][sha256.Size]byte {
	t.Helper()
	out := map[string][sha256.Size]byte{}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		out[filepath.Base(path+suffix)] = sha256.Sum256(b)
	}
	return out
}

// descends reports whether process pid is process root or one of its
// descendants, as /proc tells: OpenClaw's launcher starts the process
// that does the work.
func descends(pid, root int) bool {
	for pid > 1 {
		if pid == root {
			return true
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// The parent follows the command name, which may hold spaces.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
	}
	return false
}

// storage returns how many rows of the agent database at path OpenClaw
// stored as zstd frames, and the bytes of all rows' payload columns
// (event_json, event_zstd, navigation_json).
func storage(t *testing.T, path string) (zstd, bytes int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow(`SELECT count(event_zstd), coalesce(sum(octet_length(event_json)), 0)
		+ coalesce(sum(length(event_zstd)), 0) + coalesce(sum(octet_length(navigation_json)), 0)
		FROM transcript_events`).Scan(&zstd, &bytes))
	return zstd, bytes
}

// asRebuilt checks that the search projection of each session of the
// agent database at path, the state OpenClaw derives from its rows, is
// what OpenClaw's own rebuild of it makes (see openclawgen.Rebuilt): the
// judge of derived state, which `openclaw doctor --lint` is not in
// 2026.9.6 (none of its checks reads a transcript's derived tables).
func asRebuilt(t *testing.T, oc agent, path string, sessions map[string][]byte, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := filepath.Join(strings.Split(oc.Path, string(os.PathListSeparator))[0], "node")
	pkg := filepath.Join(filepath.Dir(filepath.Dir(oc.Bin)), "openclaw")
	for id := range sessions {
		want, err := openclawgen.Rebuilt(ctx, node, pkg, path, id, t.TempDir())
		require.NoError(t, err)
		got, err := openclawgen.ReadProjection(path, id)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s session %s: its search projection is not what OpenClaw's rebuild makes", what, id)
	}
}

// digests returns the SHA-256 of each session's rows, which a failed
// comparison prints shorter than the rows.
func digests(sessions map[string][]byte) map[string][sha256.Size]byte {
	out := map[string][sha256.Size]byte{}
	for id, rows := range sessions {
		out[id] = sha256.Sum256(rows)
	}
	return out
}
