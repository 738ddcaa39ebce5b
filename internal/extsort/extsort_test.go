package extsort

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSorter checks that records sorted in runs spilled to the temporary
// file and merged come out as those sorted in memory, duplicates kept,
// and that a sorter that never reaches its limit spills nothing.
func TestSorter(t *testing.T) {
	const size = 12
	r := rand.New(rand.NewPCG(1, 2))
	var want [][]byte
	for range 5000 {
		rec := binary.BigEndian.AppendUint64(nil, r.Uint64N(1000))
		want = append(want, binary.BigEndian.AppendUint32(rec, r.Uint32()))
	}
	for _, limit := range []int{size * 7, 1 << 20} {
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
