package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/mem"
)

// TestAppendKnownBounded: what Append keeps of the registry's records, to
// tell a record it holds already, takes memory that does not grow with
// the registry. (Their keys in a map took some 30 bytes a record: 3 MB
// here, 50 MB of RSS for a million records.)
func TestAppendKnownBounded(t *testing.T) {
	const n = 100000
	s := newStore(t)
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"hash":"%064x","size":1,"media":"m","createdAt":""}`+"\n", i)
	}
	appendRaw(t, s.RegistryPath(), b.String())
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	require.NoError(t, s.Append(t.Context(), []Record{record(1)}))
	grown := int64(live()) - int64(before)
	runtime.KeepAlive(s)
	t.Logf("held %d bytes", grown)
	assert.Less(t, grown, int64(3<<19), "Append holds %d bytes after reading a registry of %d records", grown, n)
	// A record of the registry is still told apart.
	mine := readRegistry(t, s)
	require.NoError(t, s.Append(t.Context(), []Record{{Hash: fmt.Sprintf("%064x", n/3), Size: 1, Media: "m", CreatedAt: "2026-01-01T00:00:00Z"}}))
	assert.Equal(t, mine, readRegistry(t, s), "a record of the registry appended again")
}

// keysSpillEarly makes known keep a few keys in memory, and the rest in
// runs it merges.
func keysSpillEarly(t *testing.T, n int) {
	old := maxKnownHeld
	maxKnownHeld = n
	t.Cleanup(func() { maxKnownHeld = old })
}

// TestKeySet checks a keySet against a map, through runs and merges.
func TestKeySet(t *testing.T) {
	keysSpillEarly(t, 7)
	rnd := rand.New(rand.NewPCG(1, 2))
	ks := newKeySet()
	defer ks.close()
	want := map[recordKey]bool{}
	key := func() recordKey {
		var k recordKey
		k[0] = byte(rnd.IntN(3)) // many keys sharing their first bytes
		k[15] = byte(rnd.IntN(256))
		k[7] = byte(rnd.IntN(8))
		return k
	}
	for range 5000 {
		k := key()
		require.NoError(t, ks.add(k))
		want[k] = true
		q := key()
		got, err := ks.has(q)
		require.NoError(t, err)
		require.Equal(t, want[q], got, "%x", q)
	}
	assert.Less(t, len(ks.runs), 12, "runs not merged")
	for k := range want {
		got, err := ks.has(k)
		require.NoError(t, err)
		require.True(t, got, "%x", k)
	}
}

// registryFileData returns the bytes of each of b's registry files.
func registryFileData(t *testing.T, b store.Backend) [][]byte {
	t.Helper()
	ctx := context.Background()
	hs := []store.Handle{legacy}
	require.NoError(t, b.List(ctx, store.Segment, "", func(fi store.FileInfo) error {
		if isSegment(fi.Name) {
			hs = append(hs, store.Handle{Kind: store.Segment, Name: fi.Name})
		}
		return nil
	}))
	var out [][]byte
	for _, h := range hs {
		f, err := store.OpenFile(ctx, b, h)
		if err != nil {
			require.ErrorIs(t, err, store.ErrNotExist)
			continue
		}
		data, err := io.ReadAll(io.NewSectionReader(f, 0, f.Stat().Size))
		f.Close()
		require.NoError(t, err)
		out = append(out, data)
	}
	return out
}

// registryKeys returns the keys of the records of every whole line of
// b's registry files, read as they are: what an Append must not append
// again.
func registryKeys(t *testing.T, b store.Backend) map[recordKey]bool {
	t.Helper()
	keys := map[recordKey]bool{}
	var dec decoder
	for _, data := range registryFileData(t, b) {
		for line := range bytes.Lines(data) {
			var r Record
			if !bytes.HasSuffix(line, []byte("\n")) || dec.decode(line, &r) != nil || r.Hash == "" {
				continue
			}
			k, err := keyOf(r)
			require.NoError(t, err)
			keys[k] = true
		}
	}
	return keys
}

// registryLines returns every line of b's registry files, sorted.
func registryLines(t *testing.T, b store.Backend) []string {
	t.Helper()
	var lines []string
	for _, data := range registryFileData(t, b) {
		for line := range strings.Lines(string(data)) {
			lines = append(lines, line)
		}
	}
	slices.Sort(lines)
	return lines
}

// added returns the lines of after that are not in before (both sorted),
// as many times as they are more.
func added(before, after []string) []string {
	var out []string
	for _, l := range after {
		if i, ok := slices.BinarySearch(before, l); ok {
			before = slices.Delete(before, i, i+1)
			continue
		}
		out = append(out, l)
	}
	return out
}

// wantAppended returns the lines an Append of recs should append to a
// registry holding the records of keys: those of records it does not
// hold, each once.
func wantAppended(t *testing.T, keys map[recordKey]bool, recs []Record) []string {
	t.Helper()
	var out []string
	for _, g := range group(recs) {
		parts, err := fit(g)
		require.NoError(t, err)
		for _, p := range parts {
			k, ok := keyOfLine(p.line)
			require.True(t, ok)
			if !keys[k] {
				keys[k] = true
				out = append(out, string(p.line)+"\n")
			}
		}
	}
	slices.Sort(out)
	return out
}

// randomRecords returns a few records drawn from a small set, so that
// many are held already, with any creation time.
func randomRecords(rnd *rand.Rand) []Record {
	recs := make([]Record, 1+rnd.IntN(5))
	for i := range recs {
		r := record(rnd.IntN(8))
		r.Source = fmt.Sprintf("/t/%d.jsonl", rnd.IntN(3))
		r.Site = fmt.Sprintf("site%d", rnd.IntN(3))
		r.CreatedAt = fmt.Sprintf("2026-01-0%dT00:00:00Z", 1+rnd.IntN(9))
		recs[i] = r
	}
	return recs
}

// TestAppendRandomAsWhole checks, over random sequences of Appends by
// several writers, with compactions, indexes, lines other tools append
// and writers started anew between them, that each Append appends
// exactly the lines of the records the registry does not hold, as read
// whole: with known spilled to runs past a few keys.
func TestAppendRandomAsWhole(t *testing.T) {
	keysSpillEarly(t, 5)
	smallIndexes(t)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			ctx := context.Background()
			b := local.New(t.TempDir())
			writers := []*Store{New(b), New(b), New(b)}
			for step := range 150 {
				w := writers[rnd.IntN(len(writers))]
				switch n := rnd.IntN(20); {
				case n == 0:
					_, err := w.Compact(ctx, func(r Record) bool { return rnd.IntN(4) > 0 })
					require.NoError(t, err)
				case n == 1:
					require.NoError(t, w.RecordsMatching(ctx, []Key{{FieldHash, record(rnd.IntN(8)).Hash}},
						func(Record, Pos) error { return nil }, nil)) // writes indexes
				case n == 2:
					appendRaw(t, w.RegistryPath(), line(t, randomRecords(rnd)[0]))
				case n == 3:
					writers[rnd.IntN(len(writers))] = New(b)
				default:
					recs := randomRecords(rnd)
					want := wantAppended(t, registryKeys(t, b), recs)
					before := registryLines(t, b)
					require.NoError(t, w.Append(ctx, recs))
					assert.Equal(t, want, added(before, registryLines(t, b)), "step %d", step)
				}
			}
		})
	}
}

// TestAppendWholeRandomAsWhole is TestAppendRandomAsWhole over a backend
// that cannot append in place, for one writer, which reads the registry
// once there: each Append saves a segment of the lines of the records the
// registry does not hold, or none.
func TestAppendWholeRandomAsWhole(t *testing.T) {
	keysSpillEarly(t, 5)
	rnd := rand.New(rand.NewPCG(3, 7))
	ctx := context.Background()
	b := objectStorage{mem.New()}
	w := New(b)
	putAll(t, w, 0, 1, 2, 3, 4, 5, 6, 7)
	for step := range 150 {
		if rnd.IntN(30) == 0 {
			_, err := w.Compact(ctx, keepAll)
			require.NoError(t, err)
			continue
		}
		recs := randomRecords(rnd)
		want := wantAppended(t, registryKeys(t, b), recs)
		before := registryLines(t, b)
		require.NoError(t, w.Append(ctx, recs))
		assert.Equal(t, want, added(before, registryLines(t, b)), "step %d", step)
	}
}
