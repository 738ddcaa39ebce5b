package migrate_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/fault"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// appenderEnv, set to a transcript's path, makes the test binary an agent
// appending to it (see appendLines).
const appenderEnv = "TT_APPENDER"

// appended returns the i-th line an agent appends: a tool result, every
// 50th one large enough to migrate.
func appended(i int) []byte {
	size := 100
	if i%50 == 0 {
		size = payload
	}
	return []byte(testsession.ToolResult(100000+i, size) + "\n")
}

// appendLines is the agent of TestAppenderSoak: until its standard input
// closes, it appends the next line to path every millisecond as pi and
// Claude Code do (open with O_APPEND, one write, close), after every
// eighth line up to 12 ms later, then prints how many it appended.
func appendLines(path string) int {
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	n := 0
	for {
		select {
		case <-stop:
			fmt.Println(n)
			return 0
		default:
		}
		if _, err := appendLine(path, appended(n), os.O_APPEND); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		n++
		pause := time.Millisecond
		if n%8 == 0 {
			// Now and then a pause as long as a rewrite, so that some
			// rewrites see no line until their rename comes.
			pause = time.Duration(rand.IntN(12000)) * time.Microsecond
		}
		time.Sleep(pause)
	}
}

// TestAppenderSoak rewrites a transcript in place over and over, migrate
// and rehydrate --in-place in turn, while another process appends a line
// to it every millisecond (see appendLines) and half the renames take 2
// ms: every line appended must end up in it, once and in order, whether a
// rewrite replaced the file or left it untouched because it changed. 20
// rewrites, 500 under make soak, 25 to a transcript so that it stays
// small enough to be rewritten between two lines at times; every other
// transcript without leases.
func TestAppenderSoak(t *testing.T) {
	rounds := 20
	if os.Getenv(soakEnv) != "" {
		rounds = 500
	}
	var total appendStats
	for done := 0; done < rounds; done += 25 {
		restore := func() {}
		if done%50 != 0 {
			restore = migrate.NoLeases()
		}
		s := rewriteWhileAppending(t, min(25, rounds-done))
		restore()
		total.replaced += s.replaced
		total.carried += s.carried
		total.untouched += s.untouched
		total.lines += s.lines
		total.lost += s.lost
	}
	t.Logf("%d rewrites: %d replaced the file (%d carrying lines appended as it was replaced), %d left it untouched; %d lines appended, %d lost",
		rounds, total.replaced, total.carried, total.untouched, total.lines, total.lost)
}

// appendStats counts what became of rewrites and lines appended.
type appendStats struct {
	replaced, carried, untouched int
	lines, lost                  int
}

// rewriteWhileAppending rewrites a new transcript rounds times while an
// agent (appendLines) appends to it, and checks that it holds every line
// the agent appended.
func rewriteWhileAppending(t *testing.T, rounds int) (s appendStats) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s", 3, payload)
	writeFile(t, path, orig, 0o644)

	agent := exec.Command(os.Args[0], "-test.run=^$")
	agent.Env = append(os.Environ(), appenderEnv+"="+path)
	stdin, err := agent.StdinPipe()
	require.NoError(t, err)
	var out, stderr bytes.Buffer
	agent.Stdout, agent.Stderr = &out, &stderr
	require.NoError(t, agent.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = stdin.Close()
			_ = agent.Wait()
		}
	})
	require.Eventually(t, func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > int64(len(orig))
	}, 10*time.Second, time.Millisecond, "the agent appends")

	// Every other rewrite waits 2 ms as it renames, as a slow disk
	// would: lines appended meanwhile go to the file replaced.
	var slow atomic.Bool
	safefile.Hook = func(op safefile.Op) error {
		if op.Kind == safefile.KindRename && op.Path == path && slow.CompareAndSwap(true, false) {
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}
	defer func() { safefile.Hook = nil }()
	for i := range rounds {
		slow.Store(i%4 < 2)
		inputs, err := session.Collect([]string{path})
		require.NoError(t, err)
		var r migrate.FileResult
		if i%2 == 0 {
			r = migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Jobs: 1}).Results[0]
		} else {
			r = migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, InPlace: true, Jobs: 1}).Results[0]
		}
		switch {
		case r.Err == nil:
			s.replaced++
			if r.Carried > 0 {
				s.carried++
			}
		case errors.Is(r.Err, session.ErrSourceChanged), errors.Is(r.Err, session.ErrWriterOpen):
			s.untouched++
		default:
			require.NoError(t, r.Err, "round %d", i)
		}
	}
	stopped = true
	require.NoError(t, stdin.Close())
	require.NoError(t, agent.Wait(), stderr.String())
	s.lines, err = strconv.Atoi(string(bytes.TrimSpace(out.Bytes())))
	require.NoError(t, err, "agent: %q %s", out.String(), stderr.String())

	got := rehydrate(t, path, "")
	want := append([]byte(nil), orig...)
	for i := range s.lines {
		line := appended(i)
		want = append(want, line...)
		if !bytes.Contains(got, line) {
			s.lost++
		}
	}
	assert.Zero(t, s.lost, "of %d lines appended", s.lines)
	assert.True(t, bytes.Equal(want, got), "the transcript is not its original and every line appended, in order")
	return s
}

// agentAtRename is a hook of package safefile that, when a rewrite is
// about to rename a file over path for the k-th time, appends lines[k] to
// path from another goroutine, as an agent would: the agent's open finds
// the file being replaced. It waits for the append to be done, or for 50
// ms when something holds the open back (see session.Lease), then passes
// the operation on to next, if any.
type agentAtRename struct {
	path  string
	lines [][]byte
	flag  int // of appendLine; 0 for os.O_APPEND
	next  func(safefile.Op) error

	wg   sync.WaitGroup
	mu   sync.Mutex
	k    int
	inos []uint64
	errs []error
}

func (a *agentAtRename) hook(op safefile.Op) error {
	a.mu.Lock()
	k := a.k
	fire := op.Kind == safefile.KindRename && op.Path == a.path && k < len(a.lines)
	if fire {
		a.k++
	}
	a.mu.Unlock()
	if fire {
		done := make(chan struct{})
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer close(done)
			ino, err := appendLine(a.path, a.lines[k], cmp.Or(a.flag, os.O_APPEND))
			a.mu.Lock()
			defer a.mu.Unlock()
			a.inos, a.errs = append(a.inos, ino), append(a.errs, err)
		}()
		select {
		case <-done:
		case <-time.After(50 * time.Millisecond):
		}
	}
	if a.next == nil {
		return nil
	}
	return a.next(op)
}

// wait waits for the appends and returns the inodes they wrote to.
func (a *agentAtRename) wait() ([]uint64, error) {
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.k < len(a.lines) {
		return a.inos, fmt.Errorf("%d renames over %s, want %d", a.k, a.path, len(a.lines))
	}
	return a.inos, errors.Join(a.errs...)
}

// appendAtRename installs an agentAtRename on path as the hook of package
// safefile. The function returned removes it, waits for the appends and
// returns the inodes they wrote to.
func appendAtRename(t *testing.T, path string, lines ...[]byte) (inodes func() []uint64) {
	t.Helper()
	a := &agentAtRename{path: path, lines: lines}
	safefile.Hook = a.hook
	t.Cleanup(func() { safefile.Hook = nil })
	return func() []uint64 {
		t.Helper()
		safefile.Hook = nil
		inos, err := a.wait()
		require.NoError(t, err)
		return inos
	}
}

// appendLine appends line to path as pi and Claude Code append an entry
// (flag os.O_APPEND; os.O_TRUNC writes it over the file instead) and
// returns the inode it wrote to.
func appendLine(path string, line []byte, flag int) (uint64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, 0o644)
	if err != nil {
		return 0, err
	}
	var st syscall.Stat_t
	if err = syscall.Fstat(int(f.Fd()), &st); err == nil {
		_, err = f.Write(line)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return st.Ino, err
}

// sameBytes asserts that got is want, saying where they part: the
// transcripts compared here are long.
func sameBytes(t *testing.T, want, got []byte, what string) bool {
	t.Helper()
	if bytes.Equal(want, got) {
		return true
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	return assert.Failf(t, what, "%d bytes, want %d; they part at byte %d: %q", len(got), len(want), i, got[i:min(len(got), i+80)])
}

// newTranscript makes s.jsonl, a pi session, in a new folder, and returns
// its path, its bytes and what migrating it in place makes of them.
func newTranscript(t *testing.T) (path string, orig, migrated []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "s.jsonl")
	orig = testsession.Pi("s", 3, payload)
	writeFile(t, path, orig, 0o640)
	ref := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, ref, orig, 0o640)
	require.Equal(t, 1, migrateRun(t, migrate.Options{Store: filepath.Join(filepath.Dir(path), session.StoreDirName)}, ref).Migrated)
	return path, orig, readFile(t, ref)
}

// rewrite migrates the transcript at path in place, or rehydrates it in
// place, with backup for --backup.
func rewrite(t *testing.T, path string, rehydrate, backup bool) migrate.FileResult {
	t.Helper()
	if !rehydrate {
		return result(t, migrateRun(t, migrate.Options{Backup: backup, Jobs: 1}, path), path)
	}
	inputs, err := session.Collect([]string{path})
	require.NoError(t, err)
	return migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, InPlace: true, Jobs: 1}).Results[0]
}

// TestAppendAtRename: an agent's line appended to the transcript just as
// the rewrite renames its output over it, into the file being replaced,
// is carried into the new transcript after the lines rewritten, by
// migrate and by rehydrate --in-place, also where leases are not to be
// had and with --backup; and a line appended to the new transcript as
// that carry renames it is carried after the first.
func TestAppendAtRename(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rehydrate bool
		noLease   bool
		backup    bool
		lines     int // appended, one at each rename
	}{
		{name: "migrate", lines: 1},
		{name: "rehydrate", rehydrate: true, lines: 1},
		{name: "migrate without lease", noLease: true, lines: 1},
		{name: "rehydrate without lease", rehydrate: true, noLease: true, lines: 1},
		{name: "migrate with backup", backup: true, lines: 1},
		{name: "migrate twice", lines: 2},
		{name: "rehydrate twice without lease", rehydrate: true, noLease: true, lines: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, orig, want := newTranscript(t) // want: what the rewrite makes of it
			dir := filepath.Dir(path)
			if tc.rehydrate {
				require.Equal(t, 1, migrateRun(t, migrate.Options{}, path).Migrated)
				want = orig
			}
			var lines [][]byte
			var all []byte
			for i := range tc.lines {
				lines = append(lines, appended(i))
				all = append(all, lines[i]...)
			}
			if tc.noLease {
				defer migrate.NoLeases()()
			}
			old := inode(t, path)
			wrote := appendAtRename(t, path, lines...)

			r := rewrite(t, path, tc.rehydrate, tc.backup)

			inos := wrote()
			require.Equal(t, old, inos[0], "the agent wrote to the file being replaced")
			require.NoError(t, r.Err)
			sameBytes(t, append(want, all...), readFile(t, path), "the lines are carried after the lines rewritten, in order")
			assert.Equal(t, int64(len(all)), r.Carried)
			sameBytes(t, append(orig, all...), rehydrate(t, path, ""), "rehydrated")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
			if tc.backup {
				sameBytes(t, append(orig, all...), readFile(t, path+".bak"), "the backup is the file replaced")
			}
			assertNoTempFiles(t, dir)

			// The lines carried are original lines: the next run migrates
			// them, and the one after changes nothing.
			if !tc.rehydrate {
				r := result(t, migrateRun(t, migrate.Options{}, path), path)
				require.NoError(t, r.Err)
				assert.Equal(t, migrate.StatusMigrated, r.Status)
				sameBytes(t, append(orig, all...), rehydrate(t, path, ""), "rehydrated")
				assert.Equal(t, migrate.StatusUnchanged, result(t, migrateRun(t, migrate.Options{}, path), path).Status)
			}
		})
	}
}

// TestAppendAtRenameZstd: a compressed transcript, which agents do not
// append to, written to as it is replaced is put back as it was, with
// the bytes written to it, and reported changed.
func TestAppendAtRenameZstd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl.zst")
	orig := zstdCompress(t, testsession.Pi("s", 3, payload))
	writeFile(t, path, orig, 0o640)
	line := appended(0)
	wrote := appendAtRename(t, path, line)

	r := rewrite(t, path, false, false)

	wrote()
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, session.ErrSourceChanged)
	assert.Contains(t, r.Message, "put back as it was")
	sameBytes(t, append(orig, line...), readFile(t, path), "put back as it was, with the line")
	assertNoTempFiles(t, dir)
}

// keptAside returns the name of the one file beside path that a rewrite
// kept bytes aside in, and its bytes.
func keptAside(t *testing.T, path string) (string, []byte) {
	t.Helper()
	aside, err := filepath.Glob(path + ".appended-*")
	require.NoError(t, err)
	require.Len(t, aside, 1)
	return aside[0], readFile(t, aside[0])
}

// TestFaultCarry fails each file operation of the carry in turn: the
// transcript is then the migrated one, the line appended kept in a file
// beside it that the error names, and no temporary file is left.
func TestFaultCarry(t *testing.T) {
	for k := 1; ; k++ {
		path, _, want := newTranscript(t)
		dir := filepath.Dir(path)
		line := appended(0)
		wrote := appendAtRename(t, path, line)
		// Fail the k-th operation after the first rename over path.
		inner := safefile.Hook
		renamed, n := false, 0
		var failed safefile.Op
		safefile.Hook = func(op safefile.Op) error {
			if err := inner(op); err != nil {
				return err
			}
			if renamed {
				if n++; n == k {
					failed = op
					return syscall.ENOSPC
				}
			}
			renamed = renamed || op.Kind == safefile.KindRename && op.Path == path
			return nil
		}

		r := rewrite(t, path, false, false)

		wrote()
		if failed.Kind == "" {
			require.NoError(t, r.Err)
			sameBytes(t, append(want, line...), readFile(t, path), "carried")
			assert.Greater(t, k, 4, "the carry makes a file, writes, fsyncs, renames it and fsyncs its directory")
			return
		}
		require.ErrorIs(t, r.Err, syscall.ENOSPC, "at %v", failed)
		if bytes.Equal(append(want, line...), readFile(t, path)) {
			assert.Contains(t, []safefile.Kind{safefile.KindSync, safefile.KindSyncDir}, failed.Kind,
				"carried, yet %v failed before a rename", failed)
			continue
		}
		sameBytes(t, want, readFile(t, path), "migrated")
		side, kept := keptAside(t, path)
		assert.Contains(t, r.Message, side)
		assert.Contains(t, r.Message, fmt.Sprintf("after its byte %d", len(want)))
		sameBytes(t, line, kept, "the line kept aside")
		assertNoTempFiles(t, dir)
	}
}

// TestCrashCarry kills, in a child process, a migration at each file
// operation from the rename over a transcript that an agent appends a
// line to as it is renamed. The transcript is then whole: its original,
// or migrated with the line or without it (the line an agent wrote to the
// file being replaced lives only as long as the process that holds that
// file, until it is carried); never a part of either. A rerun migrates
// it and leaves no temporary file.
func TestCrashCarry(t *testing.T) {
	sc := scenarios["carry"]
	line := appended(0)
	orig := sc.files["a.jsonl"]

	// The operations of an uninterrupted run, in this process.
	root := t.TempDir()
	sc.build(t, root)
	path := filepath.Join(root, "src", "a.jsonl")
	in := &fault.Injector{}
	uninstall := in.Install()
	a := &agentAtRename{path: path, lines: [][]byte{line}, next: safefile.Hook}
	safefile.Hook = a.hook
	sum := sc.run(t, root)
	uninstall()
	_, err := a.wait()
	require.NoError(t, err)
	require.Zero(t, sum.Failed, "%+v", sum.Results)
	require.Equal(t, int64(len(line)), sum.Results[0].Carried)
	full := unroot(root, readFile(t, path))
	ops := in.Ops()
	first := slices.IndexFunc(ops, func(op fault.Op) bool { return op.Kind == safefile.KindRename && op.Path == path })
	require.GreaterOrEqual(t, first, 0)
	states := map[string]string{
		string(orig):                       "original",
		string(orig) + string(line):        "original with the line",
		string(full[:len(full)-len(line)]): "migrated without the line",
		string(full):                       "migrated with the line",
	}

	var mu sync.Mutex
	seen := map[string]int{}
	t.Run("kills", func(t *testing.T) {
		for k := first + 1; k <= len(ops); k++ {
			t.Run(fmt.Sprintf("%d-%s", k, ops[k-1].Kind), func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				sc.build(t, root)
				path := filepath.Join(root, "src", "a.jsonl")
				killed, _ := runChild(t, childSpec{Scenario: sc.name, Root: root, Append: true}, k, false)
				require.True(t, killed, "the child finished without reaching %v", ops[k-1])
				state, ok := states[string(unroot(root, readFile(t, path)))]
				require.True(t, ok, "the transcript is neither its original nor migrated, with the line or without it")
				mu.Lock()
				seen[state]++
				mu.Unlock()

				ageTemps(t, root)
				sum := sc.run(t, root)
				require.Zero(t, sum.Failed, "%+v", sum.Results)
				want := orig
				if strings.HasSuffix(state, "with the line") {
					want = append(append([]byte(nil), orig...), line...)
				}
				sameBytes(t, want, rehydrate(t, path, ""), "after the rerun")
				assert.Equal(t, migrate.StatusUnchanged, result(t, sc.run(t, root), path).Status, "the rerun migrated it")
				assertNoTempFiles(t, filepath.Join(root, "src"))
			})
		}
	})
	t.Logf("%d crash points from the rename on: %v", len(ops)-first, seen)
}

// TestAppendAtEveryRename: an agent that appends to the transcript each
// time a file is renamed over it has its lines carried ten times; then the
// rewrite gives up and keeps the last line in a file beside it, which the
// error names with where the line belongs. One that writes a shorter file
// over the transcript as it is replaced has that file kept whole.
func TestAppendAtEveryRename(t *testing.T) {
	t.Run("appending", func(t *testing.T) {
		path, _, want := newTranscript(t)
		var lines [][]byte
		for i := range 11 {
			lines = append(lines, appended(i))
			if i < 10 {
				want = append(want, lines[i]...)
			}
		}
		wrote := appendAtRename(t, path, lines...)

		r := rewrite(t, path, false, false)

		wrote()
		require.Error(t, r.Err)
		assert.Contains(t, r.Message, "agents kept writing to it as it was replaced")
		sameBytes(t, want, readFile(t, path), "ten lines carried")
		side, kept := keptAside(t, path)
		sameBytes(t, lines[10], kept, "the last line kept aside")
		assert.Contains(t, r.Message, fmt.Sprintf("are in %s: they belong after its byte %d", side, len(want)))
	})
	t.Run("rewriting", func(t *testing.T) {
		path, _, want := newTranscript(t)
		a := &agentAtRename{path: path, lines: [][]byte{appended(0)}, flag: os.O_TRUNC}
		safefile.Hook = a.hook
		defer func() { safefile.Hook = nil }()

		r := rewrite(t, path, false, false)

		_, err := a.wait()
		require.NoError(t, err)
		assert.Contains(t, r.Message, "the file replaced was cut short meanwhile")
		sameBytes(t, want, readFile(t, path), "migrated")
		_, kept := keptAside(t, path)
		sameBytes(t, appended(0), kept, "the file written over it kept whole")
	})
}

// TestLateWriterWithoutLease: where no lease is to be had, an agent that
// opened the transcript just before it was replaced and writes a little
// after the rename, when the replaced file has not grown yet, still has
// its line carried into the new file. Before, a replaced file of
// unchanged size was taken to be done with at once, and the line was
// lost with it.
func TestLateWriterWithoutLease(t *testing.T) {
	defer migrate.NoLeases()()
	// Room for a loaded machine's scheduling delays.
	defer migrate.SettleQuiet(300 * time.Millisecond)()
	for _, back := range []bool{false, true} {
		t.Run(fmt.Sprint("rehydrate=", back), func(t *testing.T) {
			path, orig, migrated := newTranscript(t)
			if back {
				writeFile(t, path, migrated, 0o640)
			}
			line := appended(0)
			var wrote sync.WaitGroup
			safefile.Hook = func(op safefile.Op) error {
				if op.Kind != safefile.KindRename || op.Path != path {
					return nil
				}
				safefile.Hook = nil
				// Opened before the rename: its write goes to the file
				// replaced.
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				require.NoError(t, err)
				wrote.Add(1)
				go func() {
					defer wrote.Done()
					time.Sleep(20 * time.Millisecond)
					_, werr := f.Write(line)
					assert.NoError(t, werr)
					assert.NoError(t, f.Close())
				}()
				return nil
			}
			t.Cleanup(func() { safefile.Hook = nil })
			r := rewrite(t, path, back, false)
			wrote.Wait()
			require.NoError(t, r.Err)
			assert.Equal(t, int64(len(line)), r.Carried)
			want := append(append([]byte(nil), orig...), line...)
			sameBytes(t, want, rehydrate(t, path, ""), "the transcript restored")
		})
	}
}
