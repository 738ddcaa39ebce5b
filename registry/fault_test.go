package registry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/fault"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// TestAppendSkipsKnownRecords: a record the registry holds, whatever its
// creation time, is not appended again, by this Store or by another one
// (another process); a record that differs in any other field is.
func TestAppendSkipsKnownRecords(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0), record(1)}))
	once := readRegistry(t, s)

	later := record(1)
	later.CreatedAt = "2030-01-01T00:00:00Z"
	require.NoError(t, s.Append([]Record{record(0), later}))
	assert.Equal(t, once, readRegistry(t, s), "this Store appended a known record")
	require.NoError(t, Open(s.Dir()).Append([]Record{later, record(0)}))
	assert.Equal(t, once, readRegistry(t, s), "another Store appended a known record")

	other := record(1)
	other.Source = "/elsewhere.jsonl"
	require.NoError(t, s.Append([]Record{other, other, record(2)}))
	assert.Equal(t, []Record{record(0), record(1), other, record(2)}, allRecords(t, s))

	// Lines another writer added since are read too.
	fresh := Open(s.Dir())
	require.NoError(t, fresh.Append([]Record{record(3)}))
	appendRaw(t, s, string(mustMarshal(t, record(4)))+"\n")
	require.NoError(t, fresh.Append([]Record{record(4), record(3)}))
	assert.Len(t, allRecords(t, s), 6)

	// A registry replaced by another file is read again from its start.
	require.NoError(t, os.Rename(s.RegistryPath(), s.RegistryPath()+".old"))
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
// record: it is set aside and appended whole.
func TestAppendAfterTornRecord(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0)}))
	line := mustMarshal(t, record(1))
	appendRaw(t, s, string(line[:len(line)/2]))

	require.NoError(t, s.Append([]Record{record(0), record(1)}))

	assert.Equal(t, []Record{record(0), record(1)}, allRecords(t, s))
	assert.Len(t, tornFiles(t, s), 1)
}

// TestAppendFailureReadsAgain: when the fsync of the registry fails, the
// lines written may be lost; the next Append must not take them for
// known.
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
	uninstall = in.Install()
	err := s.Append([]Record{record(1)})
	uninstall()
	require.Error(t, err)
	// What the page cache held is gone, as after a failed writeback.
	require.NoError(t, os.Truncate(s.RegistryPath(), int64(len(mustMarshal(t, record(0)))+1)))

	require.NoError(t, s.Append([]Record{record(1)}))
	assert.Equal(t, []Record{record(0), record(1)}, allRecords(t, s))
}

// TestPutSyncsFoundObjectOnce: an object found in the store, perhaps
// written by a run killed before its directory fsync, has its directories
// fsynced once by this Store, not at every Put.
func TestPutSyncsFoundObjectOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	d := mustPut(t, Open(dir), []byte("found"))
	s := Open(dir)
	syncs := func(fn func()) int {
		in := &fault.Injector{}
		uninstall := in.Install()
		fn()
		uninstall()
		n := 0
		for _, op := range in.Ops() {
			if op.Kind == safefile.KindSyncDir {
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
	assert.Equal(t, 3, syncs(put), "shard, objects and store")
	assert.Equal(t, 0, syncs(put), "synced again")

	// A failed fsync leaves the object to be synced again.
	d2 := mustPut(t, s, []byte("new"))
	in := &fault.Injector{At: 1, Action: fault.Fail, Err: 5}
	uninstall := in.Install()
	assert.Error(t, s.Sync())
	uninstall()
	assert.Equal(t, 4, syncs(func() { require.NoError(t, s.Sync()) }),
		"its new shard, and objects/, the store and its parent, which this Store meets for the first time")
	assert.Equal(t, 0, syncs(func() { require.NoError(t, s.Sync()) }))
	_, created, err := s.Put([]byte("new"))
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, 0, syncs(func() { require.NoError(t, s.Sync()) }), "%s is durable", d2)
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
	}
	kept := []string{
		mk(filepath.Join(shard, "."+d.String()+".tmp-3"), false),
		mk(filepath.Join(s.Dir(), ObjectsDir, "not-a-shard", ".x.tmp-4"), true),
		mk(filepath.Join(s.Dir(), ObjectsDir, ".y.tmp-5"), true),
		mk(filepath.Join(shard, "README"), true),
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
