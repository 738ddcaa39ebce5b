package registry

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
)

// TestLockExcludesWriters: a Store that has written holds the store's lock
// shared until Release, which keeps a collector out; a collector holding
// it keeps writers waiting; writers do not hinder one another.
func TestLockExcludesWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	a, b := Open(dir), Open(dir)
	mustPut(t, a, []byte("written by a"))
	mustPut(t, b, []byte("written by b")) // writers share the lock

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	waited := 0
	_, err := a.LockExclusive(ctx, func() { waited++ })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, waited)

	require.NoError(t, a.Release())
	require.NoError(t, b.Release())
	lock, err := Open(dir).LockExclusive(context.Background(), func() { t.Error("waited for no writer") })
	require.NoError(t, err)

	// A writer waits for the collector, then goes on.
	done := make(chan error)
	go func() {
		_, _, err := b.Put([]byte("written while collecting"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a write went on while the lock was held exclusively: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, lock.Unlock())
	require.NoError(t, <-done)
	require.NoError(t, b.Release())
}

// TestAppendHoldsLock: a record is appended under the shared lock too.
func TestAppendHoldsLock(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{{Hash: Sum([]byte("x")).String(), CreatedAt: "now"}}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := Open(s.Dir()).LockExclusive(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, s.Release())
}

// TestLockExclusiveNoStore: a collector does not create a store.
func TestLockExclusiveNoStore(t *testing.T) {
	s := newStore(t)
	_, err := s.LockExclusive(context.Background(), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.NoDirExists(t, s.Dir())
}

// TestLockFile: the lock file is private whatever the umask, and a lock
// file that is a symbolic link is refused, never followed.
func TestLockFile(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := newStore(t)
	mustPut(t, s, []byte("data"))
	require.NoError(t, s.Release())
	fi, err := os.Lstat(filepath.Join(s.Dir(), LockFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(filePerm), fi.Mode().Perm())

	linked := newStore(t)
	require.NoError(t, os.MkdirAll(linked.Dir(), dirPerm))
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Symlink(target, filepath.Join(linked.Dir(), LockFile)))
	_, _, err = linked.Put([]byte("data"))
	require.ErrorIs(t, err, ErrLinked)
	_, err = linked.LockExclusive(context.Background(), nil)
	require.ErrorIs(t, err, ErrLinked)
	assert.NoFileExists(t, target)
}

// TestPutFreshens: an object found by Put has its modification time set
// to now, so that a collector counting a grace period counts from this
// use; one that vanished is written again.
func TestPutFreshens(t *testing.T) {
	s := newStore(t)
	data := []byte("deduplicated")
	d := mustPut(t, s, data)
	old := time.Now().Add(-3 * time.Hour)
	require.NoError(t, os.Chtimes(s.Path(d), old, old))

	// A later run: this Store has not checked the object yet.
	s = Open(s.Dir())
	_, created, err := s.Put(data)
	require.NoError(t, err)
	assert.False(t, created)
	fi, err := os.Stat(s.Path(d))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute)

	require.ErrorIs(t, freshen(filepath.Join(s.Dir(), "gone")), fs.ErrNotExist)
	require.NoError(t, os.Remove(s.Path(d)))
	s = Open(s.Dir())
	_, created, err = s.Put(data)
	require.NoError(t, err)
	assert.True(t, created)
	require.NoError(t, s.Verify(d))
}

// TestPutChecksOncePerRun: a Store reads an object it wrote or checked
// once; later Puts of the same digest, one per reference, read nothing
// (the bytes changed behind its back go unseen), until a read of the
// object finds it damaged. Another Store (a later run) reads it again.
func TestPutChecksOncePerRun(t *testing.T) {
	s := newStore(t)
	data := []byte("one artifact, many references")
	d := mustPut(t, s, data)
	require.NoError(t, os.WriteFile(s.Path(d), []byte("changed behind the store's back"), 0o600))

	_, created, err := s.Put(data)
	require.NoError(t, err)
	assert.False(t, created, "checked once: not read again")

	_, created, err = Open(s.Dir()).Put(data)
	require.NoError(t, err)
	assert.True(t, created, "a later run reads it, finds it damaged and writes it anew")
	require.NoError(t, s.Verify(d))

	require.NoError(t, os.WriteFile(s.Path(d), []byte("changed again"), 0o600))
	require.ErrorIs(t, s.Verify(d), ErrCorrupt)
	_, created, err = s.Put(data)
	require.NoError(t, err)
	assert.True(t, created, "a read that found it damaged makes Put look again")
}
