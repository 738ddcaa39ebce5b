package migrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// The test binary doubles as the process that crashes: started with
// childEnv set, TestMain migrates a scenario's tree instead of running the
// tests, with an injector that kills it at the operation named by
// crashAtEnv (none when unset), and prints the summary as JSON.
const (
	childEnv   = "TT_CRASH_CHILD" // JSON childSpec
	crashAtEnv = "TT_CRASH_AT"    // k: SIGKILL at the k-th file operation
	tearEnv    = "TT_CRASH_TEAR"  // set: a write at k is torn in half first
	soakEnv    = "TT_SOAK"        // set: long variants (make soak)
)

// childSpec says what the child migrates.
type childSpec struct {
	Scenario string
	Root     string
	// BackendAt, when not 0, kills the child at the BackendAt-th call of
	// its store backends (see store/faulty), instead of at a file
	// operation.
	BackendAt int
	// Append makes an agent append a line to src/a.jsonl as the first
	// file is renamed over it (see agentAtRename).
	Append bool
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	if spec := os.Getenv(unprivilegedEnv); spec != "" {
		os.Exit(unprivileged(spec))
	}
	if path := os.Getenv(appenderEnv); path != "" {
		os.Exit(appendLines(path))
	}
	os.Exit(m.Run())
}

func child(spec string) int {
	var cs childSpec
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sc, ok := scenarios[cs.Scenario]
	if !ok {
		fmt.Fprintln(os.Stderr, "no scenario", cs.Scenario)
		return 2
	}
	if s := os.Getenv(crashAtEnv); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		in := &fault.Injector{At: k, Action: fault.Crash}
		if os.Getenv(tearEnv) != "" {
			in.Action = fault.Tear
		}
		in.Install()
	}
	if cs.Append {
		a := &agentAtRename{path: filepath.Join(cs.Root, "src", "a.jsonl"), lines: [][]byte{appended(0)}, next: safefile.Hook}
		safefile.Hook = a.hook
	}
	inputs, err := session.Collect([]string{filepath.Join(cs.Root, "src")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := sc.options(cs.Root)
	if cs.BackendAt > 0 {
		opts.OpenStore = killAtCall(cs.BackendAt)
	}
	sum := migrate.Run(context.Background(), inputs, opts)
	if err := json.NewEncoder(os.Stdout).Encode(sum); err != nil {
		return 2
	}
	return 0
}

// scenario is a tree of transcripts under <root>/src and how to migrate
// it.
type scenario struct {
	name  string
	files map[string][]byte // relative to src
	jobs  int
	out   bool // --out <root>/out instead of in place
	bak   bool // --backup
}

func (sc *scenario) options(root string) migrate.Options {
	opts := migrate.Options{OpenStore: local.Open, Jobs: sc.jobs, Backup: sc.bak}
	if sc.out {
		opts.Out = filepath.Join(root, "out")
	}
	return opts
}

// transcriptMode is the mode of every transcript of a scenario; a run must
// keep it.
const transcriptMode = 0o640

func (sc *scenario) build(t *testing.T, root string) {
	t.Helper()
	for rel, data := range sc.files {
		writeFile(t, filepath.Join(root, "src", rel), data, transcriptMode)
	}
}

// dest returns where the output for the transcript rel goes, relative to
// the root.
func (sc *scenario) dest(rel string) string {
	if sc.out {
		return filepath.Join("out", rel)
	}
	return filepath.Join("src", rel)
}

// run migrates the tree in this process.
func (sc *scenario) run(t *testing.T, root string) migrate.Summary {
	t.Helper()
	return migrateRun(t, sc.options(root), filepath.Join(root, "src"))
}

// small is the sweep's tree: two sessions that share two payloads in one
// directory, and in a subdirectory (with its own store) a session whose
// name is longer than a temporary file's may be (see safefile) and a
// transcript with nothing to externalize.
func small() map[string][]byte {
	return map[string][]byte{
		"a.jsonl":         testsession.Pi("a", 2, payload),
		"b.jsonl":         testsession.Pi("b", 3, payload),
		"sub/" + longName: testsession.Pi("c", 1, payload+1),
		"sub/d.jsonl":     testsession.Pi("d", 1, 100),
	}
}

// longName is a transcript's name of 120 bytes, as agents' session names
// with a title in them may be.
var longName = strings.Repeat("a-long-session-title-", 5) + "123456789012345.jsonl"

// large is the soak's tree: more sessions, more shared payloads, more
// directories.
func large() map[string][]byte {
	m := map[string][]byte{}
	for i := 0; i < 12; i++ {
		m[fmt.Sprintf("d%d/s%02d.jsonl", i%3, i)] = testsession.Pi(fmt.Sprint(i), 2+i%5, payload+100*(i%3))
	}
	return m
}

var scenarios = map[string]*scenario{
	"inplace":       {name: "inplace", files: small(), jobs: 1},
	"backup":        {name: "backup", files: small(), jobs: 1, bak: true},
	"out":           {name: "out", files: small(), jobs: 1, out: true},
	"soak-inplace":  {name: "soak-inplace", files: large()},
	"soak-backup":   {name: "soak-backup", files: large(), bak: true},
	"soak-out":      {name: "soak-out", files: large(), out: true},
	"soak-sweep-j1": {name: "soak-sweep-j1", files: large(), jobs: 1, bak: true},
	"carry":         {name: "carry", files: map[string][]byte{"a.jsonl": testsession.Pi("a", 2, payload)}, jobs: 1},
}

// reference is the state after one uninterrupted run of a scenario.
type reference struct {
	sc      *scenario
	outputs map[string][]byte            // transcript rel → its bytes at its destination
	tree    map[string]string            // see state
	records map[string][]registry.Record // store dir rel → normalized records
	ops     []fault.Op                   // the file operations of the run
}

func newReference(t *testing.T, sc *scenario) *reference {
	t.Helper()
	root := t.TempDir()
	sc.build(t, root)
	in := &fault.Injector{}
	uninstall := in.Install()
	sum := sc.run(t, root)
	uninstall()
	require.Equal(t, 0, sum.Failed, "%+v", sum.Results)
	ref := &reference{sc: sc, outputs: map[string][]byte{}, ops: in.Ops()}
	for rel := range sc.files {
		ref.outputs[rel] = unroot(root, readFile(t, filepath.Join(root, sc.dest(rel))))
	}
	ref.tree, ref.records = state(t, root)
	require.NotEmpty(t, ref.records)
	return ref
}

// state describes a tree as an uninterrupted run leaves it: every entry
// but registries and torn registry tails with its kind, mode and content
// hash (see snapshot), and the normalized records of each registry.
func state(t *testing.T, root string) (map[string]string, map[string][]registry.Record) {
	t.Helper()
	tree := map[string]string{}
	records := map[string][]registry.Record{}
	for path, desc := range snapshot(t, root) {
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		if store, ok := registryOf(rel); ok {
			if _, done := records[store]; !done {
				records[store] = normalized(t, filepath.Join(root, store), root)
			}
		} else if !tornAside(rel) {
			tree[rel] = desc
		}
	}
	return tree, records
}

// registryOf returns the store (relative as rel is) whose registry the
// file rel is part of: the single-file registry of earlier versions, or a
// segment.
func registryOf(rel string) (store string, ok bool) {
	name, dir := filepath.Base(rel), filepath.Dir(rel)
	switch {
	case name == storepkg.RegistryFile:
		return dir, true
	case filepath.Base(dir) == storepkg.SegmentsDir && strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, "."):
		return filepath.Dir(dir), true
	}
	return "", false
}

// tornAside reports whether rel is a file that a torn registry tail was
// set aside in.
func tornAside(rel string) bool {
	i := strings.LastIndex(rel, ".torn-")
	if i < 0 {
		return false
	}
	_, ok := registryOf(rel[:i])
	return ok
}

// checkInterrupted checks a tree left by a run that failed or was killed:
// each transcript is its original or completely migrated, and then every
// reference in it resolves and the registry has its records; artifacts
// are complete; registries parse. crashed allows what only a crash leaves:
// temporary files, a torn registry tail and the files it is set aside in.
func (ref *reference) checkInterrupted(t *testing.T, root string, crashed bool) {
	t.Helper()
	sc := ref.sc
	allowed := map[string]bool{}
	migrated := map[string]bool{}
	for rel, orig := range sc.files {
		src, dest := filepath.Join("src", rel), sc.dest(rel)
		allowed[src] = true
		got, err := os.ReadFile(filepath.Join(root, dest))
		if sc.out {
			assert.Equal(t, orig, readFile(t, filepath.Join(root, src)), "%s: --out changed the source", rel)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			allowed[dest] = true
		}
		require.NoError(t, err)
		if !bytes.Equal(got, orig) || sc.out {
			if !assert.Equal(t, ref.outputs[rel], unroot(root, got), "%s is neither its original nor completely migrated", dest) {
				continue
			}
			assert.Equal(t, orig, rehydrate(t, filepath.Join(root, dest), ""), "%s: a reference does not resolve", dest)
			migrated[dest] = true
		}
		if sc.bak {
			bak := src + ".bak"
			allowed[bak] = true
			if data, err := os.ReadFile(filepath.Join(root, bak)); err == nil {
				assert.Equal(t, orig, data, "%s is not the original", bak)
			}
		}
	}
	var stores []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		name := d.Name()
		store, isRegistry := registryOf(rel)
		switch {
		case allowed[rel]:
		case safefile.IsTemp(name):
			assert.True(t, crashed, "temporary file left behind: %s", rel)
		case isRegistry:
			if !slices.Contains(stores, store) {
				stores = append(stores, store)
			}
			data := readFile(t, path)
			assert.True(t, crashed || len(data) == 0 || data[len(data)-1] == '\n', "%s has a torn tail", rel)
		case name == storepkg.LockFile && filepath.Base(filepath.Dir(rel)) == session.StoreDirName:
		case tornAside(rel):
			assert.True(t, crashed, "%s: torn registry tail without a crash", rel)
		case filepath.Base(filepath.Dir(filepath.Dir(rel))) == storepkg.ObjectsDir:
			assert.Equal(t, name, sha(t, path), "%s: an artifact is not complete", rel)
			assert.Equal(t, name[:2], filepath.Base(filepath.Dir(rel)), "%s: wrong shard", rel)
			assert.Contains(t, ref.tree, rel, "%s: an artifact no run would write", rel)
		default:
			assert.Failf(t, "unexpected file", "%s", rel)
		}
		return nil
	})
	require.NoError(t, err)

	// Every registry parses (normalized fails the test on a bad line) and
	// holds only records an uninterrupted run writes, among them those of
	// every migrated transcript.
	have := map[string]bool{}
	for _, dir := range stores {
		for _, r := range normalized(t, filepath.Join(root, dir), root) {
			key := fmt.Sprintf("%s %+v", dir, r)
			have[key] = true
			assert.Contains(t, ref.records[dir], r, "%s: a record no run would write", dir)
		}
	}
	for dir, recs := range ref.records {
		for _, r := range recs {
			if migrated[r.Source] {
				assert.True(t, have[fmt.Sprintf("%s %+v", dir, r)], "%s is migrated but %s lacks its record %+v", r.Source, dir, r)
			}
		}
	}
}

// checkRerun runs the scenario again without faults and checks that it
// ends as one uninterrupted run: every file done, the same tree, the same
// registry records, no temporary file left.
func (ref *reference) checkRerun(t *testing.T, root string) {
	t.Helper()
	sum := ref.sc.run(t, root)
	for _, r := range sum.Results {
		assert.NoError(t, r.Err, "rerun")
		assert.Contains(t, []migrate.Status{migrate.StatusMigrated, migrate.StatusUnchanged}, r.Status, r.Path)
	}
	for rel, want := range ref.outputs {
		assert.Equal(t, want, unroot(root, readFile(t, filepath.Join(root, ref.sc.dest(rel)))), "%s after the rerun", rel)
	}
	tree, records := state(t, root)
	assert.Equal(t, ref.tree, tree, "the tree differs from an uninterrupted run's")
	assert.Equal(t, ref.records, records, "the registry differs from an uninterrupted run's")
}

// ageTemps makes the temporary files in stores and under out look left by
// a crash long ago, so that the rerun may take them for leftovers. Those
// beside in-place transcripts are left young: the transcript's lock is
// what makes them leftovers.
func ageTemps(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-2 * safefile.StaleAge)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !safefile.IsTemp(d.Name()) {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.Contains(rel, session.StoreDirName) || strings.HasPrefix(rel, "out") {
			return os.Chtimes(path, old, old)
		}
		return nil
	})
	require.NoError(t, err)
}

// crashChild migrates a copy of the scenario's tree at root in a child
// process killed at the k-th file operation (none if k is 0) and reports
// whether it was killed.
func crashChild(t *testing.T, sc *scenario, root string, k int, tear bool) (killed bool, out []byte) {
	t.Helper()
	return runChild(t, childSpec{Scenario: sc.name, Root: root}, k, tear)
}

// crashChildAtCall runs sc in a child killed at the k-th call of its
// store backends.
func crashChildAtCall(t *testing.T, sc *scenario, root string, k int) (killed bool, out []byte) {
	t.Helper()
	return runChild(t, childSpec{Scenario: sc.name, Root: root, BackendAt: k}, 0, false)
}

// runChild runs a child with spec, killed at its k-th file operation when
// k is not 0 (tearing the write there when tear is set).
func runChild(t *testing.T, cs childSpec, k int, tear bool) (killed bool, out []byte) {
	t.Helper()
	spec, err := json.Marshal(cs)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	if k > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", crashAtEnv, k))
	}
	if tear {
		cmd.Env = append(cmd.Env, tearEnv+"=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	return killedBySIGKILL(t, err, stderr.String()), out
}

// killedBySIGKILL reports whether err, from a child's Wait, says that
// SIGKILL ended it; any other failure fails the test.
func killedBySIGKILL(t *testing.T, err error, stderr string) bool {
	t.Helper()
	if err == nil {
		return false
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child: %v\n%s", err, stderr)
	return true
}

// TestCrashSweep kills a migration at every file operation in turn (and,
// for writes to the registry, in the middle of the write) and checks what
// it leaves and that a rerun ends as one uninterrupted run. Operations
// that only check (probes) change nothing and are not crash points of
// their own. make soak sweeps more trees, and tears every write.
func TestCrashSweep(t *testing.T) {
	names := []string{"backup"}
	if os.Getenv(soakEnv) != "" {
		names = append(names, "inplace", "out", "soak-sweep-j1")
	}
	for _, name := range names {
		sc := scenarios[name]
		t.Run(name, func(t *testing.T) {
			ref := newReference(t, sc)
			points := 0
			for i, op := range ref.ops {
				if op.Kind == safefile.KindProbe {
					continue
				}
				tears := []bool{false}
				if op.Kind == safefile.KindWrite && (os.Getenv(soakEnv) != "" || !safefile.IsTemp(filepath.Base(op.Path))) {
					// A torn temporary file is never read: its
					// tearing is swept only under make soak.
					tears = append(tears, true)
				}
				for _, tear := range tears {
					points++
					t.Run(fmt.Sprintf("%d-%s-tear=%v", i+1, op.Kind, tear), func(t *testing.T) {
						t.Parallel()
						root := t.TempDir()
						sc.build(t, root)
						killed, _ := crashChild(t, sc, root, i+1, tear)
						require.True(t, killed, "the child finished without reaching %s", op)
						ref.checkInterrupted(t, root, true)
						ageTemps(t, root)
						ref.checkRerun(t, root)
					})
				}
			}
			t.Logf("%s: %d file operations, %d crash points", name, len(ref.ops), points)
			require.Greater(t, points, 20)
		})
	}
}

// TestCrashChildCompletes checks the sweep's premise: a child asked to die
// after the last operation migrates everything and exits normally.
func TestCrashChildCompletes(t *testing.T) {
	sc := scenarios["inplace"]
	ref := newReference(t, sc)
	root := t.TempDir()
	sc.build(t, root)
	killed, out := crashChild(t, sc, root, len(ref.ops)+1, false)
	require.False(t, killed)
	var sum migrate.Summary
	require.NoError(t, json.Unmarshal(out, &sum))
	assert.Equal(t, len(sc.files), sum.Files)
	assert.Equal(t, 0, sum.Failed)
	ref.checkRerun(t, root)
}

// TestSoakRandomKill (make soak) kills larger runs, with every worker
// busy, after random delays, until 500 kills have landed during a run,
// with the same checks.
func TestSoakRandomKill(t *testing.T) {
	if os.Getenv(soakEnv) == "" {
		t.Skip("set " + soakEnv + "=1 (make soak)")
	}
	const kills = 500
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TT_SOAK_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("TT_SOAK_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	names := []string{"soak-inplace", "soak-backup", "soak-out"}
	refs := map[string]*reference{}
	span := map[string]time.Duration{}
	for _, name := range names {
		refs[name] = newReference(t, scenarios[name])
		// How long a whole run takes, start to exit, at its fastest: the
		// kills land anywhere in it.
		for range 3 {
			root := t.TempDir()
			scenarios[name].build(t, root)
			start := time.Now()
			killed, _ := crashChild(t, scenarios[name], root, 0, false)
			require.False(t, killed)
			if d := time.Since(start); span[name] == 0 || d < span[name] {
				span[name] = d
			}
		}
		t.Logf("%s: a whole run takes %v", name, span[name])
	}
	var landed, missed atomic.Int32
	for round := 0; landed.Load() < kills && round < 10; round++ {
		n := int(kills - landed.Load())
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			for i := range n {
				name := names[rng.IntN(len(names))]
				delay := time.Duration(rng.Int64N(int64(span[name])))
				t.Run(fmt.Sprintf("%d-%s-%v", i, name, delay), func(t *testing.T) {
					t.Parallel()
					sc, ref := scenarios[name], refs[name]
					root := t.TempDir()
					sc.build(t, root)
					killed := killAfter(t, sc, root, delay)
					if killed {
						landed.Add(1)
					} else {
						missed.Add(1)
					}
					ref.checkInterrupted(t, root, killed)
					ageTemps(t, root)
					ref.checkRerun(t, root)
				})
			}
		})
		if t.Failed() {
			break
		}
	}
	t.Logf("%d runs killed, %d finished before their kill", landed.Load(), missed.Load())
	assert.GreaterOrEqual(t, int(landed.Load()), kills)
}

// killAfter migrates the tree at root in a child process and sends it
// SIGKILL after delay; it reports whether the kill ended the child.
func killAfter(t *testing.T, sc *scenario, root string, delay time.Duration) bool {
	t.Helper()
	spec, err := json.Marshal(childSpec{Scenario: sc.name, Root: root})
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	return killedBySIGKILL(t, err, stderr.String())
}
