package registry

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
)

// TestAppendSkipsKnownRecords: a record the registry holds, in any of its
// files, whatever its creation time, is not appended again, by this Store
// or by another one (another process); a record that differs in any other
// field is.
func TestAppendSkipsKnownRecords(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0), record(1)}))
	once := readRegistry(t, s)

	later := record(1)
	later.CreatedAt = "2030-01-01T00:00:00Z"
	require.NoError(t, s.Append([]Record{record(0), later}))
	assert.Equal(t, once, readRegistry(t, s), "this Store appended a known record")
	other := Open(s.Dir())
	require.NoError(t, other.Append([]Record{later, record(0)}))
	assert.Empty(t, other.SegmentPath(), "another Store appended a known record")
	assert.Len(t, segments(t, s.Dir()), 1)

	changed := record(1)
	changed.Source = "/elsewhere.jsonl"
	require.NoError(t, s.Append([]Record{changed, changed, record(2)}))
	assert.Equal(t, []Record{record(0), record(1), changed, record(2)}, allRecords(t, s))

	// Lines another writer added since are read too, in its segment and
	// in the single-file registry.
	fresh := Open(s.Dir())
	require.NoError(t, fresh.Append([]Record{record(3)}))
	appendRaw(t, s.SegmentPath(), line(t, record(4)))
	appendRaw(t, s.RegistryPath(), line(t, record(5)))
	require.NoError(t, fresh.Append([]Record{record(5), record(4), record(3)}))
	assert.Len(t, allRecords(t, s), 7)
	assert.Equal(t, line(t, record(3)), string(readRegistry(t, fresh)))

	// A registry whose files are replaced is read again from the start.
	require.NoError(t, os.Rename(filepath.Join(s.Dir(), SegmentsDir), filepath.Join(s.Dir(), "old")))
	require.NoError(t, os.Remove(s.RegistryPath()))
	require.NoError(t, fresh.Append([]Record{record(0)}))
	assert.Equal(t, []Record{record(0)}, allRecords(t, s))
}

func mustMarshal(t *testing.T, r Record) []byte {
	t.Helper()
	b, err := api.Marshal(r)
	require.NoError(t, err)
	return b
}

// TestAppendAfterTornRecord: a record torn by a crash is not a known
// record: the next writer appends it whole, to its own segment, and the
// Store that tore it starts a new one rather than append after the tear.
func TestAppendAfterTornRecord(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0)}))
	torn := s.SegmentPath()
	l := line(t, record(1))
	appendRaw(t, torn, l[:len(l)/2])

	next := Open(s.Dir())
	require.NoError(t, next.Append([]Record{record(0), record(1)}))
	assert.Equal(t, l, string(readRegistry(t, next)))
	assert.Equal(t, []Record{record(0), record(1)}, allRecords(t, s))

	require.NoError(t, s.Append([]Record{record(2)}))
	assert.NotEqual(t, torn, s.SegmentPath())
	assert.Equal(t, []Record{record(0), record(1), record(2)}, allRecords(t, s))
	assert.Empty(t, tornFiles(t, s))
}

// TestAppendFailureReadsAgain: when the fsync of the segment fails, the
// lines written may be lost; the next Append must not take them for
// known, and writes them to a new segment.
func TestAppendFailureReadsAgain(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0)}))
	in := &fault.Injector{}
	uninstall := in.Install()
	require.NoError(t, s.Append([]Record{record(9)}))
	uninstall()
	var fsync int
	for _, op := range in.Ops() {
		if op.Kind == safefile.KindSync {
			fsync = op.N
		}
	}
	require.NotZero(t, fsync)

	s = newStore(t)
	in = &fault.Injector{At: fsync, Action: fault.Fail, Err: 5}
	require.NoError(t, s.Append([]Record{record(0)}))
	first := s.SegmentPath()
	uninstall = in.Install()
	err := s.Append([]Record{record(1)})
	uninstall()
	require.Error(t, err)
	// What the page cache held is gone, as after a failed writeback.
	require.NoError(t, os.Truncate(first, int64(len(mustMarshal(t, record(0)))+1)))

	require.NoError(t, s.Append([]Record{record(1)}))
	assert.NotEqual(t, first, s.SegmentPath())
	assert.Equal(t, []Record{record(0), record(1)}, allRecords(t, s))
}

// TestReadAcrossCompaction: a compaction that ends between a reader's
// listing of the registry and its opening of the files removes files the
// reader listed; the reader lists again and reads every record once.
func TestReadAcrossCompaction(t *testing.T) {
	s := newStore(t)
	appendRaw(t, s.RegistryPath(), line(t, record(0)))
	for i := 1; i <= 3; i++ {
		require.NoError(t, Open(s.Dir()).Append([]Record{record(i)}))
	}
	compactions, busy := 0, false
	listed = func() {
		if !busy && compactions < 2 { // two in a row: the reader lists three times
			busy = true
			defer func() { busy = false }()
			compactions++
			require.NoError(t, Open(s.Dir()).Append([]Record{record(10 + compactions)}))
			_, err := Open(s.Dir()).Compact(func(Record) bool { return true })
			require.NoError(t, err)
		}
	}
	defer func() { listed = func() {} }()
	assert.Equal(t, []Record{record(0), record(1), record(2), record(3), record(11), record(12)}, allRecords(t, s))
	assert.Equal(t, 2, compactions)
}

// syncModes runs test with the store's directories and objects made
// durable by fsyncs, one each, and, where the file system allows it, by
// syncfs, one for many.
func syncModes(t *testing.T, test func(t *testing.T, open func(dir string) *Store, syncFS bool)) {
	t.Run("fsync", func(t *testing.T) {
		test(t, func(dir string) *Store {
			s := Open(dir)
			s.noSyncFS.Store(true)
			return s
		}, false)
	})
	t.Run("syncfs", func(t *testing.T) {
		fs, err := safefile.OpenFS(t.TempDir())
		require.NoError(t, err)
		if fs == nil {
			t.Skip("syncfs does not stand in for fsync here")
		}
		fs.Close()
		test(t, Open, true)
	})
}

// TestPutSyncsFoundObjectOnce: an object found in the store, perhaps
// written by a run killed before its directory fsync, has its directories
// fsynced once by this Store, not at every Put.
func TestPutSyncsFoundObjectOnce(t *testing.T) {
	syncModes(t, func(t *testing.T, open func(string) *Store, syncFS bool) {
		dir := filepath.Join(t.TempDir(), "artifacts")
		d := mustPut(t, open(dir), []byte("found"))
		s := open(dir)
		// syncs counts the fsyncs of directories and the syncfs calls.
		syncs := func(fn func()) int {
			in := &fault.Injector{}
			uninstall := in.Install()
			fn()
			uninstall()
			n := 0
			for _, op := range in.Ops() {
				if op.Kind == safefile.KindSyncDir || op.Kind == safefile.KindSyncFS {
					n++
				}
			}
			return n
		}
		put := func() {
			got, created, err := s.Put([]byte("found"))
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, d, got)
			require.NoError(t, s.Sync())
		}
		want := func(fsyncs int) int {
			if syncFS && fsyncs > 1 {
				return 1
			}
			return fsyncs
		}
		assert.Equal(t, want(4), syncs(put), "shard, objects, the store and its parent, which this Store meets for the first time")
		assert.Equal(t, 0, syncs(put), "synced again")

		// A failed fsync leaves the object to be synced again. (A failed
		// syncfs has the directories fsynced instead; they fail too.)
		d2 := mustPut(t, s, []byte("new"))
		safefile.Hook = func(op safefile.Op) error {
			if op.Kind == safefile.KindSyncDir || op.Kind == safefile.KindSyncFS {
				return syscall.EIO
			}
			return nil
		}
		assert.ErrorIs(t, s.Sync(), syscall.EIO)
		safefile.Hook = nil
		assert.Equal(t, want(2), syncs(func() { require.NoError(t, s.Sync()) }),
			"its new shard, and objects/")
		assert.Equal(t, 0, syncs(func() { require.NoError(t, s.Sync()) }))
		_, created, err := s.Put([]byte("new"))
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, 0, syncs(func() { require.NoError(t, s.Sync()) }), "%s is durable", d2)
	})
}

// TestRemoveStaleTemps: temporary files killed writers left in the store
// and its shards go once old; young ones and anything else stay.
func TestRemoveStaleTemps(t *testing.T) {
	s := newStore(t)
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
		mk(filepath.Join(s.Dir(), ".registry.jsonl.torn-5.tmp-2"), true),
		mk(filepath.Join(s.Dir(), SegmentsDir, ".x.jsonl.tmp-6"), true),
	}
	kept := []string{
		mk(filepath.Join(shard, "."+d.String()+".tmp-3"), false),
		mk(filepath.Join(s.Dir(), ObjectsDir, "not-a-shard", ".x.tmp-4"), true),
		mk(filepath.Join(s.Dir(), ObjectsDir, ".y.tmp-5"), true),
		mk(filepath.Join(shard, "README"), true),
		mk(filepath.Join(s.Dir(), SegmentsDir, ".y.jsonl.tmp-7"), false),
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
// together at Sync and only then renamed under their names; an object
// whose fsync fails is not there, and the next PutSum writes it again.
func TestPutSumBatchesFsyncs(t *testing.T) {
	syncModes(t, testPutSumBatchesFsyncs)
}

func testPutSumBatchesFsyncs(t *testing.T, open func(string) *Store, syncFS bool) {
	s := open(filepath.Join(t.TempDir(), "artifacts"))
	put := func(data string) (Digest, bool) {
		d, created, err := s.PutSum(Sum([]byte(data)), []byte(data))
		require.NoError(t, err)
		return d, created
	}
	var ds []Digest
	for _, data := range []string{"object 0", "object 1", "object 2"} {
		d, created := put(data)
		require.True(t, created)
		ds = append(ds, d)
		assert.NoFileExists(t, s.Path(d), "under its name before Sync")
	}
	again, created := put("object 1")
	assert.False(t, created, "a second PutSum before Sync writes it again")
	assert.Equal(t, ds[1], again)

	in := &fault.Injector{}
	uninstall := in.Install()
	require.NoError(t, s.Sync())
	uninstall()
	var kinds []safefile.Kind
	for _, op := range in.Ops() {
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
		assert.NoError(t, s.Verify(d))
	}

	// A failed fsync: the object is dropped, and written again.
	d, _ := put("unlucky")
	in = &fault.Injector{At: 1, Action: fault.Fail, Err: 5}
	uninstall = in.Install()
	err := s.Sync()
	uninstall()
	require.Error(t, err)
	assert.Contains(t, err.Error(), s.Path(d))
	assert.NoFileExists(t, s.Path(d))
	_, created = put("unlucky")
	assert.True(t, created)
	require.NoError(t, s.Sync())
	assert.NoError(t, s.Verify(d))

	// This Store's readers see an object written but not yet synced.
	d, _ = put("read before Sync")
	got, err := s.Get(d)
	require.NoError(t, err)
	assert.Equal(t, "read before Sync", string(got))
}

// TestDiscard: objects stored with PutSum and never synced leave no file
// but the store's lock.
func TestDiscard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	s := Open(dir)
	data := []byte("never synced")
	d, created, err := s.PutSum(Sum(data), data)
	require.NoError(t, err)
	require.True(t, created)
	s.Discard()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && p != filepath.Join(dir, LockFile) {
			files = append(files, p)
		}
		return err
	}))
	assert.Empty(t, files)
	require.NoError(t, s.Sync())
	assert.ErrorIs(t, s.Verify(d), ErrNotFound)
}

// TestAppendRefusesUndurableObject: a transcript that found an object
// another one had written and not yet committed must not have its records
// appended when that commit fails: the object is not there.
func TestAppendRefusesUndurableObject(t *testing.T) {
	syncModes(t, func(t *testing.T, open func(string) *Store, _ bool) {
		s := open(filepath.Join(t.TempDir(), "artifacts"))
		data := []byte("artifact 7")
		d := Sum(data)
		_, created, err := s.PutSum(d, data) // transcript A
		require.NoError(t, err)
		require.True(t, created)
		_, created, err = s.PutSum(d, data) // transcript B finds it
		require.NoError(t, err)
		require.False(t, created)

		// A's commit fails to make it durable.
		safefile.Hook = func(op safefile.Op) error {
			if op.Kind == safefile.KindSync || op.Kind == safefile.KindSyncFS {
				return syscall.EIO
			}
			return nil
		}
		assert.ErrorIs(t, s.Sync(), syscall.EIO)
		safefile.Hook = nil

		err = s.Append([]Record{record(7)})
		require.Error(t, err, "B's record was appended")
		assert.Contains(t, err.Error(), d.String())
		assert.Empty(t, s.SegmentPath())
		assert.NoDirExists(t, filepath.Join(s.Dir(), SegmentsDir))

		// Stored again, it is durable, and its record goes in.
		_, created, err = s.PutSum(d, data)
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, s.Append([]Record{record(7)}))
		assert.Equal(t, []Record{record(7)}, allRecords(t, s))
		assert.NoError(t, s.Verify(d))
	})
}
