package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// genStore makes a store whose registry is one segment of n synthetic
// records, a bad line and a record of no artifact among them, and
// returns it with the segment's path.
func genStore(tb testing.TB, n int) (*Store, string) {
	tb.Helper()
	dir := tb.TempDir()
	seg := filepath.Join(dir, store.SegmentsDir, "20260101T000000.000000000Z_gen_1_1.jsonl")
	require.NoError(tb, os.MkdirAll(filepath.Dir(seg), 0o700))
	var b bytes.Buffer
	require.NoError(tb, reggen.Write(&b, n/2))
	b.WriteString("{not a record\n")
	b.WriteString(`{"hash":"nothex","size":1,"media":"x","session":"s3","createdAt":""}` + "\n")
	var rest bytes.Buffer
	require.NoError(tb, reggen.Write(&rest, n))
	b.Write(rest.Bytes()[bytes.Index(rest.Bytes(), []byte(reggen.Hash(n/2)))-len(`{"hash":"`):])
	require.NoError(tb, os.WriteFile(seg, b.Bytes(), 0o600))
	return New(local.New(dir)), seg
}

type seen struct {
	recs []Record
	at   []Pos
	bad  []string
}

// lookup returns what RecordsMatching(keys) passes on that match.
func lookup(t *testing.T, s *Store, keys []Key, match func(Record) bool) seen {
	t.Helper()
	var got seen
	err := s.RecordsMatching(context.Background(), keys, func(r Record, at Pos) error {
		if match(r) {
			got.recs, got.at = append(got.recs, r), append(got.at, at)
		}
		return nil
	}, func(e *BadLineError) { got.bad = append(got.bad, e.Error()) })
	require.NoError(t, err)
	return got
}

// queries are lookups with the records they are for.
var queries = []struct {
	keys  []Key
	match func(Record) bool
}{
	{[]Key{{FieldSession, "s3"}}, func(r Record) bool { return r.Session == "s3" }},
	{[]Key{{FieldTool, "read"}}, func(r Record) bool { return r.Tool == "read" }},
	{[]Key{{FieldID, reggen.ToolCallID(33)}}, func(r Record) bool { return r.ToolCallID == reggen.ToolCallID(33) }},
	{[]Key{{FieldID, "e1500"}}, func(r Record) bool { return r.Entry == "e1500" }},
	{[]Key{{FieldHash, reggen.Hash(1999)}, {FieldSource, reggen.Source("s7")}},
		func(r Record) bool { return r.Hash == reggen.Hash(1999) || r.Source == reggen.Source("s7") }},
	{[]Key{{FieldHash, "nothex"}}, func(r Record) bool { return r.Hash == "nothex" }},
}

// checkSame checks that every query finds through the index what a read
// of the whole registry finds.
func checkSame(t *testing.T, s *Store) {
	t.Helper()
	for _, q := range queries {
		want := lookup(t, s, nil, q.match)
		require.NotEmpty(t, want.recs, "%v", q.keys)
		got := lookup(t, s, q.keys, q.match)
		assert.Equal(t, want, got, "%v", q.keys)
	}
}

func smallIndexes(t *testing.T) {
	old := indexMinSize
	indexMinSize = 1
	t.Cleanup(func() { indexMinSize = old })
}

func TestIndex(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	checkSame(t, s) // reads whole, and makes the index
	_, err := os.Stat(indexPath(seg))
	require.NoError(t, err)
	checkSame(t, s) // through the index

	// Records appended since are found, and a bad line among them reported.
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"hash":"` + reggen.Hash(77777) + `","size":1,"media":"x","tool":"read","toolCallId":"` + reggen.ToolCallID(33) + `","session":"s3","createdAt":""}` + "\n{bad\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	ix, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	checkSame(t, s)
	got := lookup(t, s, []Key{{FieldSession, "s3"}}, func(r Record) bool { return r.Hash == reggen.Hash(77777) })
	assert.Len(t, got.recs, 1)
	assert.Len(t, got.bad, 2)
	assert.Contains(t, got.bad[0], ":1501: byte ")
	now, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	assert.Equal(t, ix, now, "a short tail is read, the index kept")
}

// TestIndexIgnored checks that an index that does not match its segment
// is ignored, whatever is wrong with it.
func TestIndexIgnored(t *testing.T) {
	smallIndexes(t)
	for name, spoil := range map[string]func(t *testing.T, seg string){
		"damaged": func(t *testing.T, seg string) {
			b, err := os.ReadFile(indexPath(seg))
			require.NoError(t, err)
			b[len(b)/2] ^= 1
			require.NoError(t, os.WriteFile(indexPath(seg), b, 0o600))
		},
		"truncated": func(t *testing.T, seg string) {
			b, err := os.ReadFile(indexPath(seg))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(indexPath(seg), b[:len(b)-9], 0o600))
		},
		"empty": func(t *testing.T, seg string) {
			require.NoError(t, os.WriteFile(indexPath(seg), nil, 0o600))
		},
		"segment made anew": func(t *testing.T, seg string) {
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			require.NoError(t, os.Remove(seg))
			b = bytes.ReplaceAll(b, []byte(`"s3"`), []byte(`"s4"`))
			require.NoError(t, os.WriteFile(seg, b, 0o600))
		},
		"segment cut": func(t *testing.T, seg string) {
			fi, err := os.Stat(seg)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(seg, fi.Size()/2))
		},
		"lines moved where no sample looks": func(t *testing.T, seg string) {
			b, err := os.ReadFile(seg)
			require.NoError(t, err)
			swapLines(t, b, int64(len(b)))
			require.NoError(t, os.WriteFile(seg, b, 0o600))
		},
		"segment rewritten in place": func(t *testing.T, seg string) {
			f, err := os.OpenFile(seg, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("\n"), 100)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, seg := genStore(t, 3000)
			checkSame(t, s)
			spoil(t, seg)
			for _, q := range queries {
				want := lookup(t, s, nil, q.match)
				assert.Equal(t, want, lookup(t, s, q.keys, q.match), "%v", q.keys)
			}
		})
	}
}

// swapLines swaps, in the segment b whose first n bytes an index covers,
// a line of session s3 with the next one, of another length, both between
// two of the places sampleSum reads: the index's checks on load still
// pass, but the lines it names there are no longer lines.
func swapLines(t *testing.T, b []byte, n int64) {
	t.Helper()
	lo, hi := int(n*8/17+4<<10), int(n*9/17)
	for i := lo + bytes.IndexByte(b[lo:], '\n') + 1; i < hi; {
		j := i + bytes.IndexByte(b[i:], '\n') + 1
		k := j + bytes.IndexByte(b[j:], '\n') + 1
		if k > hi {
			break
		}
		if bytes.Contains(b[i:j], []byte(`"session":"s3"`)) && j-i != k-j {
			swapped := append(slices.Clone(b[j:k]), b[i:j]...)
			copy(b[i:k], swapped)
			return
		}
		i = j
	}
	t.Fatal("no line of session s3 to move between the samples")
}

// TestIndexCompact checks that a compaction leaves the merged segment's
// index, and no index of a segment it removed.
func TestIndexCompact(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 2000)
	checkSame(t, s)
	require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
	_, err := s.Compact(context.Background(), keepAll)
	require.NoError(t, err)
	_, err = os.Stat(indexPath(seg))
	assert.ErrorIs(t, err, os.ErrNotExist)
	segs := segments(t, filepath.Dir(filepath.Dir(seg)))
	require.Len(t, segs, 1)
	_, err = os.Stat(indexPath(segs[0]))
	require.NoError(t, err, "the merged segment's index")
	checkSame(t, s)
}

// BenchmarkRecordsMatching looks up one tool call id in a registry of
// 100k records, through its index and by reading it whole.
func BenchmarkRecordsMatching(b *testing.B) {
	s, _ := genStore(b, 100000)
	for _, bc := range []struct {
		name string
		keys []Key
	}{{"index", []Key{{FieldID, reggen.ToolCallID(4242)}}}, {"whole", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := s.RecordsMatching(context.Background(), bc.keys, func(r Record, _ Pos) error {
					if r.ToolCallID == reggen.ToolCallID(4242) {
						n++
					}
					return nil
				}, nil)
				if err != nil || n != 1 {
					b.Fatal(err, n)
				}
			}
		})
	}
}

// TestIndexLookupBounded checks that a lookup through an index reads the
// entries it needs and not the whole index: what it allocates is a small
// part of the index's size. (An index loaded whole made it allocate more
// than the index.)
func TestIndexLookupBounded(t *testing.T) {
	s, seg := genStore(t, 60000)
	checkSame(t, s)
	fi, err := os.Stat(indexPath(seg))
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(2<<20))
	keys := []Key{{FieldID, reggen.ToolCallID(4242)}}
	n := 0
	got := allocated(func() {
		require.NoError(t, s.RecordsMatching(t.Context(), keys, func(r Record, _ Pos) error {
			if r.ToolCallID == reggen.ToolCallID(4242) {
				n++
			}
			return nil
		}, nil))
	})
	assert.Equal(t, 1, n)
	assert.Less(t, got, uint64(fi.Size()/8), "allocated %d bytes for an index of %d", got, fi.Size())
}

// indexedStore returns a store made by genStore(n) and its segment, indexed,
// with the index's bytes.
func indexedStore(t *testing.T, n int) (*Store, string, []byte) {
	t.Helper()
	smallIndexes(t)
	s, seg := genStore(t, n)
	checkSame(t, s)
	b, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	return s, seg, b
}

// spillEarly makes indexes being built spill their parts past a few
// entries.
func spillEarly(t *testing.T) {
	old := maxHeld
	maxHeld = 1000
	t.Cleanup(func() { maxHeld = old })
}

// TestIndexBuildSpills checks that an index built in bounded memory, its
// keys and line offsets spilled to a temporary file in sorted runs and
// merged, is the one built in memory, byte for byte, and finds the same.
func TestIndexBuildSpills(t *testing.T) {
	s, seg, _ := indexedStore(t, 3000)
	checkSpills(t, s, seg)
	checkSame(t, s)
}

// checkSpills checks that the index of seg, made again with its parts
// spilled past a few entries, is the one it has, made in memory, byte
// for byte, and finds the same.
func checkSpills(t *testing.T, s *Store, seg string) {
	t.Helper()
	inMemory, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	require.NoError(t, os.Remove(indexPath(seg)))
	spillEarly(t)
	checkSame(t, s)
	spilled, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	assert.Equal(t, inMemory, spilled)
}

// TestIndexManyAlways checks the index of a segment of many lines that
// are not records: built in bounded memory (their numbers spilled) it is
// the one built in memory, byte for byte; lookups through it find what a
// whole read finds and tell the same bad lines; and a lookup that would
// hold more line numbers than maxLookupLines reads the segment whole,
// finding the same; a listing's overlay does not count them.
func TestIndexManyAlways(t *testing.T) {
	smallIndexes(t)
	s, seg := genStore(t, 3000)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	var mixed []byte
	for i, l := range bytes.SplitAfter(b, []byte("\n")) {
		mixed = append(mixed, l...)
		if i%2 == 0 && len(l) > 0 {
			mixed = append(mixed, "{}\n"...)
		}
	}
	require.NoError(t, os.WriteFile(seg, mixed, 0o600))
	checkSame(t, s)
	checkSpills(t, s, seg)
	_, bad := scan(t, s)
	assert.Len(t, bad, bytes.Count(mixed, []byte("{}\n"))+2, "the listing tells each line that is not a record")

	old := maxLookupLines
	maxLookupLines = 100
	t.Cleanup(func() { maxLookupLines = old })
	checkSame(t, s)

	// Nor does a listing's overlay hold their numbers, or count them
	// against its bound: lines of an artifact, which they are none of.
	oldOverlay := maxOverlay
	maxOverlay = 100 * int64(minRecordLine)
	t.Cleanup(func() { maxOverlay = oldOverlay })
	require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
	l, err := s.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	defer l.Close()
	assert.NotNil(t, l.ov, "listed through the index, the new segment overlaid")
}

// TestIndexLines checks index.lines: the lines of its keys, and with
// always those always read, in order, each once; past atMost of them,
// errManyLines, a line of two keys counted once.
func TestIndexLines(t *testing.T) {
	s, _, _ := indexedStore(t, 3000)
	files, err := s.openRegistry(t.Context())
	require.NoError(t, err)
	defer closeAll(files)
	ix := s.loadIndex(t.Context(), files[0])
	require.NotNil(t, ix)
	defer ix.close()

	read := []Key{{FieldTool, "read"}}
	var want []uint32
	for _, at := range lookup(t, s, nil, func(r Record) bool { return r.Tool == "read" }).at {
		want = append(want, uint32(at.Line-1))
	}
	want = slices.Compact(want)
	n := len(want)
	require.Greater(t, n, 100)
	got, err := ix.lines(read, n, false)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = ix.lines(read, n-1, false)
	assert.ErrorIs(t, err, errManyLines)
	got, err = ix.lines(append(read, read...), n, false)
	require.NoError(t, err)
	assert.Equal(t, want, got, "a line of two keys, once")

	require.EqualValues(t, 2, ix.nalways, "genStore's two lines that are not records")
	got, err = ix.lines(read, n+2, true)
	require.NoError(t, err)
	assert.Len(t, got, n+2)
	assert.True(t, slices.IsSorted(got))
	_, err = ix.lines(read, n+1, true)
	assert.ErrorIs(t, err, errManyLines)
	_, err = ix.lines(nil, 1, true)
	assert.ErrorIs(t, err, errManyLines)
	got, err = ix.lines(nil, 1, false)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestIndexOldVersion checks that an index of the earlier format is
// replaced, not read.
func TestIndexOldVersion(t *testing.T) {
	s, seg, b := indexedStore(t, 2000)
	old := slices.Clone(b)
	old[8] = 1 // the version
	require.NoError(t, os.WriteFile(indexPath(seg), old, 0o600))
	checkSame(t, s)
	now, err := os.ReadFile(indexPath(seg))
	require.NoError(t, err)
	assert.Equal(t, b, now, "written anew")
}

// indexPath returns the path of the index of the segment at seg.
func indexPath(seg string) string { return strings.TrimSuffix(seg, segmentExt) + indexExt }
