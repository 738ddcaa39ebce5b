package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// runWith migrates the scenario's tree at root with in as the hook of
// package safefile.
func runWith(t *testing.T, sc *scenario, root string, in *fault.Injector) migrate.Summary {
	t.Helper()
	uninstall := in.Install()
	defer uninstall()
	return sc.run(t, root)
}

// TestFaultEachOperation fails each file operation of a run in turn with
// ENOSPC, EIO or EACCES (in turn; under make soak each of them at every
// operation, also of the --out and plain in-place runs). The run must
// report the failure with the path and the error, leave the transcript as
// it was (or, when only the fsync after its rename failed, completely
// migrated), leave no temporary file and no partial file under a final
// name, go on with the other transcripts, and a rerun must end as one
// uninterrupted run. Probes change nothing and have their own test
// (TestFaultRefusesUnwritable).
func TestFaultEachOperation(t *testing.T) {
	errnos := []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EACCES}
	names := []string{"backup"}
	if os.Getenv(soakEnv) != "" {
		names = append(names, "out", "inplace")
	}
	total := 0
	for _, name := range names {
		sc := scenarios[name]
		ref := newReference(t, sc)
		if os.Getenv(soakEnv) == "" {
			t.Run(name+"/rotating", func(t *testing.T) {
				total += faultEach(t, sc, ref, func(k int) syscall.Errno { return errnos[k%len(errnos)] })
			})
			continue
		}
		for _, errno := range errnos {
			t.Run(fmt.Sprintf("%s/%s", name, errno), func(t *testing.T) {
				total += faultEach(t, sc, ref, func(int) syscall.Errno { return errno })
			})
		}
	}
	t.Logf("%d faults injected", total)
}

// faultEach fails the k-th operation with errno(k), for k = 1, 2, ...
// until a run makes fewer than k, and returns how many it failed.
func faultEach(t *testing.T, sc *scenario, ref *reference, errno func(k int) syscall.Errno) int {
	k, n := 1, 0
	for ; ; k++ {
		if k <= len(ref.ops) && ref.ops[k-1].Kind == safefile.KindProbe {
			continue
		}
		n++
		root := filepath.Join(t.TempDir(), fmt.Sprint(k))
		sc.build(t, root)
		in := &fault.Injector{At: k, Action: fault.Fail, Err: errno(k)}
		sum := runWith(t, sc, root, in)
		op, hit := in.Hit()
		if !hit {
			require.Equal(t, 0, sum.Failed, "%+v", sum.Results)
			break
		}
		checkFailure(t, sc, root, sum, in.Ops(), op, errno(k))
		ref.checkInterrupted(t, root, false)
		ref.checkRerun(t, root)
		if t.Failed() {
			t.Fatalf("at %v", op)
		}
	}
	assert.Equal(t, len(ref.ops)+1, k, "a run makes as many operations as the reference run")
	return n - 1
}

// TestFaultUnchangedCopyToOut: an unchanged transcript copied to --out
// whose copy fails is reported failed, not unchanged.
func TestFaultUnchangedCopyToOut(t *testing.T) {
	root := t.TempDir()
	src, out := filepath.Join(root, "src", "s.jsonl"), filepath.Join(root, "out")
	writeFile(t, src, testsession.Pi("s", 1, 100), 0o644)
	safefile.Hook = func(op safefile.Op) error {
		if op.Kind == safefile.KindRename {
			return &fs.PathError{Op: "rename", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	}
	defer func() { safefile.Hook = nil }()

	sum := migrateRun(t, migrate.Options{Out: out}, src)

	r := result(t, sum, src)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, syscall.ENOSPC)
	assert.Equal(t, 1, sum.Failed)
	assert.NoFileExists(t, filepath.Join(out, "s.jsonl"))
}

// checkFailure checks the results of a run whose operation op, among ops,
// failed with errno: the transcript being written failed, naming the path
// and the error, and is as it was unless the failure came after its
// rename; every other one is done.
func checkFailure(t *testing.T, sc *scenario, root string, sum migrate.Summary, ops []fault.Op, op fault.Op, errno syscall.Errno) {
	t.Helper()
	switch op.Kind {
	case safefile.KindLink:
		// No hard link: the backup is a copy.
		assert.Equal(t, 0, sum.Failed, "%v: %+v", op, sum.Results)
		return
	case safefile.KindSyncFS:
		// The store fsyncs each file or directory instead.
		assert.Equal(t, 0, sum.Failed, "%v: %+v", op, sum.Results)
		require.Greater(t, len(ops), op.N, "%v: nothing after it", op)
		assert.Contains(t, []safefile.Kind{safefile.KindSync, safefile.KindSyncDir}, ops[op.N].Kind, "%v: not followed by fsyncs", op)
		return
	}
	require.Equal(t, 1, sum.Failed, "%v: %+v", op, sum.Results)
	for _, r := range sum.Results {
		if r.Status != migrate.StatusFailed {
			assert.Contains(t, []migrate.Status{migrate.StatusMigrated, migrate.StatusUnchanged}, r.Status, r.Path)
			continue
		}
		assert.ErrorIs(t, r.Err, errno, "%v", op)
		assert.Contains(t, r.Message, op.Path, "%v: the message does not name the path", op)
		assert.Contains(t, r.Message, errno.Error(), "%v", op)
		assert.Equal(t, r.BytesBefore, r.BytesAfter)
		rel, err := filepath.Rel(filepath.Join(root, "src"), r.Path)
		require.NoError(t, err)
		dest := filepath.Join(root, sc.dest(rel))
		renamed := false
		for _, o := range ops[:op.N-1] {
			renamed = renamed || (o.Kind == safefile.KindRename && o.Path == dest)
		}
		switch {
		case renamed:
			// Only the fsync of its directory failed: it is in place,
			// complete (checked by checkInterrupted), yet not surely
			// durable, which the failure says.
			assert.Equal(t, safefile.KindSyncDir, op.Kind)
		case sc.out:
			assert.NoFileExists(t, dest)
		default:
			assert.Equal(t, sc.files[rel], readFile(t, dest), "%v: the failed transcript was changed", op)
		}
	}
}

// TestFaultRefusesUnwritable: when the transcript's directory or its store
// cannot be written (here said by the probe, as permissions cannot say it
// to root), migrate refuses the transcript before it writes anything, and
// goes on with the others.
func TestFaultRefusesUnwritable(t *testing.T) {
	for _, where := range []string{"", session.StoreDirName, filepath.Join(session.StoreDirName, storepkg.ObjectsDir), filepath.Join(session.StoreDirName, storepkg.SegmentsDir)} {
		t.Run("dir/"+where, func(t *testing.T) {
			root := t.TempDir()
			ro, rw := filepath.Join(root, "ro"), filepath.Join(root, "rw")
			writeFile(t, filepath.Join(ro, "s.jsonl"), testsession.Pi("s", 2, payload), 0o644)
			writeFile(t, filepath.Join(rw, "s.jsonl"), testsession.Pi("t", 2, payload), 0o644)
			if where != "" {
				// A store that exists, with what a run before left.
				require.Equal(t, 1, migrateRun(t, migrate.Options{}, filepath.Join(ro, "s.jsonl")).Migrated)
				writeFile(t, filepath.Join(ro, "s.jsonl"), testsession.Pi("s", 3, payload), 0o644)
			}
			before := snapshot(t, ro)
			denied := filepath.Join(ro, where)
			safefile.Hook = func(op safefile.Op) error {
				if op.Kind == safefile.KindProbe && op.Path == denied {
					return &fs.PathError{Op: "access", Path: op.Path, Err: syscall.EACCES}
				}
				return nil
			}
			defer func() { safefile.Hook = nil }()

			sum := migrateRun(t, migrate.Options{Jobs: 1}, ro, rw)

			r := result(t, sum, filepath.Join(ro, "s.jsonl"))
			assert.Equal(t, migrate.StatusFailed, r.Status)
			assert.ErrorIs(t, r.Err, fs.ErrPermission)
			assert.Contains(t, r.Message, denied+" is not writable")
			assert.Contains(t, r.Message, "nothing was written")
			assert.Equal(t, before, snapshot(t, ro), "something was written")
			assert.Equal(t, migrate.StatusMigrated, result(t, sum, filepath.Join(rw, "s.jsonl")).Status)
		})
	}
}

// TestUnwritableDirectories uses real permissions: a transcript directory
// or a store directory of mode 0555. Root ignores permission bits, so as
// root the migration runs in a child process as the user nobody.
func TestUnwritableDirectories(t *testing.T) {
	for _, where := range []string{"transcripts", "store"} {
		t.Run(where, func(t *testing.T) {
			root := t.TempDir()
			dir, store := filepath.Join(root, "src"), filepath.Join(root, "store")
			path := filepath.Join(dir, "s.jsonl")
			orig := testsession.Pi("s", 2, payload)
			writeFile(t, path, orig, 0o644)
			require.NoError(t, os.Mkdir(store, 0o700))
			ro := dir
			if where == "store" {
				ro = store
			}
			require.NoError(t, os.Chmod(ro, 0o555))
			t.Cleanup(func() { _ = os.Chmod(ro, 0o755) })
			before := snapshot(t, root)

			r := runUnprivileged(t, root, migrate.Options{Store: store}, path)

			assert.Equal(t, migrate.StatusFailed, r.Status)
			assert.Contains(t, r.Message, ro+" is not writable: permission denied")
			assert.Equal(t, before, snapshot(t, root), "something was written")
			assert.Equal(t, orig, readFile(t, path))
		})
	}
}

// unprivilegedEnv makes the test binary migrate the JSON
// unprivilegedSpec it holds and print the result.
const unprivilegedEnv = "TT_UNPRIVILEGED"

type unprivilegedSpec struct {
	Options migrate.Options
	Path    string
}

// runUnprivileged migrates path: in this process, or as root in a child
// process running as nobody, on a copy of the test binary that nobody
// can run, with root's tree handed to nobody.
func runUnprivileged(t *testing.T, root string, opts migrate.Options, path string) migrate.FileResult {
	t.Helper()
	if os.Geteuid() != 0 {
		return result(t, migrateRun(t, opts, path), path)
	}
	const nobody = 65534
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "migrate.test")
	require.NoError(t, os.WriteFile(bin, readFile(t, exe), 0o755))
	for d := filepath.Dir(bin); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755)) // t.TempDir's parent is 0700
	}
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	err = filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	require.NoError(t, err)
	spec, err := json.Marshal(unprivilegedSpec{Options: opts, Path: path})
	require.NoError(t, err)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), unprivilegedEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		require.NoError(t, err, "%s", ee.Stderr)
	}
	if err != nil {
		t.Skipf("cannot start a process as nobody: %v", err)
	}
	var r migrate.FileResult
	require.NoError(t, json.Unmarshal(out, &r))
	return r
}

// TestModesUnderUmask: artifacts and the registry are 0600 and store
// directories 0700 whatever the umask, and transcripts keep their modes.
// It sets the process umask, so it does not run in parallel.
func TestModesUnderUmask(t *testing.T) {
	for _, umask := range []int{0, 0o022, 0o277} {
		t.Run(fmt.Sprintf("%04o", umask), func(t *testing.T) {
			root := t.TempDir()
			src, out := filepath.Join(root, "src"), filepath.Join(root, "out")
			modes := map[string]fs.FileMode{"a.jsonl": 0o666, "b.jsonl": 0o640, "sub/c.jsonl": 0o600, "d.jsonl": 0o604}
			for rel, mode := range modes {
				if rel != "d.jsonl" {
					writeFile(t, filepath.Join(src, rel), testsession.Pi(rel, 2, payload), mode)
				}
			}
			storeDir := filepath.Join(src, session.StoreDirName)

			old := syscall.Umask(umask)
			sum := migrateRun(t, migrate.Options{Out: out}, src)
			assert.Equal(t, 3, sum.Migrated, "%+v", sum.Results)
			sum = migrateRun(t, migrate.Options{Backup: true}, src)
			assert.Equal(t, 3, sum.Migrated, "%+v", sum.Results)
			// A torn registry tail, set aside by a compaction.
			segs, err := filepath.Glob(filepath.Join(storeDir, storepkg.SegmentsDir, "*.jsonl"))
			if err == nil && len(segs) > 0 {
				var f *os.File
				if f, err = os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0); err == nil {
					_, err = f.WriteString(`{"torn`)
					_ = f.Close()
				}
			}
			if err == nil {
				_, err = registry.New(local.New(storeDir)).Compact(context.Background(), func(registry.Record) bool { return true })
			}
			if err == nil {
				writeFile(t, filepath.Join(src, "d.jsonl"), testsession.Pi("d", 1, 2*payload), modes["d.jsonl"])
				sum = migrateRun(t, migrate.Options{}, filepath.Join(src, "d.jsonl"))
				assert.Equal(t, 1, sum.Migrated, "%+v", sum.Results)
			}
			syscall.Umask(old)
			require.NoError(t, err)
			require.NotEmpty(t, segs)

			torn, err := filepath.Glob(segs[0] + ".torn-*")
			require.NoError(t, err)
			assert.Len(t, torn, 1)
			var storeFiles, storeDirs int
			for _, top := range []string{src, out} {
				err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
					if err != nil {
						return err
					}
					rel, _ := filepath.Rel(top, path)
					fi, err := d.Info()
					if err != nil {
						return err
					}
					inStore := strings.Contains(rel, session.StoreDirName)
					switch {
					case d.IsDir() && inStore:
						storeDirs++
						assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "%s", path)
					case inStore:
						storeFiles++
						assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "%s", path)
					case !d.IsDir():
						want, ok := modes[strings.TrimSuffix(rel, ".bak")]
						require.True(t, ok, "unexpected %s", path)
						assert.Equal(t, want, fi.Mode().Perm(), "%s keeps its mode", path)
					}
					return nil
				})
				require.NoError(t, err)
			}
			assert.GreaterOrEqual(t, storeDirs, 4*3, "store, objects and a shard, in four stores")
			assert.GreaterOrEqual(t, storeFiles, 4*2, "a registry and an artifact, in four stores")
		})
	}
}

// TestRemovesTempFilesOfKilledRun: temporary files that a killed run left
// beside a transcript are removed by the next run, which holds the
// transcript's lock; those in the store only once they are old, since a
// live writer in another process may own a young one.
func TestRemovesTempFilesOfKilledRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s", 2, payload)
	writeFile(t, path, orig, 0o644)
	require.Equal(t, 1, migrateRun(t, migrate.Options{}, path).Migrated)
	writeFile(t, path, orig, 0o644) // as if rehydrated: it migrates again
	store := filepath.Join(dir, session.StoreDirName)
	names := objects(t, store)
	require.Len(t, names, 2)
	shard := filepath.Dir(filepath.Join(store, names[0]))

	leftovers := map[string]bool{ // path → removed by the run
		filepath.Join(dir, ".s.jsonl.tmp-123"):                          true,
		filepath.Join(dir, ".s.jsonl.bak.tmp-456"):                      true,
		filepath.Join(shard, "."+filepath.Base(names[0])+".tmp-1"):      true,
		filepath.Join(store, ".registry.jsonl.torn-1.tmp-2"):            true,
		filepath.Join(store, storepkg.SegmentsDir, ".x.jsonl.tmp-7"):    true,
		filepath.Join(shard, ".young.tmp-3"):                            false,
		filepath.Join(dir, ".other.jsonl.tmp-4"):                        false, // another transcript's
		filepath.Join(dir, ".s.jsonl.tmp-x"):                            false, // not a temporary file name
		filepath.Join(dir, "s.jsonl.tmp-5"):                             false,
		filepath.Join(store, storepkg.ObjectsDir, "zz", ".stray.tmp-6"): false, // not a shard
	}
	old := time.Now().Add(-2 * safefile.StaleAge)
	for p := range leftovers {
		writeFile(t, p, []byte("partial"), 0o600)
		if strings.Contains(p, store) && !strings.Contains(p, "young") {
			require.NoError(t, os.Chtimes(p, old, old))
		}
	}

	sum := migrateRun(t, migrate.Options{}, path)

	require.Equal(t, 1, sum.Migrated, "%+v", sum.Results)
	for p, removed := range leftovers {
		if removed {
			assert.NoFileExists(t, p)
		} else {
			assert.FileExists(t, p)
		}
	}
}

// TestBackupLeftByKilledRun: a run killed after it made the backup and
// before its rename leaves path.bak; the next run keeps it and goes on,
// while a backup that differs from the transcript still stops it.
func TestBackupLeftByKilledRun(t *testing.T) {
	for _, kind := range []string{"link", "copy", "different"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			orig := testsession.Pi("s", 2, payload)
			writeFile(t, path, orig, 0o644)
			switch kind {
			case "link":
				require.NoError(t, os.Link(path, path+".bak"))
			case "copy":
				writeFile(t, path+".bak", orig, 0o644)
			case "different":
				writeFile(t, path+".bak", append([]byte("x"), orig[1:]...), 0o644)
			}

			r := result(t, migrateRun(t, migrate.Options{Backup: true}, path), path)

			if kind == "different" {
				assert.Equal(t, migrate.StatusFailed, r.Status)
				assert.Contains(t, r.Message, "already exists")
				assert.Equal(t, orig, readFile(t, path))
				return
			}
			assert.Equal(t, migrate.StatusMigrated, r.Status, r.Message)
			assert.Equal(t, orig, readFile(t, path+".bak"))
			assert.Equal(t, orig, rehydrate(t, path, ""))
		})
	}
}

// unprivileged is the child of runUnprivileged.
func unprivileged(spec string) int {
	var us unprivilegedSpec
	if err := json.Unmarshal([]byte(spec), &us); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	inputs, err := session.Collect([]string{us.Path})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	us.Options.OpenStore = local.Open // not passed on: a function
	sum := migrate.Run(context.Background(), inputs, us.Options)
	if len(sum.Results) != 1 || json.NewEncoder(os.Stdout).Encode(sum.Results[0]) != nil {
		return 2
	}
	return 0
}

// TestFaultRehydrateInPlace fails each file operation of an in-place
// rehydration in turn: the transcript whose operation failed stays the
// migrated one, the others are restored, no temporary file is left, and a
// rerun restores every original.
func TestFaultRehydrateInPlace(t *testing.T) {
	sc := scenarios["inplace"]
	errnos := []syscall.Errno{syscall.ENOSPC, syscall.EIO, syscall.EACCES}
	rehydrateAll := func(root string) migrate.Summary {
		inputs, err := session.Collect([]string{filepath.Join(root, "src")})
		require.NoError(t, err)
		return migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, InPlace: true, Jobs: 1})
	}
	k := 1
	for ; ; k++ {
		root := filepath.Join(t.TempDir(), fmt.Sprint(k))
		sc.build(t, root)
		require.Zero(t, sc.run(t, root).Failed)
		migrated := map[string][]byte{}
		for rel := range sc.files {
			migrated[rel] = readFile(t, filepath.Join(root, "src", rel))
		}
		in := &fault.Injector{At: k, Action: fault.Fail, Err: errnos[k%len(errnos)]}
		uninstall := in.Install()
		sum := rehydrateAll(root)
		uninstall()
		op, hit := in.Hit()
		if !hit {
			require.Zero(t, sum.Failed, "%+v", sum.Results)
			break
		}
		require.Equal(t, 1, sum.Failed, "%v", op)
		for _, r := range sum.Results {
			rel, err := filepath.Rel(filepath.Join(root, "src"), r.Path)
			require.NoError(t, err)
			got := readFile(t, r.Path)
			switch {
			case r.Status == migrate.StatusRestored:
				assert.Equal(t, sc.files[rel], got, rel)
			case op.Kind == safefile.KindSyncDir:
				assert.Equal(t, sc.files[rel], got, "%v: renamed before the fsync that failed", op)
				assert.Contains(t, r.Message, op.Path)
			default:
				assert.Equal(t, migrated[rel], got, "%v: the failed transcript was changed", op)
				assert.Contains(t, r.Message, op.Path)
				assert.ErrorIs(t, r.Err, errnos[k%len(errnos)])
			}
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil {
				assert.False(t, safefile.IsTemp(d.Name()), "%v left %s", op, path)
			}
			return err
		})
		require.NoError(t, err)

		sum = rehydrateAll(root)
		require.Zero(t, sum.Failed, "%+v", sum.Results)
		for rel, orig := range sc.files {
			assert.Equal(t, orig, readFile(t, filepath.Join(root, "src", rel)), "%s after the rerun", rel)
		}
		if t.Failed() {
			t.Fatalf("at %v", op)
		}
	}
	assert.Greater(t, k, 4*5, "at least five operations per transcript")
}
