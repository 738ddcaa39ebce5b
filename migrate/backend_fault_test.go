package migrate_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// counted opens every store of a run through one fault injector: the
// calls of all of them are counted together, in the order they are made
// (the scenarios run one job), and hook decides about each.
type counted struct {
	mu    sync.Mutex
	n     int
	calls []faulty.Call
	hook  func(n int, c faulty.Call) error
}

func (c *counted) open(spec string) (store.Backend, error) {
	return faulty.New(local.New(spec), func(call faulty.Call) error {
		c.mu.Lock()
		c.n++
		n := c.n
		c.calls = append(c.calls, call)
		c.mu.Unlock()
		if c.hook == nil {
			return nil
		}
		return c.hook(n, call)
	}), nil
}

// killAtCall opens stores whose k-th backend call, counted over all of
// them, kills the process.
func killAtCall(k int) func(string) (store.Backend, error) {
	c := &counted{hook: func(n int, _ faulty.Call) error {
		if n == k {
			_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		return nil
	}}
	return c.open
}

// backendCalls counts the backend calls of an uninterrupted run of sc.
func backendCalls(t *testing.T, sc *scenario) []faulty.Call {
	t.Helper()
	root := t.TempDir()
	sc.build(t, root)
	c := &counted{}
	opts := sc.options(root)
	opts.OpenStore = c.open
	sum := migrateRun(t, opts, filepath.Join(root, "src"))
	require.Zero(t, sum.Failed, "%+v", sum.Results)
	require.NotEmpty(t, c.calls)
	return c.calls
}

// TestFaultEachBackendCall fails each call of the store's backend in a run
// in turn, through the fault-injecting wrapper (store/faulty), with
// ENOSPC, EIO or EACCES. A call that fails must fail a transcript, leave
// it as it was, keep every other transcript whole and restorable, and a
// rerun must end as one uninterrupted run.
func TestFaultEachBackendCall(t *testing.T) {
	errnos := []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EACCES}
	for _, sc := range sweepScenarios() {
		t.Run(sc.name, func(t *testing.T) { faultEachCall(t, sc, errnos) })
	}
}

// sweepScenarios are the scenarios the backend sweeps run: one, or under
// make soak all of those of the file operation sweeps.
func sweepScenarios() []*scenario {
	names := []string{"backup"}
	if os.Getenv(soakEnv) != "" {
		names = append(names, "inplace", "out", "soak-sweep-j1")
	}
	var out []*scenario
	for _, name := range names {
		out = append(out, scenarios[name])
	}
	return out
}

func faultEachCall(t *testing.T, sc *scenario, errnos []syscall.Errno) {
	ref := newReference(t, sc)
	calls := backendCalls(t, sc)
	for k := 1; k <= len(calls); k++ {
		errno := errnos[k%len(errnos)]
		t.Run(fmt.Sprintf("%d-%s", k, calls[k-1].Method), func(t *testing.T) {
			root := t.TempDir()
			sc.build(t, root)
			c := &counted{hook: func(n int, call faulty.Call) error {
				if n == k {
					return &fs.PathError{Op: string(call.Method), Path: call.Handle.Name, Err: errno}
				}
				return nil
			}}
			opts := sc.options(root)
			opts.OpenStore = c.open
			sum := migrateRun(t, opts, filepath.Join(root, "src"))
			require.GreaterOrEqual(t, c.n, k, "the run made fewer calls than the reference run")
			assert.Positive(t, sum.Failed, "the failed %s was not reported", calls[k-1].Method)
			for _, r := range sum.Results {
				if r.Status == migrate.StatusFailed {
					assert.ErrorIs(t, r.Err, errno)
				}
			}
			ref.checkInterrupted(t, root, false)
			ref.checkRerun(t, root)
		})
	}
	t.Logf("%d backend calls failed in turn", len(calls))
}

// TestCrashEachBackendCall kills a run at each call of the store's backend
// in turn: what it leaves must be as a crash anywhere leaves it (every
// transcript original or completely migrated, nothing lost), and a rerun
// must end as one uninterrupted run.
func TestCrashEachBackendCall(t *testing.T) {
	for _, sc := range sweepScenarios() {
		t.Run(sc.name, func(t *testing.T) { crashEachCall(t, sc) })
	}
}

func crashEachCall(t *testing.T, sc *scenario) {
	ref := newReference(t, sc)
	calls := backendCalls(t, sc)
	for k := 1; k <= len(calls); k++ {
		t.Run(fmt.Sprintf("%d-%s", k, calls[k-1].Method), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			sc.build(t, root)
			killed, _ := crashChildAtCall(t, sc, root, k)
			require.True(t, killed, "the child finished without reaching call %d", k)
			ref.checkInterrupted(t, root, true)
			ageTemps(t, root)
			ref.checkRerun(t, root)
		})
	}
	t.Logf("%d backend calls, a crash at each", len(calls))
}
