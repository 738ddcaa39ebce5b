package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestListingOverlayBounded checks that an overlay reads, and holds the
// places of, at most maxOverlay bytes of the indexed segment's lines of
// its artifacts: a record of an artifact the segment has thousands of
// lines of is merged with it instead, its bad lines told once each.
func TestListingOverlayBounded(t *testing.T) {
	smallIndexes(t)
	dir := t.TempDir()
	segs := filepath.Join(dir, store.SegmentsDir)
	require.NoError(t, os.MkdirAll(segs, 0o700))
	popular := func(i int) string {
		return fmt.Sprintf(`{"hash":%q,"size":1,"media":"x","source":"/p","entry":"e%d","site":"/s","createdAt":"2026-01-01T00:00:00Z"}`+"\n", reggen.Hash(0), i)
	}
	var b strings.Builder
	for i := range 3000 {
		b.WriteString(popular(i))
		if i == 1000 {
			b.WriteString("{bad\n")
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(segs, "20260101T000000.000000000Z_gen_1_1.jsonl"), []byte(b.String()), 0o600))
	later := filepath.Join(segs, "20260102T000000.000000000Z_gen_2_1.jsonl")
	require.NoError(t, os.WriteFile(later, []byte(popular(5000)+"{bad\n"), 0o600))
	s := New(local.New(dir))
	want := listWhole(t, s)
	require.Len(t, want, 1)
	require.Equal(t, 3001, want[0].refs)

	listed := func() *Listing {
		l, err := s.Listing(t.Context(), nil, nil, nil)
		require.NoError(t, err)
		l.Close()
		return l
	}
	require.NotNil(t, listed().ov, "within the bound: overlaid")
	old := maxOverlay
	maxOverlay = int64(b.Len()) / 2 // more than the overlay, less than the lines of its artifact
	t.Cleanup(func() { maxOverlay = old })
	l := listed()
	assert.Nil(t, l.ov, "the segment's lines of the overlay's artifact exceed the bound")
	assert.NotNil(t, l.m)
	got, bad := scan(t, s)
	assert.Equal(t, want, got)
	assert.Len(t, bad, 2, "%q", bad)
}
