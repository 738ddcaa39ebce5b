package extsort

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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

// TestTable: a table finds every record added, the first of those with a
// key added twice, and no record for a key between two of them, before
// the first or after the last, at the edges of its blocks and of its
// writes (sizes around multiples of them, looked up in order and out of
// it), and gives back every record in order.
func TestTable(t *testing.T) {
	const size, keyLen = 9, 8
	keyOf := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(2*i+1)) } // even keys are never added
	for _, per := range []int{5, tableWrite/size + 1} {
		perWrite := max(tableWrite/(size*per), 1)
		for _, n := range []int{0, 1, per - 1, per, per + 1, 3*per - 1, 3*per + 1, 2*perWrite*per + 3} {
			t.Run(fmt.Sprintf("%d/%d", per, n), func(t *testing.T) {
				var sp Spill
				defer sp.Close()
				tb := NewTable(&sp, size, keyLen, per)
				var want [][]byte
				for i := range n {
					rec := append(keyOf(i), byte(i))
					tb.Add(rec)
					tb.Add(append(keyOf(i), 0xff)) // dropped
					want = append(want, rec)
				}
				require.NoError(t, tb.Done())
				require.Equal(t, int64(n), tb.Len())
				find := func(i int) {
					got, ok, err := tb.Find(keyOf(i))
					require.NoError(t, err)
					require.True(t, ok, "record %d of %d", i, n)
					require.Equal(t, want[i], got, "record %d of %d", i, n)
					got, ok, err = tb.Find(binary.BigEndian.AppendUint64(nil, uint64(2*i)))
					require.NoError(t, err)
					require.False(t, ok, "a key between records %d and %d: %x", i-1, i, got)
				}
				for i := range n {
					find(i)
				}
				r := rand.New(rand.NewPCG(uint64(per), uint64(n)))
				for range min(n, 300) {
					find(r.IntN(n))
				}
				for _, key := range [][]byte{make([]byte, keyLen), keyOf(n), bytes.Repeat([]byte{0xff}, keyLen)} {
					_, ok, err := tb.Find(key)
					require.NoError(t, err)
					require.False(t, ok, "%x", key)
				}
				var got [][]byte
				rd := tb.Reader()
				for rec, ok := rd.Next(); ok; rec, ok = rd.Next() {
					got = append(got, slices.Clone(rec))
				}
				require.NoError(t, rd.Err())
				assert.Equal(t, want, got)
			})
		}
	}
}

// TestTableFailures: a key added out of order fails Done, and a table
// whose spill file cannot be read says so to Find and to its reader.
func TestTableFailures(t *testing.T) {
	var sp Spill
	defer sp.Close()
	tb := NewTable(&sp, 2, 1, 4)
	tb.Add([]byte{2, 0})
	tb.Add([]byte{1, 0})
	require.ErrorIs(t, tb.Done(), errTableOrder)

	tb = NewTable(&sp, 2, 1, 4)
	for i := range 100 {
		tb.Add([]byte{byte(i), 0})
	}
	require.NoError(t, tb.Done())
	_, ok, err := tb.Find([]byte{50})
	require.NoError(t, err)
	require.True(t, ok)
	sp.Close()
	_, _, err = tb.Find([]byte{10})
	require.Error(t, err, "a block not read yet")
	rd := tb.Reader()
	_, ok = rd.Next()
	require.False(t, ok)
	require.Error(t, rd.Err())
}
