package safefile

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirSyncerShares: writers that ask while an fsync runs share the
// next one; when that shared fsync fails, every writer it covered gets
// the error, not only the one that made it.
func TestDirSyncerShares(t *testing.T) {
	for _, fail := range []bool{false, true} {
		dir := t.TempDir()
		var syncs atomic.Int32
		boom := errors.New("boom")
		Hook = func(op Op) error {
			if op.Kind != KindSyncDir {
				return nil
			}
			switch syncs.Add(1) {
			case 1:
				time.Sleep(100 * time.Millisecond) // the others ask meanwhile
			case 2:
				if fail {
					return boom
				}
			}
			return nil
		}
		var s DirSyncer
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i > 0 {
					time.Sleep(20 * time.Millisecond)
				}
				errs[i] = s.Sync(dir)
			}()
		}
		wg.Wait()
		Hook = nil
		assert.Equal(t, int32(2), syncs.Load(), "fail=%v: the first fsync, then one for the writers that waited", fail)
		assert.NoError(t, errs[0])
		for i := 1; i < n; i++ {
			if fail {
				assert.ErrorIs(t, errs[i], boom, "writer %d was covered by the failed fsync", i)
			} else {
				assert.NoError(t, errs[i])
			}
		}
		require.NoError(t, s.Sync(dir))
	}
}
