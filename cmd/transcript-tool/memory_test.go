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
	assert.Equal(t, int64(heapFloor), limitFor(0, 200))
	assert.Equal(t, int64(heapFloor), limitFor(heapFloor/2, 200), "twice a live heap of half the floor")
	assert.Equal(t, int64(200*mib), limitFor(100*mib, 200))
	assert.Equal(t, int64(125*mib), limitFor(100*mib, 125))
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
	t.Cleanup(func() {
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
	require.Eventually(t, func() bool { return limit() >= 2*96<<20 }, 10*time.Second, 10*time.Millisecond,
		"the limit stays at %d with 96 MiB live", debug.SetMemoryLimit(-1))
	runtime.KeepAlive(held)
	held = nil
	require.Eventually(t, func() bool { return limit() < 2*96<<20 }, 10*time.Second, 10*time.Millisecond,
		"the limit stays at %d with nothing held", debug.SetMemoryLimit(-1))
	assert.Nil(t, held)
}
