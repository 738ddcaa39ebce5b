package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
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

// genOverlaid writes, from rng, a registry of an indexed segment and
// small segments after it, of few artifacts, places and creation times,
// so that ties and repeated places are common: records of several places
// (refs, a place repeated), times that do not parse or are empty, the
// same instant written two ways, lines that hold no record (one over
// maxLine among them), a compacted segment's header, a torn last line.
func genOverlaid(t *testing.T, rng *rand.Rand) *Store {
	dir := t.TempDir()
	segs := filepath.Join(dir, store.SegmentsDir)
	require.NoError(t, os.MkdirAll(segs, 0o700))
	times := []string{"2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00", "2026-01-01T00:00:00.5Z",
		"2026-01-02T00:00:00Z", "2025-12-31T23:59:59.999999999Z", "", "yesterday", "0001-01-01T00:00:00Z", "1960-01-01T00:00:00Z"}
	places := []string{"/a", "/b"}
	entries := []string{"", "e1", "e2"}
	sites := []string{"/s", "/t"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	nart := 3 + rng.IntN(10)
	line := func() string {
		switch rng.IntN(20) {
		case 0:
			return "{bad"
		case 1:
			return `{"hash":"nothex","size":1,"media":"x","createdAt":""}`
		case 2:
			return `{"size":1,"media":"x","createdAt":""}`
		case 3:
			return ""
		}
		i := rng.IntN(nart)
		r := Record{Hash: reggen.Hash(i), Size: int64(i), Media: "x", Session: fmt.Sprintf("s%d", rng.IntN(1000)),
			Source: pick(places), Entry: pick(entries), Site: pick(sites), CreatedAt: pick(times)}
		if rng.IntN(3) == 0 {
			r.Site, r.Entry = "", ""
			for range 1 + rng.IntN(4) {
				r.Refs = append(r.Refs, Ref{Site: pick(sites), Entry: pick(entries), Line: rng.IntN(100)})
			}
		}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b)
	}
	write := func(name string, n int) {
		var b strings.Builder
		if rng.IntN(4) == 0 {
			b.WriteString(`{"compacts":[]}` + "\n")
		}
		long := -1
		if rng.IntN(8) == 0 {
			long = rng.IntN(n + 1)
		}
		for i := range n + 1 {
			if i == long {
				b.WriteString(`{"hash":"` + strings.Repeat("0", maxLine) + `"}` + "\n")
			}
			if i < n {
				b.WriteString(line() + "\n")
			}
		}
		if rng.IntN(4) == 0 {
			b.WriteString(line()) // torn
		}
		require.NoError(t, os.WriteFile(filepath.Join(segs, name), []byte(b.String()), 0o600))
	}
	write("20260101T000000.000000000Z_gen_1_1.jsonl", 1+rng.IntN(80))
	for k := range 1 + rng.IntN(3) {
		write(fmt.Sprintf("20260102T000000.000000000Z_gen_%d_1.jsonl", k+2), rng.IntN(15))
	}
	return New(local.New(dir))
}

// TestListingOverlayRandom compares, for many generated registries, the
// overlay's listing with a read of the whole registry and with the merged
// listing: the rows, their ranks and places, Len, and the bad lines.
func TestListingOverlayRandom(t *testing.T) {
	smallIndexes(t)
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 39))
		s := genOverlaid(t, rng)
		want := listWhole(t, s)
		l, err := s.Listing(t.Context(), nil, nil, nil)
		require.NoError(t, err)
		require.NotNil(t, l.ov, "seed %d: overlaid", seed)
		require.Equal(t, int64(len(want)), l.Len(), "seed %d", seed)
		l.Close()
		smallWindows(t, int64(8+rng.IntN(80)))
		smallBatches(t, 1+rng.IntN(2000))
		got, bad := scanWith(t, s, nil, nil, 1+rng.IntN(3))
		require.Equal(t, want, got, "seed %d", seed)
		merged, mbad := func() ([]shown, []string) {
			old := maxOverlay
			maxOverlay = -1
			defer func() { maxOverlay = old }()
			return scan(t, s)
		}()
		require.Equal(t, want, merged, "seed %d: merged", seed)
		require.Equal(t, mbad, bad, "seed %d: bad lines", seed)
	}
}

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
			for _, w := range []int64{1 << 19, 100} {
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
					assert.Equal(t, listWhole(t, s), got, "%s, window %d, the later segment %s", edit, w, how)
				}
			}
		}
	}
}
