package fsck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/mem"
)

// listHook is a backend in memory that calls before once, when the
// registry's segments are listed after the objects have been: when gc's
// compaction reads the registry, after gc looked at the objects.
type listHook struct {
	store.Backend // a mem.Mem without its optional interfaces, as object storage
	objectsListed bool
	before        func()
}

func (h *listHook) List(ctx context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	switch {
	case k == store.Object:
		h.objectsListed = true
	case h.objectsListed && h.before != nil:
		before := h.before
		h.before = nil
		before()
	}
	return h.Backend.List(ctx, k, prefix, fn)
}

// TestGCKeepsRecordsAppendedMeanwhile: on a store without a lock (object
// storage), a writer that stores an artifact and appends its record
// while gc --yes runs, after gc listed the objects, keeps its record
// through gc's compaction. (Found by an adversarial review.)
func TestGCKeepsRecordsAppendedMeanwhile(t *testing.T) {
	ctx := context.Background()
	b := &listHook{Backend: mem.New()}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(tr, []byte("{}\n"), 0o600))
	writer := registry.New(b)
	d0, _, err := writer.Put(ctx, []byte("an old payload"))
	require.NoError(t, err)
	require.NoError(t, writer.Append(ctx, []registry.Record{{Hash: d0.String(), Size: 14, Media: "text/plain", Source: "/elsewhere.jsonl", CreatedAt: "x"}}))
	var y store.Digest
	b.before = func() {
		w := registry.New(b)
		y, _, err = w.Put(ctx, []byte("a payload a concurrent migrate stores"))
		require.NoError(t, err)
		require.NoError(t, w.Append(ctx, []registry.Record{{Hash: y.String(), Size: 37, Media: "text/plain", Source: "/other/live.jsonl", CreatedAt: "y"}}))
	}
	_, err = fsck.GC(ctx, registry.New(b), inputs(tr), fsck.GCOptions{Remove: true, Grace: time.Hour, Now: time.Now()})
	require.NoError(t, err)
	var hashes []string
	require.NoError(t, registry.New(b).Records(context.Background(), func(r registry.Record) error {
		hashes = append(hashes, r.Hash)
		return nil
	}, nil))
	assert.Contains(t, hashes, y.String(), "the record appended during gc was dropped by its compaction")
	assert.Contains(t, hashes, d0.String())
}
