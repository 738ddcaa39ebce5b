package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

// RunLocker runs the suite of store.Locker, what its docs promise: newStore
// returns, for each test, a function that opens a new Backend of one new
// store each time it is called, as another process would; each must be a
// store.Locker.
func RunLocker(t *testing.T, newStore func(t *testing.T) func() store.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func() store.Locker)
	}{
		{"WritersExcludeCollector", testWritersExcludeCollector},
		{"CollectorExcludesWriters", testCollectorExcludesWriters},
		{"CollectorsExcludeEachOther", testCollectorsExcludeEachOther},
		{"LocksAreNoFiles", testLocksAreNoFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := newStore(t)
			tt.fn(t, func() store.Locker {
				l, ok := store.As[store.Locker](open())
				require.True(t, ok, "the backend is no store.Locker")
				return l
			})
		})
	}
}

// blocked is how long a test waits to see that a lock keeps another out.
const blocked = 300 * time.Millisecond

// putThrough stores data through a Store over l: the Store takes the lock
// shared before it looks for the object.
func putThrough(t *testing.T, l store.Locker, data string) {
	t.Helper()
	_, _, err := store.New(l.(store.Backend)).Put(ctx, []byte(data))
	require.NoError(t, err)
}

// tryExclusive takes the lock exclusively, giving up after blocked; it
// returns the lock or the error, and how often it said it waited.
func tryExclusive(l store.Locker) (store.Lock, int, error) {
	c, cancel := context.WithTimeout(ctx, blocked)
	defer cancel()
	waited := 0
	lock, err := l.LockExclusive(c, func() { waited++ })
	return lock, waited, err
}

// testWritersExcludeCollector: a writer holds the lock shared from its
// first write until Release, which keeps a collector out (it says once
// that it waits); writers do not hinder one another.
func testWritersExcludeCollector(t *testing.T, open func() store.Locker) {
	a, b := open(), open()
	putThrough(t, a, "written by a")
	putThrough(t, b, "written by b")
	require.NoError(t, a.HoldShared(ctx), "held: at once")

	_, waited, err := tryExclusive(open())
	require.ErrorIs(t, err, context.DeadlineExceeded, "a collector went on while writers held the lock")
	assert.Equal(t, 1, waited)

	require.NoError(t, a.Release())
	_, _, err = tryExclusive(open())
	require.ErrorIs(t, err, context.DeadlineExceeded, "a collector went on while a writer held the lock")
	require.NoError(t, b.Release())
	lock, err := open().LockExclusive(ctx, func() { t.Error("waited for no writer") })
	require.NoError(t, err)
	assert.NoError(t, lock.Held())
	require.NoError(t, lock.Close())
	require.NoError(t, a.Release(), "a second Release is none")
}

// testCollectorExcludesWriters: a writer waits while a collector holds
// the lock, and goes on once it lets go; one whose context ends first
// gets its error.
func testCollectorExcludesWriters(t *testing.T, open func() store.Locker) {
	w := open()
	putThrough(t, w, "an earlier write")
	require.NoError(t, w.Release())

	lock, err := open().LockExclusive(ctx, nil)
	require.NoError(t, err)
	c, cancel := context.WithTimeout(ctx, blocked)
	defer cancel()
	require.ErrorIs(t, w.HoldShared(c), context.DeadlineExceeded)

	var done atomic.Bool
	result := make(chan error, 1)
	go func() {
		_, _, err := store.New(w.(store.Backend)).Put(ctx, []byte("written while collecting"))
		done.Store(true)
		result <- err
	}()
	time.Sleep(blocked)
	require.False(t, done.Load(), "a write went on while the lock was held exclusively")
	require.NoError(t, lock.Held())
	require.NoError(t, lock.Close())
	require.NoError(t, <-result)
	require.NoError(t, w.Release())
}

// testCollectorsExcludeEachOther: one collector at a time.
func testCollectorsExcludeEachOther(t *testing.T, open func() store.Locker) {
	w := open()
	putThrough(t, w, "so that the store exists")
	require.NoError(t, w.Release())
	first, err := open().LockExclusive(ctx, nil)
	require.NoError(t, err)
	_, waited, err := tryExclusive(open())
	require.ErrorIs(t, err, context.DeadlineExceeded, "two collectors at once")
	assert.Equal(t, 1, waited)
	require.NoError(t, first.Close())
	second, err := open().LockExclusive(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, second.Close())
}

// testLocksAreNoFiles: what a lock leaves in the store is no object and
// no registry segment.
func testLocksAreNoFiles(t *testing.T, open func() store.Locker) {
	w := open()
	putThrough(t, w, "the one object")
	_, _, err := tryExclusive(open())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	b := w.(store.Backend)
	assert.Len(t, names(t, b, store.Object, ""), 1)
	assert.Empty(t, names(t, b, store.Segment, ""))
	require.NoError(t, w.Release())
	lock, err := open().LockExclusive(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, names(t, b, store.Object, ""), 1)
	assert.Empty(t, names(t, b, store.Segment, ""))
	require.NoError(t, lock.Close())
}
