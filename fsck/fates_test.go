package fsck

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/store"
)

// TestFatesBlocks: fates answers for every artifact what the sorters it
// merged said of it, and 0 for one they did not hold, at the edges of
// its blocks (sizes around multiples of fatesPerBlock, the first and last
// digest of a block, the digests just before and after each), whether
// the sorters spilled or not.
func TestFatesBlocks(t *testing.T) {
	digestOf := func(i uint64) store.Digest {
		var d store.Digest
		binary.BigEndian.PutUint64(d[:], 2*i+1) // even numbers are never held
		return d
	}
	for _, n := range []int{0, 1, fatesPerBlock - 1, fatesPerBlock, fatesPerBlock + 1, 3*fatesPerBlock - 1, 3 * fatesPerBlock, 3*fatesPerBlock + 1, 1000} {
		for _, limit := range []int{3 * digestSize, 1 << 20} {
			t.Run(fmt.Sprintf("%d/limit=%d", n, limit), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(n), uint64(limit)))
				var sp extsort.Spill
				defer sp.Close()
				sorters := [3]*extsort.Sorter{}
				for k := range sorters {
					sorters[k] = extsort.NewSorter(digestSize, limit, &sp)
				}
				want := map[store.Digest]byte{}
				for _, i := range r.Perm(n) {
					d := digestOf(uint64(i))
					fate := byte(1 + r.IntN(7)) // at least one sorter holds it
					for k, bit := range []byte{fateRemoved, fateLive, fatePresent} {
						if fate&bit != 0 {
							for range 1 + r.IntN(2) { // a digest added twice counts once
								sorters[k].Add(d[:])
							}
						}
					}
					want[d] = fate
				}
				f, err := newFates(&sp, sorters[0], sorters[1], sorters[2])
				require.NoError(t, err)
				for _, i := range r.Perm(n + 1) {
					d := digestOf(uint64(i))
					if i < n {
						require.Equal(t, want[d], f.of(d), "artifact %d of %d", i, n)
					}
					var before store.Digest
					binary.BigEndian.PutUint64(before[:], 2*uint64(i))
					require.Zero(t, f.of(before), "a digest between artifacts %d and %d", i-1, i)
				}
				var last store.Digest
				for k := range last {
					last[k] = 0xff
				}
				require.Zero(t, f.of(store.Digest{}))
				require.Zero(t, f.of(last))
				require.NoError(t, f.err)
			})
		}
	}
}
