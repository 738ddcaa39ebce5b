package local

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
)

// TestHoldSharedThroughWrapper: a Store over a wrapped Local (a fault
// injector's) still takes the lock: it finds the Locker through the
// wrapper (store.As).
func TestHoldSharedThroughWrapper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	l := New(dir)
	defer l.Release()
	mustPut(t, store.New(faulty.New(l, nil)), []byte("written through a wrapper"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := New(dir).LockExclusive(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a write through a wrapper did not hold the lock")
}

// TestLockExclusiveNoStore: a collector does not create a store.
func TestLockExclusiveNoStore(t *testing.T) {
	_, l := newStore(t)
	_, err := l.LockExclusive(context.Background(), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.NoDirExists(t, l.Dir())
}

// TestLockFile: the lock file is private whatever the umask, and a lock
// file that is a symbolic link is refused, never followed.
func TestLockFile(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s, l := newStore(t)
	mustPut(t, s, []byte("data"))
	require.NoError(t, l.Release())
	fi, err := os.Lstat(filepath.Join(l.Dir(), store.LockFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(filePerm), fi.Mode().Perm())

	linked, ll := newStore(t)
	require.NoError(t, os.MkdirAll(ll.Dir(), dirPerm))
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Symlink(target, filepath.Join(ll.Dir(), store.LockFile)))
	_, _, err = linked.Put(context.Background(), []byte("data"))
	require.ErrorIs(t, err, store.ErrLinked)
	_, err = ll.LockExclusive(context.Background(), nil)
	require.ErrorIs(t, err, store.ErrLinked)
	assert.NoFileExists(t, target)
}
