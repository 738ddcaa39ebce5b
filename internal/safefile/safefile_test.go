package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/fault"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var s []string
	for _, e := range entries {
		s = append(s, e.Name())
	}
	return s
}

// TestHookSeesEveryOperation: each step of an atomic write is reported,
// in order, with the path it acts on.
func TestHookSeesEveryOperation(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	in := &fault.Injector{}
	uninstall := in.Install()
	require.NoError(t, safefile.WriteFile(name, []byte("data"), 0o640))
	require.NoError(t, safefile.MkdirAll(filepath.Join(dir, "a", "b"), 0o700))
	require.NoError(t, safefile.Link(name, name+".bak"))
	uninstall()

	var got []string
	for _, op := range in.Ops() {
		rel, err := filepath.Rel(dir, op.Path)
		require.NoError(t, err)
		if strings.Contains(rel, ".tmp-") {
			rel = rel[:strings.Index(rel, ".tmp-")] + ".tmp-"
		}
		got = append(got, string(op.Kind)+" "+rel)
	}
	assert.Equal(t, []string{
		"create .f.tmp-", "chmod .f.tmp-", "write .f.tmp-", "fsync .f.tmp-", "rename f", "fsyncdir .",
		"mkdir a", "fsyncdir .", "mkdir a/b", "fsyncdir a",
		"link f.bak",
	}, got)
}

// TestFailedStepLeavesNothing: whichever step of WriteFile fails, the
// error is the injected one, the target is as it was and no temporary
// file is left.
func TestFailedStepLeavesNothing(t *testing.T) {
	for k := 1; ; k++ {
		dir := t.TempDir()
		name := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(name, []byte("old"), 0o600))
		in := &fault.Injector{At: k, Action: fault.Fail, Err: syscall.ENOSPC}
		uninstall := in.Install()
		err := safefile.WriteFile(name, []byte("new"), 0o640)
		uninstall()
		op, hit := in.Hit()
		if !hit {
			require.NoError(t, err)
			assert.Equal(t, 7, k, "six steps")
			return
		}
		data, rerr := os.ReadFile(name)
		require.NoError(t, rerr)
		if op.Kind == safefile.KindSyncDir {
			assert.Equal(t, "new", string(data), "the rename is made; only its durability failed")
		} else {
			assert.Equal(t, "old", string(data), "%v", op)
		}
		assert.ErrorIs(t, err, syscall.ENOSPC, "%v", op)
		assert.Contains(t, err.Error(), op.Path)
		assert.Equal(t, []string{"f"}, names(t, dir), "%v left a file", op)
	}
}

func TestModesWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	dir := t.TempDir()
	require.NoError(t, safefile.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	require.NoError(t, safefile.MkdirAll(filepath.Join(dir, "a", "b"), 0o750))
	for path, want := range map[string]fs.FileMode{"f": 0o644, "a": fs.ModeDir | 0o750, "a/b": fs.ModeDir | 0o750} {
		fi, err := os.Stat(filepath.Join(dir, path))
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode(), path)
	}
	err := safefile.Mkdir(filepath.Join(dir, "a"), 0o700)
	assert.ErrorIs(t, err, fs.ErrExist)
	fi, err := os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	assert.Equal(t, fs.ModeDir|0o750, fi.Mode(), "an existing directory keeps its mode")
}

func TestMkdirAllRefusesAFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o600))
	assert.ErrorIs(t, safefile.MkdirAll(filepath.Join(dir, "f"), 0o700), syscall.ENOTDIR)
	assert.Error(t, safefile.MkdirAll(filepath.Join(dir, "f", "g"), 0o700))
}

func TestWritable(t *testing.T) {
	dir := t.TempDir()
	assert.NoError(t, safefile.Writable(dir))
	assert.NoError(t, safefile.Writable(filepath.Join(dir, "missing", "deeper")), "checked where it would be created")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o600))
	assert.NoError(t, safefile.Writable(filepath.Join(dir, "f")))

	safefile.Hook = func(op safefile.Op) error {
		if op.Kind == safefile.KindProbe {
			return syscall.EROFS
		}
		return nil
	}
	err := safefile.Writable(dir)
	safefile.Hook = nil
	assert.ErrorIs(t, err, syscall.EROFS)
	assert.EqualError(t, err, dir+" is not writable: read-only file system")

	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere permission bits are concerned")
	}
	require.NoError(t, os.Chmod(dir, 0o555))
	defer os.Chmod(dir, 0o755)
	err = safefile.Writable(filepath.Join(dir, "new"))
	assert.ErrorIs(t, err, fs.ErrPermission)
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".f.jsonl.tmp-123":     true,
		".f.tmp-1.tmp-22":      true,
		".a.tmp-":              false,
		".f.jsonl.tmp-12x":     false,
		"f.jsonl.tmp-123":      false,
		".tmp-123":             false,
		".registry.jsonl":      false,
		".x.tmp-123/../escape": false,
		"." + strings.Repeat("x", 100) + ".tmp-9": true,
	} {
		assert.Equal(t, want, safefile.IsTemp(name), name)
	}
}

// tempOf returns the base name of a new temporary file of name, as
// Create makes it, and removes the file.
func tempOf(t *testing.T, name string) string {
	t.Helper()
	f, err := safefile.Create(name, 0o600)
	require.NoError(t, err)
	base := filepath.Base(f.OS().Name())
	f.Abort()
	assert.LessOrEqual(t, len(base), 1+100+len(".tmp-")+20, "too long a name")
	return base
}

// tempDir returns a new directory and a function that makes an empty
// file of it, last changed age ago.
func tempDir(t *testing.T) (string, func(name string, age time.Duration) string) {
	dir := t.TempDir()
	return dir, func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		when := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(p, when, when))
		return p
	}
}

// TestRemoveTemps: an owner removes every temporary file of its name, and
// only those; others remove only old ones.
func TestRemoveTemps(t *testing.T) {
	dir, write := tempDir(t)
	long := strings.Repeat("l", 120)
	files := map[string]string{
		"young":        write(".s.jsonl.tmp-1", 0),
		"old":          write(".s.jsonl.tmp-2", 2*safefile.StaleAge),
		"other":        write(".t.jsonl.tmp-3", 2*safefile.StaleAge),
		"prefix":       write(".s.jsonl.bak.tmp-4", 0),
		"longer name":  write(".s.jsonl.tmp-5.jsonl.tmp-7", 0),
		"not temp":     write(".s.jsonl.tmp-x", 2*safefile.StaleAge),
		"long young":   write(tempOf(t, filepath.Join(dir, long)), 0),
		"long old":     write(tempOf(t, filepath.Join(dir, long)), 2*safefile.StaleAge),
		"long other":   write(tempOf(t, filepath.Join(dir, long+"x")), 0),
		"the file":     write("s.jsonl", 2*safefile.StaleAge),
		"its longname": write(long, 0),
	}
	exists := func() map[string]bool {
		m := map[string]bool{}
		for k, p := range files {
			_, err := os.Lstat(p)
			m[k] = !errors.Is(err, fs.ErrNotExist)
		}
		return m
	}

	n, err := safefile.RemoveTemps(filepath.Join(dir, "s.jsonl"), false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, exists()["old"])
	assert.True(t, exists()["young"], "a live writer's file was removed")

	n, err = safefile.RemoveTemps(filepath.Join(dir, "s.jsonl"), true)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, exists()["young"], "the owner left its own temporary file")

	n, err = safefile.RemoveTemps(filepath.Join(dir, long), true)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a name cut short: its owner left its temporary files")

	assert.Equal(t, map[string]bool{
		"young": false, "old": false, "other": true, "prefix": true, "longer name": true, "not temp": true,
		"long young": false, "long old": false, "long other": true, "the file": true, "its longname": true,
	}, exists())

	n, err = safefile.RemoveStale(dir)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, exists()["other"])
	assert.True(t, exists()["not temp"])
}

// TestSweeper: a Sweeper removes what RemoveTemps would, from one listing
// of the directory: a temporary file made after that listing is left for
// its writer.
func TestSweeper(t *testing.T) {
	dir, write := tempDir(t)
	long := strings.Repeat("l", 120)
	files := map[string]string{
		"young":       write(".s.jsonl.tmp-1", 0),
		"old":         write(".s.jsonl.tmp-2", 2*safefile.StaleAge),
		"other":       write(".t.jsonl.tmp-3", 2*safefile.StaleAge),
		"prefix":      write(".s.jsonl.bak.tmp-4", 0),
		"longer name": write(".s.jsonl.tmp-5.jsonl.tmp-7", 0),
		"long young":  write(tempOf(t, filepath.Join(dir, long)), 0),
		"long old":    write(tempOf(t, filepath.Join(dir, long)), 2*safefile.StaleAge),
		"long other":  write(tempOf(t, filepath.Join(dir, long+"x")), 0),
	}
	var sw safefile.Sweeper
	n, err := sw.Remove(filepath.Join(dir, "s.jsonl"), true)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the owner's temporary files, of any age")
	files["new"] = write(".t.jsonl.tmp-9", 2*safefile.StaleAge)
	n, err = sw.Remove(filepath.Join(dir, "t.jsonl"), true)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "one listing: a file made since is not seen")
	n, err = sw.Remove(filepath.Join(dir, long), true)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a name cut short: its owner left its temporary files")
	n, err = sw.Remove(filepath.Join(dir, "s.jsonl.bak"), false)
	require.NoError(t, err)
	assert.Equal(t, 0, n, "not the owner: a young one stays")

	exists := map[string]bool{}
	for k, p := range files {
		_, err := os.Lstat(p)
		exists[k] = !errors.Is(err, fs.ErrNotExist)
	}
	assert.Equal(t, map[string]bool{"young": false, "old": false, "other": false, "prefix": true, "longer name": true,
		"long young": false, "long old": false, "long other": true, "new": true}, exists)
	_, err = sw.Remove(filepath.Join(dir, "missing", "x.jsonl"), true)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
