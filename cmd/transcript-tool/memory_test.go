package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		live, growth, want int64
	}{
		{0, 200, heapFloor},
		{20 * mib, 200, heapFloor},
		{24 * mib, 200, heapFloor},
		{26 * mib, 200, 42 * mib},   // the headroom, not twice the live heap
		{32 * mib, 200, 48 * mib},   // where the two meet
		{100 * mib, 200, 184 * mib}, // nearly twice
		{1 << 30, 200, 2<<30 - 16*mib},
		{100 * mib, 125, 116 * mib},
	} {
		assert.Equal(t, tt.want, limitFor(uint64(tt.live), tt.growth), "live %d MiB, growth %d%%", tt.live/mib, tt.growth)
	}
}

// tuneForTest turns the tuner on for t, and the collector's settings
// back as they were after it; it skips t where the environment keeps the
// tuner off.
func tuneForTest(t *testing.T) {
	t.Helper()
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: the tuner stays off")
	}
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	oldRate := runtime.MemProfileRate
	t.Cleanup(func() {
		runtime.MemProfileRate = oldRate
		heapGrowth.Store(0) // the tuner stops at its next collection
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	tuneMemory()
}

// TestMemoryTuner: the soft limit follows the live heap after each
// collection, up past the floor when a run holds much, back down to it
// when it no longer does, so that a run whose live data outgrows the
// floor is never collected back to back.
func TestMemoryTuner(t *testing.T) {
	tuneForTest(t)
	require.Equal(t, int64(heapFloor), debug.SetMemoryLimit(-1))

	held := make([][]byte, 96)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	limit := func() int64 {
		runtime.GC()
		return debug.SetMemoryLimit(-1)
	}
	require.Eventually(t, func() bool { return limit() >= 2*96<<20-heapHeadroom }, 10*time.Second, 10*time.Millisecond,
		"the limit stays at %d with 96 MiB live", debug.SetMemoryLimit(-1))
	runtime.KeepAlive(held)
	held = nil
	require.Eventually(t, func() bool { return limit() < 2*96<<20-heapHeadroom }, 10*time.Second, 10*time.Millisecond,
		"the limit stays at %d with nothing held", debug.SetMemoryLimit(-1))
	assert.Nil(t, held)
}
