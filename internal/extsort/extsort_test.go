package extsort

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSorter checks that records sorted in runs spilled to the temporary
// file and merged come out as those sorted in memory, duplicates kept,
// and that a sorter that never reaches its limit spills nothing: records
// that share their first eight bytes, and records shorter than eight.
func TestSorter(t *testing.T) {
	t.Run("12", func(t *testing.T) { testSorter(t, 12) })
	t.Run("5", func(t *testing.T) { testSorter(t, 5) })
}

func testSorter(t *testing.T, size int) {
	r := rand.New(rand.NewPCG(1, 2))
	var want [][]byte
	for range 5000 {
		rec := binary.BigEndian.AppendUint64(nil, r.Uint64N(1000))
		rec = binary.BigEndian.AppendUint32(rec, r.Uint32())
		want = append(want, rec[len(rec)-size:])
	}
	for _, limit := range []int{size * 7, size * 1000, 1 << 20} {
		var sp Spill
		s := NewSorter(size, limit, &sp)
		for _, rec := range want {
			s.Add(rec)
		}
		var got [][]byte
		require.NoError(t, s.Each(func(rec []byte) error {
			got = append(got, slices.Clone(rec))
			return nil
		}))
		require.NoError(t, sp.Err())
		assert.Equal(t, int64(len(want)), s.Len())
		assert.Equal(t, limit < len(want)*size, sp.f != nil, "spilled, limit %d", limit)
		sorted := slices.Clone(want)
		slices.SortFunc(sorted, bytes.Compare)
		assert.Equal(t, sorted, got, "limit %d", limit)
		sp.Close()
	}
}

// TestRanked checks that records added in a random order, some ranks
// missing, come out in the order of their ranks, whether their buckets
// were spilled or held.
func TestRanked(t *testing.T) {
	const n = 3000
	r := rand.New(rand.NewPCG(3, 4))
	recs := make([][]byte, n)
	var want [][]byte
	for i := range recs {
		if r.IntN(10) == 0 {
			continue // a rank no record has
		}
		recs[i] = make([]byte, r.IntN(300))
		for j := range recs[i] {
			recs[i][j] = byte(r.Uint32())
		}
		want = append(want, recs[i])
	}
	order := r.Perm(n)
	for _, c := range []struct {
		per   int64
		limit int
	}{{7, 1}, {1000, 1 << 30}, {n, 64 << 10}} {
		rk := NewRanked(n, c.per, c.limit)
		for _, i := range order {
			if recs[i] != nil {
				rk.Add(int64(i), recs[i])
			}
		}
		var got [][]byte
		require.NoError(t, rk.Each(func(rec []byte) error {
			got = append(got, slices.Clone(rec))
			return nil
		}))
		assert.Equal(t, c.limit < 1<<30, rk.sp.f != nil, "spilled, limit %d", c.limit)
		assert.Equal(t, want, got, "%d a bucket, limit %d", c.per, c.limit)
		rk.Close()
	}
}

// TestRankedStops checks that Each stops at, and returns, the first
// error of its function, and the error of reading a spilled bucket, the
// buckets after it unread.
func TestRankedStops(t *testing.T) {
	const n = 1000
	rk := NewRanked(n, 10, 1)
	defer rk.Close()
	for i := range n {
		rk.Add(int64(i), []byte{byte(i)})
	}
	boom := errors.New("boom")
	calls := 0
	err := rk.Each(func([]byte) error {
		if calls++; calls == 25 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 25, calls)

	rk = NewRanked(n, 10, 1)
	for i := range n {
		rk.Add(int64(i), []byte{byte(i)})
	}
	require.NoError(t, rk.sp.f.Close()) // every bucket is spilled
	calls = 0
	err = rk.Each(func([]byte) error { calls++; return nil })
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.Zero(t, calls)
}

// BenchmarkSorter sorts 200k records of 80 bytes, the size of a place
// of the registry's listing, in runs of 2 MiB.
func BenchmarkSorter(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	recs := make([]byte, 80*200000)
	for i := range recs {
		recs[i] = byte(r.Uint32())
	}
	for b.Loop() {
		var sp Spill
		s := NewSorter(80, 2<<20, &sp)
		for rec := recs; len(rec) > 0; rec = rec[80:] {
			s.Add(rec[:80])
		}
		n := 0
		if err := s.Each(func([]byte) error { n++; return nil }); err != nil || n != 200000 {
			b.Fatal(err, n)
		}
		sp.Close()
	}
}
