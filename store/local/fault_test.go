package local

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/fault"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
)

// syncModes runs test with the store's directories and objects made
// durable by fsyncs, one each, and, where the file system allows it, by
// syncfs, one for many. open returns a Local of the store in dir, and the
// Store over it.
func syncModes(t *testing.T, test func(t *testing.T, open func(dir string) (*store.Store, *Local), syncFS bool)) {
	open := func(noSyncFS bool) func(string) (*store.Store, *Local) {
		return func(dir string) (*store.Store, *Local) {
			l := New(dir)
			l.noSyncFS.Store(noSyncFS)
			t.Cleanup(func() { _ = l.Release() })
			return store.New(l), l
		}
	}
	t.Run("fsync", func(t *testing.T) { test(t, open(true), false) })
	t.Run("syncfs", func(t *testing.T) {
		fs, err := safefile.OpenFS(t.TempDir())
		require.NoError(t, err)
		if fs == nil {
			t.Skip("syncfs does not stand in for fsync here")
		}
		fs.Close()
		test(t, open(false), true)
	})
}

// failOn has package safefile fail every operation of the given kinds with
// EIO, until the returned function is called or the test ends.
func failOn(t *testing.T, kinds ...safefile.Kind) (restore func()) {
	safefile.Hook = func(op safefile.Op) error {
		for _, k := range kinds {
			if op.Kind == k {
				return syscall.EIO
			}
		}
		return nil
	}
	restore = func() { safefile.Hook = nil }
	t.Cleanup(restore)
	return restore
}

// record returns the operations fn makes through package safefile.
func record(fn func()) []fault.Op {
	in := &fault.Injector{}
	uninstall := in.Install()
	defer uninstall()
	fn()
	return in.Ops()
}

// TestPutSyncsFoundObjectOnce: an object found in the store, perhaps
// written by a run killed before its directory fsync, has its directories
// fsynced once by this Store, not at every Put.
func TestPutSyncsFoundObjectOnce(t *testing.T) {
	syncModes(t, func(t *testing.T, open func(string) (*store.Store, *Local), syncFS bool) {
		dir := filepath.Join(t.TempDir(), "artifacts")
		first, _ := open(dir)
		d := mustPut(t, first, []byte("found"))
		s, _ := open(dir)
		// syncs counts the fsyncs of directories and the syncfs calls.
		syncs := func(fn func()) int {
			n := 0
			for _, op := range record(fn) {
				if op.Kind == safefile.KindSyncDir || op.Kind == safefile.KindSyncFS {
					n++
				}
			}
			return n
		}
		put := func() {
			got, created, err := s.Put(ctx, []byte("found"))
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, d, got)
			require.NoError(t, s.Flush(ctx, d))
		}
		want := func(fsyncs int) int {
			if syncFS && fsyncs > 1 {
				return 1
			}
			return fsyncs
		}
		assert.Equal(t, want(4), syncs(put), "shard, objects, the store and its parent, which this Store meets for the first time")
		assert.Equal(t, 0, syncs(put), "synced again")

		// A failed directory fsync leaves the object not durable for
		// the rest of the run: one that succeeds after it, through
		// another descriptor, need not write the entry. (A failed
		// syncfs has the directories fsynced instead; they fail too.)
		d2 := mustPut(t, s, []byte("new"))
		restore := failOn(t, safefile.KindSyncDir, safefile.KindSyncFS)
		newer := []byte("newer")
		d3, _, err := s.PutSum(ctx, store.Sum(newer), newer)
		require.NoError(t, err)
		assert.ErrorIs(t, s.Flush(ctx, d3), syscall.EIO)
		restore()
		var flushErr error
		assert.Equal(t, want(2), syncs(func() { flushErr = s.Flush(ctx, d3) }),
			"its new shard, and objects/, still dirty")
		require.Error(t, flushErr)
		assert.Contains(t, flushErr.Error(), d3.String())
		assert.Contains(t, flushErr.Error(), "an fsync of its folder failed")
		assert.Equal(t, 0, syncs(func() { require.NoError(t, s.Flush(ctx, d2)) }), "%s is durable", d2)
		_, created, err := s.PutSum(ctx, d3, newer)
		require.NoError(t, err)
		assert.False(t, created)
		require.Error(t, s.Flush(ctx, d2, d3), "found again, %s is still in doubt", d3)

		// Another Local, as a run after this one, finds it and takes it
		// for durable once its folders' fsyncs succeed: what the failed
		// write left on the disk is more than a run can know.
		again, _ := open(dir)
		_, created, err = again.PutSum(ctx, d3, newer)
		require.NoError(t, err)
		assert.False(t, created)
		require.NoError(t, again.Flush(ctx, d3))
	})
}

// TestRemoveStaleTemps: temporary files killed writers left in the store
// and its shards go once old; young ones and anything else stay.
func TestRemoveStaleTemps(t *testing.T) {
	s, l := newStore(t)
	d := mustPut(t, s, []byte("x"))
	shard := filepath.Dir(s.Path(d))
	old := time.Now().Add(-2 * safefile.StaleAge)
	mk := func(path string, aged bool) string {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		if aged {
			require.NoError(t, os.Chtimes(path, old, old))
		}
		return path
	}
	gone := []string{
		mk(filepath.Join(shard, "."+d.String()+".tmp-1"), true),
		mk(filepath.Join(l.Dir(), ".registry.jsonl.torn-5.tmp-2"), true),
		mk(filepath.Join(l.Dir(), store.SegmentsDir, ".x.jsonl.tmp-6"), true),
	}
	kept := []string{
		mk(filepath.Join(shard, "."+d.String()+".tmp-3"), false),
		mk(filepath.Join(l.Dir(), store.ObjectsDir, "not-a-shard", ".x.tmp-4"), true),
		mk(filepath.Join(l.Dir(), store.ObjectsDir, ".y.tmp-5"), true),
		mk(filepath.Join(shard, "README"), true),
		mk(filepath.Join(l.Dir(), store.SegmentsDir, ".y.jsonl.tmp-7"), false),
		s.Path(d),
	}
	require.NoError(t, os.Chtimes(s.Path(d), old, old))

	assert.Equal(t, len(gone), s.RemoveStaleTemps())
	for _, p := range gone {
		assert.NoFileExists(t, p)
	}
	for _, p := range kept {
		assert.FileExists(t, p)
	}
}

// TestPutSumBatchesFsyncs: objects stored with PutSum are fsynced
// together at Flush and only then renamed under their names; an object
// whose fsync fails is not there, and the next PutSum writes it again.
func TestPutSumBatchesFsyncs(t *testing.T) {
	syncModes(t, testPutSumBatchesFsyncs)
}

func testPutSumBatchesFsyncs(t *testing.T, open func(string) (*store.Store, *Local), syncFS bool) {
	s, _ := open(filepath.Join(t.TempDir(), "artifacts"))
	put := func(data string) (store.Digest, bool) {
		d, created, err := s.PutSum(ctx, store.Sum([]byte(data)), []byte(data))
		require.NoError(t, err)
		return d, created
	}
	var ds []store.Digest
	for _, data := range []string{"object 0", "object 1", "object 2"} {
		d, created := put(data)
		require.True(t, created)
		ds = append(ds, d)
		assert.NoFileExists(t, s.Path(d), "under its name before Flush")
	}
	again, created := put("object 1")
	assert.False(t, created, "a second PutSum before Flush writes it again")
	assert.Equal(t, ds[1], again)

	var kinds []safefile.Kind
	for _, op := range record(func() { require.NoError(t, s.Flush(ctx, ds...)) }) {
		kinds = append(kinds, op.Kind)
	}
	want := []safefile.Kind{safefile.KindSync, safefile.KindSync, safefile.KindSync, safefile.KindRename, safefile.KindRename, safefile.KindRename}
	then := []safefile.Kind{safefile.KindSyncDir}
	if syncFS {
		// One syncfs makes the three durable; each one's write-back is
		// then checked, as its fsync; one more makes the directories
		// durable.
		want = append([]safefile.Kind{safefile.KindSyncFS}, want...)
		then = []safefile.Kind{safefile.KindSyncFS}
	}
	require.GreaterOrEqual(t, len(kinds), len(want))
	assert.Equal(t, want, kinds[:len(want)], "every fsync before any rename")
	require.Greater(t, len(kinds), len(want), "no directory made durable")
	for _, k := range kinds[len(want):] {
		assert.Contains(t, then, k, "then the directories")
	}
	for _, d := range ds {
		assert.NoError(t, s.Verify(ctx, d))
	}

	// A failed fsync: the object is dropped, and written again.
	d, _ := put("unlucky")
	in := &fault.Injector{At: 1, Action: fault.Fail, Err: syscall.EIO}
	uninstall := in.Install()
	err := s.Flush(ctx, d)
	uninstall()
	require.Error(t, err)
	assert.Contains(t, err.Error(), s.Path(d))
	assert.NoFileExists(t, s.Path(d))
	_, created = put("unlucky")
	assert.True(t, created)
	require.NoError(t, s.Flush(ctx, d))
	assert.NoError(t, s.Verify(ctx, d))

	// This Store's readers see an object written but not yet flushed.
	d, _ = put("read before Flush")
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "read before Flush", string(got))
}

// TestFlushRefusesUndurableObject: an object another caller stored and
// whose commit then failed is reported by a Flush that must have it, also
// when this caller found it (rather than stored it) before the failure;
// stored again, it is durable.
func TestFlushRefusesUndurableObject(t *testing.T) {
	syncModes(t, func(t *testing.T, open func(string) (*store.Store, *Local), _ bool) {
		s, _ := open(filepath.Join(t.TempDir(), "artifacts"))
		data := []byte("artifact 7")
		d := store.Sum(data)
		_, created, err := s.PutSum(ctx, d, data) // transcript A
		require.NoError(t, err)
		require.True(t, created)
		_, created, err = s.PutSum(ctx, d, data) // transcript B finds it
		require.NoError(t, err)
		require.False(t, created)

		// A's commit fails to make it durable.
		restore := failOn(t, safefile.KindSync, safefile.KindSyncFS)
		assert.ErrorIs(t, s.Flush(ctx), syscall.EIO)
		restore()

		err = s.Flush(ctx, d) // B's, before its records go in
		require.Error(t, err, "B's object is taken for durable")
		assert.Contains(t, err.Error(), d.String())

		_, created, err = s.PutSum(ctx, d, data)
		require.NoError(t, err)
		require.True(t, created, "stored again")
		require.NoError(t, s.Flush(ctx, d))
		assert.NoError(t, s.Verify(ctx, d))
	})
}

// TestDiscard: objects stored with PutSum and never flushed leave no file
// but the store's lock.
func TestDiscard(t *testing.T) {
	s, l := newStore(t)
	data := []byte("never flushed")
	d, created, err := s.PutSum(ctx, store.Sum(data), data)
	require.NoError(t, err)
	require.True(t, created)
	s.Discard()
	var files []string
	require.NoError(t, filepath.WalkDir(l.Dir(), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && p != filepath.Join(l.Dir(), store.LockFile) {
			files = append(files, p)
		}
		return err
	}))
	assert.Empty(t, files)
	require.NoError(t, s.Flush(ctx))
	assert.ErrorIs(t, s.Verify(ctx, d), store.ErrNotFound)
}
