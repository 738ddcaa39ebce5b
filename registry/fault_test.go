package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/fault"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestAppendSkipsKnownRecords: a record the registry holds, in any of its
// files, whatever its creation time, is not appended again, by this Store
// or by another one (another process); a record that differs in any other
// field is.
func TestAppendSkipsKnownRecords(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(context.Background(), []Record{record(0), record(1)}))
	once := readRegistry(t, s)

	later := record(1)
	later.CreatedAt = "2030-01-01T00:00:00Z"
	require.NoError(t, s.Append(context.Background(), []Record{record(0), later}))
	assert.Equal(t, once, readRegistry(t, s), "this Store appended a known record")
	other := mustOpen(t, s.Dir())
	require.NoError(t, other.Append(context.Background(), []Record{later, record(0)}))
	assert.Empty(t, other.SegmentPath(), "another Store appended a known record")
	assert.Len(t, segments(t, s.Dir()), 1)

	changed := record(1)
	changed.Source = "/elsewhere.jsonl"
	require.NoError(t, s.Append(context.Background(), []Record{changed, changed, record(2)}))
	assert.Equal(t, []Record{record(0), record(1), changed, record(2)}, allRecords(t, s))

	// Lines another writer added since are read too, in its segment and
	// in the single-file registry.
	fresh := mustOpen(t, s.Dir())
	require.NoError(t, fresh.Append(context.Background(), []Record{record(3)}))
	appendRaw(t, s.SegmentPath(), line(t, record(4)))
	appendRaw(t, s.RegistryPath(), line(t, record(5)))
	require.NoError(t, fresh.Append(context.Background(), []Record{record(5), record(4), record(3)}))
	assert.Len(t, allRecords(t, s), 7)
	assert.Equal(t, line(t, record(3)), string(readRegistry(t, fresh)))

	// A registry whose files are replaced is read again from the start.
	require.NoError(t, os.Rename(filepath.Join(s.Dir(), store.SegmentsDir), filepath.Join(s.Dir(), "old")))
	require.NoError(t, os.Remove(s.RegistryPath()))
	require.NoError(t, fresh.Append(context.Background(), []Record{record(0)}))
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
	require.NoError(t, s.Append(context.Background(), []Record{record(0)}))
	torn := s.SegmentPath()
	l := line(t, record(1))
	appendRaw(t, torn, l[:len(l)/2])

	next := mustOpen(t, s.Dir())
	require.NoError(t, next.Append(context.Background(), []Record{record(0), record(1)}))
	assert.Equal(t, l, string(readRegistry(t, next)))
	assert.Equal(t, []Record{record(0), record(1)}, allRecords(t, s))

	require.NoError(t, s.Append(context.Background(), []Record{record(2)}))
	assert.NotEqual(t, torn, s.SegmentPath())
	assert.Equal(t, []Record{record(0), record(1), record(2)}, allRecords(t, s))
	assert.Empty(t, tornFiles(t, s))
}

// TestAppendFailureReadsAgain: when the fsync of the segment fails, the
// lines written may be lost; the next Append must not take them for
// known, and writes them to a new segment.
func TestAppendFailureReadsAgain(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(context.Background(), []Record{record(0)}))
	in := &fault.Injector{}
	uninstall := in.Install()
	require.NoError(t, s.Append(context.Background(), []Record{record(9)}))
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
	require.NoError(t, s.Append(context.Background(), []Record{record(0)}))
	first := s.SegmentPath()
	uninstall = in.Install()
	err := s.Append(context.Background(), []Record{record(1)})
	uninstall()
	require.Error(t, err)
	// What the page cache held is gone, as after a failed writeback.
	require.NoError(t, os.Truncate(first, int64(len(mustMarshal(t, record(0)))+1)))

	require.NoError(t, s.Append(context.Background(), []Record{record(1)}))
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
		require.NoError(t, mustOpen(t, s.Dir()).Append(context.Background(), []Record{record(i)}))
	}
	compactions, busy := 0, false
	listed = func() {
		if !busy && compactions < 2 { // two in a row: the reader lists three times
			busy = true
			defer func() { busy = false }()
			compactions++
			require.NoError(t, mustOpen(t, s.Dir()).Append(context.Background(), []Record{record(10 + compactions)}))
			_, err := mustOpen(t, s.Dir()).Compact(context.Background(), func(Record) bool { return true })
			require.NoError(t, err)
		}
	}
	defer func() { listed = func() {} }()
	assert.Equal(t, []Record{record(0), record(1), record(2), record(3), record(11), record(12)}, allRecords(t, s))
	assert.Equal(t, 2, compactions)
}

// TestAppendRefusesUndurableObject: a transcript that found an object
// another one had written and not yet committed must not have its records
// appended when that commit fails: the object is not there.
func TestAppendRefusesUndurableObject(t *testing.T) {
	{
		s := newStore(t)
		data := []byte("artifact 7")
		d := store.Sum(data)
		_, created, err := s.PutSum(context.Background(), d, data) // transcript A
		require.NoError(t, err)
		require.True(t, created)
		_, created, err = s.PutSum(context.Background(), d, data) // transcript B finds it
		require.NoError(t, err)
		require.False(t, created)

		// A's commit fails to make it durable.
		safefile.Hook = func(op safefile.Op) error {
			if op.Kind == safefile.KindSync || op.Kind == safefile.KindSyncFS {
				return syscall.EIO
			}
			return nil
		}
		assert.ErrorIs(t, s.Flush(context.Background()), syscall.EIO)
		safefile.Hook = nil

		err = s.Append(context.Background(), []Record{record(7)})
		require.Error(t, err, "B's record was appended")
		assert.Contains(t, err.Error(), d.String())
		assert.Empty(t, s.SegmentPath())
		assert.NoDirExists(t, filepath.Join(s.Dir(), store.SegmentsDir))

		// Stored again, it is durable, and its record goes in.
		_, created, err = s.PutSum(context.Background(), d, data)
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, s.Append(context.Background(), []Record{record(7)}))
		assert.Equal(t, []Record{record(7)}, allRecords(t, s))
		assert.NoError(t, s.Verify(context.Background(), d))
	}
}

// tornListing is a backend whose listing of segments is not one state of
// the folder, as a local folder's is not: it reads the names first and
// describes each file after, leaving out one removed in between. Its
// first such listing lets during run between the two.
type tornListing struct {
	store.Backend
	during func()
}

func (b *tornListing) Unwrap() store.Backend { return b.Backend }

func (b *tornListing) List(ctx context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	if k != store.Segment || b.during == nil {
		return b.Backend.List(ctx, k, prefix, fn)
	}
	var names []store.FileInfo
	if err := b.Backend.List(ctx, k, prefix, func(fi store.FileInfo) error {
		names = append(names, fi)
		return nil
	}); err != nil {
		return err
	}
	during := b.during
	b.during = nil
	during()
	for _, fi := range names {
		now, err := b.Backend.Stat(ctx, store.Handle{Kind: k, Name: fi.Name})
		if errors.Is(err, store.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return err
		}
		if err := fn(now); err != nil {
			return err
		}
	}
	return nil
}

// TestReadAcrossTornListing: a compaction that ends while a reader lists
// the registry removes the segment the reader's listing named and makes
// one it does not name; the reader sees that a compacted segment is new,
// lists again and reads every record once. Before, it read no record and
// reported no error.
func TestReadAcrossTornListing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	require.NoError(t, mustOpen(t, dir).Append(context.Background(), []Record{record(1)}))
	_, err := mustOpen(t, dir).Compact(context.Background(), func(Record) bool { return true })
	require.NoError(t, err)
	require.NoError(t, mustOpen(t, dir).Append(context.Background(), []Record{record(2)}))

	b := &tornListing{Backend: local.New(dir)}
	b.during = func() {
		_, err := mustOpen(t, dir).Compact(context.Background(), func(Record) bool { return true })
		require.NoError(t, err)
	}
	assert.Equal(t, []Record{record(1), record(2)}, allRecords(t, New(b)))
	assert.Nil(t, b.during, "the compaction did not run")
}

// TestAppendKnowsOwnSegmentAfterReread: when a registry file goes (a
// compaction removed it), a Store reads the registry again from the
// start, its own segment too: a record it appended before is not
// appended again.
func TestAppendKnowsOwnSegmentAfterReread(t *testing.T) {
	s := newStore(t)
	other := mustOpen(t, s.Dir())
	require.NoError(t, other.Append(context.Background(), []Record{record(9)}))
	require.NoError(t, s.Append(context.Background(), []Record{record(0)}))
	require.NoError(t, s.Append(context.Background(), []Record{record(1)}))
	require.NoError(t, os.Remove(other.SegmentPath()))
	require.NoError(t, s.Append(context.Background(), []Record{record(0), record(2)}))
	assert.Equal(t, []Record{record(0), record(1), record(2)}, allRecords(t, s))
}
