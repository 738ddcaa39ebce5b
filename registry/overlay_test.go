package registry

import (
	"bytes"
	"encoding/json"
	"errors"
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

// TestListingOverlayChanged checks that the listing of an indexed
// segment changed in place where its index's samples do not look (two
// lines made one, or one split in two) fails with ErrIndexChanged, or
// gives what a read of the whole registry does, never another row: with
// a later segment that hides, or adds places to, the artifacts of the
// lines changed and of every line after them in Scan's window, so that
// the index shows none of them.
func TestListingOverlayChanged(t *testing.T) {
	smallIndexes(t)
	for _, edit := range []string{"made one", "split"} {
		for _, w := range []int64{1 << 19, 100} {
			for _, how := range []string{"hides", "adds"} {
				s, seg, b := listedStore(t, 3000)
				lines := bytes.SplitAfter(b, []byte("\n"))
				var later []Record
				for n := 1702; n < 1800; n++ {
					var r Record
					require.NoError(t, json.Unmarshal(lines[n], &r))
					if how == "hides" {
						r.CreatedAt, r.Source = "2027-01-01T00:00:00Z", "/new"
					} else {
						r.CreatedAt, r.Entry, r.Refs = "2001-01-01T00:00:00Z", "new", nil
					}
					later = append(later, r)
				}
				require.NoError(t, s.Append(t.Context(), later))
				// Past the 4 KiB sampled at 9/17 of the segment.
				off := len(bytes.Join(lines[:1703], nil)) - 1
				if edit == "split" {
					off = bytes.LastIndex(b[:off], []byte("ls -la")) + 2
				}
				b[off] ^= ' ' ^ '\n'
				require.NoError(t, os.WriteFile(seg, b, 0o600)) // in place: same inode
				want := listWhole(t, s)
				smallWindows(t, w)
				l, err := s.Listing(t.Context(), nil, nil, nil)
				if errors.Is(err, ErrIndexChanged) {
					continue
				}
				require.NoError(t, err)
				require.NotNil(t, l.ov)
				got := make([]shown, l.Len())
				err = l.Scan(1, func(_ int, rank int64, r Record, at Pos, refs int) error {
					got[rank] = shown{r, at, refs}
					return nil
				})
				l.Close()
				if !errors.Is(err, ErrIndexChanged) {
					require.NoError(t, err)
					assert.Equal(t, want, got, "%s, window %d, the later segment %s", edit, w, how)
				}
			}
		}
	}
}
