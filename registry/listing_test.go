package registry

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// shown is an artifact as a listing gives it.
type shown struct {
	r    Record
	at   Pos
	refs int
}

// listWhole returns what a Listing should give, from the registry read
// whole: each artifact's newest record (a later one of the same time
// wins) and its distinct places, newest first.
func listWhole(t *testing.T, s *Store) []shown {
	t.Helper()
	return listWholeOf(t, s, func(Record) bool { return true })
}

// listWholeOf is listWhole of the records keep keeps.
func listWholeOf(t *testing.T, s *Store, keep func(Record) bool) []shown {
	t.Helper()
	type place struct{ hash, source, entry, site string }
	var (
		arts   []shown
		index  []int
		at     = map[string]int{}
		places = map[place]bool{}
		n      int
	)
	require.NoError(t, s.RecordsAt(t.Context(), func(r Record, pos Pos) error {
		if !isDigest(r.Hash) || !keep(r) {
			return nil
		}
		n++
		p := place{r.Hash, r.Source, r.Entry, r.Site}
		i, ok := at[r.Hash]
		if !ok {
			i = len(arts)
			at[r.Hash] = i
			arts = append(arts, shown{})
			index = append(index, 0)
		}
		if !places[p] {
			places[p] = true
			arts[i].refs++
		}
		if ok && created(r).Before(created(arts[i].r)) {
			return nil
		}
		arts[i].r, arts[i].at, index[i] = r, pos, n
		return nil
	}, nil))
	order := make([]int, len(arts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(created(arts[b].r).Compare(created(arts[a].r)), cmp.Compare(index[b], index[a]))
	})
	out := make([]shown, len(arts))
	for i, j := range order {
		out[i] = arts[j]
	}
	return out
}

func created(r Record) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.CreatedAt)
	return t
}

func isDigest(h string) bool {
	_, err := store.ParseDigest(h)
	return err == nil
}

// scan returns what s's Listing.Scan gives, put in the order of the
// ranks it gives, and the bad lines it reports.
func scan(t *testing.T, s *Store) ([]shown, []string) {
	t.Helper()
	return scanOf(t, s, nil, nil)
}

// scanOf is scan of the records keep keeps, keys naming them.
func scanOf(t *testing.T, s *Store, keys []Key, keep func(Record) bool) ([]shown, []string) {
	t.Helper()
	return scanWith(t, s, keys, keep, 3)
}

// scanWith is scanOf through Scan's given number of workers, checking
// that each worker's calls never overlap and each rank comes once.
func scanWith(t *testing.T, s *Store, keys []Key, keep func(Record) bool, workers int) ([]shown, []string) {
	t.Helper()
	var bad []string
	l, err := s.Listing(t.Context(), keys, keep, func(e *BadLineError) { bad = append(bad, e.Error()) })
	require.NoError(t, err)
	defer l.Close()
	got := make([]shown, l.Len())
	var (
		mu    sync.Mutex
		twice []int64
		busy  = make([]atomic.Bool, workers)
	)
	require.NoError(t, l.Scan(workers, func(w int, rank int64, r Record, at Pos, refs int) error {
		if !busy[w].CompareAndSwap(false, true) {
			return fmt.Errorf("worker %d called twice at once", w)
		}
		defer busy[w].Store(false)
		mu.Lock()
		defer mu.Unlock()
		if got[rank].refs != 0 {
			twice = append(twice, rank)
		}
		got[rank] = shown{r, at, refs}
		return nil
	}))
	assert.Empty(t, twice, "ranks given twice")
	return got, bad
}

// TestListing checks that a Listing gives what a read of the whole
// registry makes of it, through an index built in memory and one whose
// parts were spilled, with artifacts referred to from several places and
// lines, and records that differ only in their creation time.
func TestListing(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	for _, line := range []string{
		// A newer record of an artifact, from another place.
		`{"hash":"` + reggen.Hash(10) + `","size":5010,"media":"x","tool":"t","session":"s9","source":"/a","entry":"e1","site":"/s","createdAt":"2027-01-01T00:00:00Z"}`,
		// The same place again, later: counted once.
		`{"hash":"` + reggen.Hash(10) + `","size":5010,"media":"x","tool":"t","session":"s9","source":"/a","entry":"e1","site":"/s","createdAt":"2027-01-02T00:00:00Z"}`,
		// An older record of another: not the one shown.
		`{"hash":"` + reggen.Hash(11) + `","size":5011,"media":"x","tool":"t","session":"s9","source":"/b","entry":"e2","site":"/s","createdAt":"2001-01-01T00:00:00Z"}`,
		`{bad`,
	} {
		_, err := f.WriteString(line + "\n")
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	want := listWhole(t, s)
	got, bad := scan(t, s)
	require.Equal(t, len(want), len(got))
	assert.Equal(t, want, got)
	assert.Len(t, bad, 3, "%q", bad)
	assert.Equal(t, reggen.Hash(10), got[0].r.Hash)
	assert.Equal(t, 2, got[0].refs, "its first place and /a, once")
	for _, w := range []int64{1 << 19, 7, 1} {
		smallWindows(t, w)
		got, sbad := scan(t, s)
		assert.Equal(t, want, got, "window %d", w)
		assert.Equal(t, bad, sbad)
	}
	// Batches of one line, and of a few, to one worker and to several.
	smallWindows(t, 1000)
	for _, size := range []int{1, 1000, 64 << 10} {
		smallBatches(t, size)
		for _, workers := range []int{1, 2, 5} {
			got, _ := scanWith(t, s, nil, nil, workers)
			assert.Equal(t, want, got, "batches of %d bytes, %d workers", size, workers)
		}
	}

	// The same through an index whose parts were spilled and merged.
	require.NoError(t, os.Remove(indexPath(seg)))
	spillEarly(t)
	got, _ = scan(t, s)
	assert.Equal(t, want, got)
}

// TestListingMerged checks that the listing of a registry that is not
// one indexed segment gives what a read of the whole registry makes of
// it: several segments (an artifact's newer record, and a place counted
// once, in another), and one segment too small for an index, in memory
// and with its places spilled to disk.
func TestListingMerged(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	newer := record(1)
	newer.Hash, newer.CreatedAt = reggen.Hash(10), "2027-01-01T00:00:00Z"
	same := newer
	same.CreatedAt = "2027-01-02T00:00:00Z"
	require.NoError(t, s.Append(t.Context(), []Record{newer}))
	require.NoError(t, s.Append(t.Context(), []Record{same, record(2)}))
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{bad\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	want := listWhole(t, s)
	require.Greater(t, len(want), 3000)
	assert.Equal(t, reggen.Hash(10), want[0].r.Hash)
	assert.Equal(t, 2, want[0].refs)
	got, bad := scan(t, s)
	assert.Equal(t, want, got)
	assert.Len(t, bad, 3, "%q", bad)
	spillEarly(t)
	got, sbad := scan(t, s)
	assert.Equal(t, want, got, "spilled")
	assert.Equal(t, bad, sbad)

	// The records of a session, and of a tool, found through the index,
	// and the newer record of the other segment: the artifact's row is
	// its newest record of the tool.
	for _, k := range []Key{{FieldSession, "s7"}, {FieldTool, "read"}, {FieldTool, "bash"}} {
		keep := func(r Record) bool { return r.Session == k.Value || r.Tool == k.Value }
		want := listWholeOf(t, s, keep)
		require.NotEmpty(t, want)
		assert.Equal(t, want, must(scanOf(t, s, []Key{k}, keep)), "%v", k)
		assert.Equal(t, want, must(scanOf(t, s, nil, keep)), "%v, no keys", k)
	}

	small, _ := genStore(t, 50)
	require.Equal(t, listWhole(t, small), must(scan(t, small)))
}

func must[T, U any](v T, _ U) T { return v }

// smallWindows makes Listing.Scan map n lines at a time.
func smallWindows(t *testing.T, n int64) {
	old := scanWindow
	scanWindow = n
	t.Cleanup(func() { scanWindow = old })
}

// TestListingScanFails checks that Scan stops at, and returns, the first
// error of its function, whichever worker meets it, and that it returns
// with none of its workers still calling it.
func TestListingScanFails(t *testing.T) {
	smallIndexes(t)
	smallBatches(t, 1000)
	s, _ := genStore(t, 3000)
	boom := errors.New("boom")
	for _, how := range []string{"indexed", "overlay", "merged"} {
		switch how {
		case "overlay":
			// A second segment, small: overlaid on the index.
			require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
		case "merged":
			// Too large an overlay: the registry is read whole, twice.
			noOverlays(t)
		}
		merged := how == "merged"
		for _, workers := range []int{1, 3} {
			l, err := s.Listing(t.Context(), nil, nil, nil)
			require.NoError(t, err)
			require.Equal(t, merged, l.m != nil)
			require.Equal(t, how == "overlay", l.ov != nil)
			var calls, running atomic.Int64
			err = l.Scan(workers, func(int, int64, Record, Pos, int) error {
				running.Add(1)
				defer running.Add(-1)
				if calls.Add(1) == 500 {
					return boom
				}
				return nil
			})
			l.Close()
			assert.ErrorIs(t, err, boom, "%d workers, merged %v", workers, merged)
			assert.Zero(t, running.Load(), "%d workers, merged %v", workers, merged)
			assert.Less(t, calls.Load(), int64(1500), "%d workers, merged %v: the scan went on", workers, merged)
		}
	}
}

// noOverlays makes a Listing merge every registry of several segments,
// however small those after an indexed one.
func noOverlays(t *testing.T) {
	old := maxOverlay
	maxOverlay = -1
	t.Cleanup(func() { maxOverlay = old })
}

// TestListingOverlay checks that the listing of an indexed segment and
// small segments after it, made from the index and those segments, is
// what a read of the whole registry makes of it, and what the merged
// listing gives, bad lines included: artifacts of the index with a newer
// record later (hidden there), with one made at the same time (the later
// one wins), with an older one from a place the index has or from a new
// one (counted in the index's row), new artifacts older than all and
// among the index's of the same time, and lines that hold no record.
func TestListingOverlay(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	dir := filepath.Dir(filepath.Dir(seg))
	at := func(i int, createdAt, source, entry string) Record {
		r := record(i)
		r.Hash, r.CreatedAt = reggen.Hash(i), createdAt
		r.Source, r.Entry = source, entry
		return r
	}
	own := func(i int) (string, string) { return reggen.Source(reggen.Session(i)), fmt.Sprintf("e%d", i) }
	s20, e20 := own(20)
	s33, e33 := own(33)
	twoPlaces := at(33, "2001-01-01T00:00:00Z", s33, "")
	twoPlaces.Refs = []Ref{{Site: "/message/content", Entry: e33}, {Site: "/new", Entry: "e-new"}}
	newAmong := record(3)
	newAmong.CreatedAt = "2026-11-21T10:08:45Z"
	first := []Record{
		at(10, "2027-01-01T00:00:00Z", "/a", "e1"), // newer, from a new place
		at(20, "2001-01-01T00:00:00Z", s20, e20),   // older, a place the index has
		at(30, "2026-11-21T10:08:30Z", "/c", "e3"), // the same time as the index's
		twoPlaces, // older: one place known, one new
		record(1), record(2), newAmong,
	}
	first[1].Site = "/message/content"
	require.NoError(t, s.Append(t.Context(), first))
	newTie := record(4)
	newTie.CreatedAt = newAmong.CreatedAt
	second := New(local.New(dir))
	require.NoError(t, second.Append(t.Context(), []Record{at(10, "2027-02-01T00:00:00Z", "/a", "e2"), newTie}))
	third := New(local.New(dir))
	require.NoError(t, third.Append(t.Context(), []Record{record(5)}))
	segs, err := filepath.Glob(filepath.Join(dir, store.SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, segs, 4)
	f, err := os.OpenFile(segs[2], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{bad\n" + `{"hash":"nothex","size":1,"media":"x","session":"s3","createdAt":""}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	want := listWhole(t, s)
	l, err := s.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, l.ov, "overlaid")
	assert.Equal(t, int64(len(want)), l.Len())
	l.Close()
	got, bad := scan(t, s)
	assert.Equal(t, want, got)
	for _, w := range []int64{7, 1000} {
		smallWindows(t, w)
		got, _ := scanWith(t, s, nil, nil, 2)
		assert.Equal(t, want, got, "window %d", w)
	}
	rows := map[string]shown{}
	for _, r := range got {
		rows[r.r.Hash] = r
	}
	assert.Equal(t, "2027-02-01T00:00:00Z", rows[reggen.Hash(10)].r.CreatedAt)
	assert.Equal(t, 3, rows[reggen.Hash(10)].refs, "the index's place, /a e1 and /a e2")
	assert.Equal(t, 1, rows[reggen.Hash(20)].refs)
	assert.Equal(t, "/c", rows[reggen.Hash(30)].r.Source)
	assert.Equal(t, 3, rows[reggen.Hash(33)].refs)

	noOverlays(t)
	merged, mbad := scan(t, s)
	assert.Equal(t, want, merged)
	assert.Equal(t, mbad, bad)
	assert.Len(t, bad, 4, "%q", bad)
}

// smallBatches makes Listing.Scan hand its workers about n bytes of
// lines at a time.
func smallBatches(t *testing.T, n int) {
	old := scanBatchSize
	scanBatchSize = n
	t.Cleanup(func() { scanBatchSize = old })
}

// TestListingChanged checks that Scan fails with ErrIndexChanged,
// rather than show another line than the one indexed, when the segment
// was changed in place where its index's samples do not look: two lines
// made one.
func TestListingChanged(t *testing.T) {
	smallIndexes(t)
	s, seg, b := listedStore(t, 3000)
	// Past the first 64 KiB sampled and the 4 KiB at 1/17, before 2/17.
	nl := len(b)/17 + 16<<10 + bytes.IndexByte(b[len(b)/17+16<<10:], '\n')
	require.Less(t, nl, 2*len(b)/17)
	b[nl] = ' '
	require.NoError(t, os.WriteFile(seg, b, 0o600)) // in place: same inode
	for _, w := range []int64{1 << 19, 100} {
		smallWindows(t, w)
		l, err := s.Listing(t.Context(), nil, nil, nil)
		require.NoError(t, err)
		require.NotNil(t, l.ix, "the index still matches its samples")
		err = l.Scan(2, func(int, int64, Record, Pos, int) error { return nil })
		assert.ErrorIs(t, err, ErrIndexChanged, "window %d", w)
		l.Close()
	}
}

// TestListingEdited checks that Scan fails with ErrIndexChanged when a
// line of the segment was changed in place where its index's samples do
// not look, keeping its length and still a record (its creation time
// moved): every line is where the index says and parses, but the bytes
// it covers are not those it was made of.
func TestListingEdited(t *testing.T) {
	smallIndexes(t)
	s, seg, b := listedStore(t, 3000)
	// Past the first 64 KiB sampled and the 4 KiB at 1/17, before 2/17.
	from := len(b)/17 + 16<<10
	at := from + bytes.Index(b[from:], []byte(`"createdAt":"2026-`)) + len(`"createdAt":"`)
	require.Less(t, at, 2*len(b)/17)
	copy(b[at:], "2099")
	require.NoError(t, os.WriteFile(seg, b, 0o600)) // in place: same inode
	l, err := s.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NotNil(t, l.ix, "the index still matches its samples")
	err = l.Scan(2, func(int, int64, Record, Pos, int) error { return nil })
	assert.ErrorIs(t, err, ErrIndexChanged)
}

// TestListingLongLine checks that the index of a segment with a line
// over maxLine, made when the segment is read whole and when it is
// compacted, sums that line's bytes with the others', in order: the
// listing goes through it, and gives what a whole read gives.
func TestListingLongLine(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	mid := len(b) / 2
	mid += bytes.IndexByte(b[mid:], '\n') + 1
	long := `{"x":"` + strings.Repeat("y", maxLine) + "\"}\n"
	require.NoError(t, os.WriteFile(seg, []byte(string(b[:mid])+long+string(b[mid:])), 0o600))
	for _, compact := range []bool{false, true} {
		if compact {
			// A second segment, so that there is something to compact.
			require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
			_, err := s.Compact(t.Context(), keepAll)
			require.NoError(t, err)
			require.Len(t, segments(t, s.Dir()), 1)
		}
		want := listWhole(t, s)
		l, err := s.Listing(t.Context(), nil, nil, nil)
		require.NoError(t, err)
		require.NotNil(t, l.ix, "compacted %v: listed through the index", compact)
		l.Close()
		got, bad := scan(t, s)
		assert.Equal(t, want, got, "compacted %v", compact)
		assert.Len(t, bad, 3, "the long line and the genStore's two: %q", bad)
	}
}

// listedStore is genStore of n records listed once, which makes the
// segment's index, and the segment's bytes.
func listedStore(t *testing.T, n int) (*Store, string, []byte) {
	t.Helper()
	s, seg := genStore(t, n)
	l, err := s.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	l.Close()
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	return s, seg, b
}

// TestListingMergedChanged checks that the listing of several segments
// fails with ErrIndexChanged, rather than show another line, when a
// segment is changed in place between its two reads.
func TestListingMergedChanged(t *testing.T) {
	smallIndexes(t)
	noOverlays(t)
	s, seg := genStore(t, 3000)
	require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
	l, err := s.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NotNil(t, l.m)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	// Some line's newline made a space: two lines made one.
	nl := len(b)/2 + bytes.IndexByte(b[len(b)/2:], '\n')
	b[nl] = ' '
	require.NoError(t, os.WriteFile(seg, b, 0o600)) // in place: same inode
	err = l.Scan(2, func(int, int64, Record, Pos, int) error { return nil })
	assert.ErrorIs(t, err, ErrIndexChanged)
}

// BenchmarkListing lists a registry of 100k records through its index
// (Scan), and reads it whole as ls does without one.
func BenchmarkListing(b *testing.B) {
	s, _ := genStore(b, 100000)
	l, err := s.Listing(b.Context(), nil, nil, nil) // makes the index
	require.NoError(b, err)
	l.Close()
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			l, err := s.Listing(b.Context(), nil, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			err = l.Scan(1, func(int, int64, Record, Pos, int) error { n++; return nil })
			l.Close()
			if err != nil || n < 100000 {
				b.Fatal(err, n)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := s.RecordsAt(b.Context(), func(Record, Pos) error { n++; return nil }, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
