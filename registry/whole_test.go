package registry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/mem"
)

// segmentNames lists the segment names of b.
func segmentNames(t *testing.T, b store.Backend) []string {
	t.Helper()
	var names []string
	require.NoError(t, b.List(context.Background(), store.Segment, "", func(fi store.FileInfo) error {
		names = append(names, fi.Name)
		return nil
	}))
	return names
}

// objectStorage is a backend with none of the optional interfaces of the
// one it wraps: it cannot append in place, as object storage cannot.
type objectStorage struct{ store.Backend }

// putAll stores the artifacts of recs, so that their records may go in.
func putAll(t *testing.T, s *Store, idx ...int) []Record {
	t.Helper()
	var recs []Record
	for _, i := range idx {
		_, _, err := s.Put(context.Background(), []byte(recordData(i)))
		require.NoError(t, err)
		recs = append(recs, record(i))
	}
	return recs
}

// TestObjectStorageRegistry: over a backend that cannot append, each
// Append is a new whole segment, two writers never share one, readers see
// the union, a rerun appends nothing, and a compaction merges them into
// one without losing or doubling a record.
func TestObjectStorageRegistry(t *testing.T) {
	ctx := context.Background()
	b := objectStorage{mem.New()}
	a, c := New(b), New(b)
	require.NoError(t, a.Append(ctx, putAll(t, a, 1, 2)))
	require.NoError(t, c.Append(ctx, putAll(t, c, 3)))
	require.NoError(t, a.Append(ctx, putAll(t, a, 4)))
	assert.Len(t, segmentNames(t, b), 3, "one segment per Append")
	assert.ElementsMatch(t, []Record{record(1), record(2), record(3), record(4)}, allRecords(t, New(b)))

	// A rerun (another writer) holding the same records appends nothing.
	again := New(b)
	require.NoError(t, again.Append(ctx, putAll(t, again, 1, 3)))
	assert.Len(t, segmentNames(t, b), 3)

	dropped, err := New(b).Compact(context.Background(), func(r Record) bool { return r.Hash != record(2).Hash })
	require.NoError(t, err)
	assert.Equal(t, 1, dropped)
	assert.Len(t, segmentNames(t, b), 1, "compacted into one segment")
	assert.ElementsMatch(t, []Record{record(1), record(3), record(4)}, allRecords(t, New(b)))

	// A writer that read the registry before the compaction still
	// appends: its next segment is new, and readers see it.
	require.NoError(t, a.Append(ctx, putAll(t, a, 5)))
	assert.ElementsMatch(t, []Record{record(1), record(3), record(4), record(5)}, allRecords(t, New(b)))
}

// TestObjectStorageAppendNeedsObjects: as on a folder, the records of an
// artifact that is not in the store are refused.
func TestObjectStorageAppendNeedsObjects(t *testing.T) {
	b := objectStorage{mem.New()}
	s := New(b)
	err := s.Append(context.Background(), []Record{record(9)})
	require.Error(t, err)
	assert.Empty(t, segmentNames(t, b))
}

// TestAppendsInPlaceOverAnyAppender: over a backend that appends in place
// other than a folder (memory), each Store appends to one segment of its
// own, readers see the union, and a compaction merges them into one.
func TestAppendsInPlaceOverAnyAppender(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	a, c := New(b), New(b)
	require.NoError(t, a.Append(ctx, putAll(t, a, 1, 2)))
	require.NoError(t, c.Append(ctx, putAll(t, c, 3)))
	require.NoError(t, a.Append(ctx, putAll(t, a, 4)))
	assert.Len(t, segmentNames(t, b), 2, "one segment per Store")
	assert.ElementsMatch(t, []Record{record(1), record(2), record(3), record(4)}, allRecords(t, New(b)))

	dropped, err := New(b).Compact(ctx, func(r Record) bool { return r.Hash != record(2).Hash })
	require.NoError(t, err)
	assert.Equal(t, 1, dropped)
	assert.Len(t, segmentNames(t, b), 1)
	require.NoError(t, a.Append(ctx, putAll(t, a, 5)))
	assert.ElementsMatch(t, []Record{record(1), record(3), record(4), record(5)}, allRecords(t, New(b)))
	assert.Len(t, segmentNames(t, b), 2, "a's segment was merged: it starts another")
}
