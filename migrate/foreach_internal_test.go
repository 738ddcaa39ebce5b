package migrate

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/session"
)

// TestForEachSlots: no more files than slots are worked on at once; a
// file waiting for the disk gives its slot to the next, with at most
// workersPerSlot workers a slot; with one slot, files go one after the
// other.
func TestForEachSlots(t *testing.T) {
	for _, tt := range []struct{ jobs, inFlight int }{{1, 1}, {2, 2 * workersPerSlot}} {
		t.Run(strconv.Itoa(tt.jobs), func(t *testing.T) {
			var (
				mu                         sync.Mutex
				busy, inFlight             int
				maxBusy, maxInFlight, done int
			)
			step := func(dBusy, dInFlight int) {
				mu.Lock()
				defer mu.Unlock()
				busy, inFlight = busy+dBusy, inFlight+dInFlight
				maxBusy, maxInFlight = max(maxBusy, busy), max(maxInFlight, inFlight)
			}
			inputs := make([]session.Input, 24)
			results := forEach(context.Background(), inputs, tt.jobs, func(in session.Input, wait func()) FileResult {
				step(1, 1)
				time.Sleep(time.Millisecond)
				step(-1, 0)
				wait()
				time.Sleep(10 * time.Millisecond) // the disk
				step(0, -1)
				mu.Lock()
				done++
				mu.Unlock()
				return FileResult{Status: StatusMigrated}
			})
			assert.Len(t, results, len(inputs))
			assert.Equal(t, len(inputs), done)
			assert.LessOrEqual(t, maxBusy, tt.jobs, "files worked on at once")
			assert.LessOrEqual(t, maxInFlight, tt.inFlight, "files in flight at once")
			if tt.jobs > 1 {
				assert.Greater(t, maxInFlight, tt.jobs, "no file took the slot of one waiting for the disk")
			}
		})
	}
}
