package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The Go heap's budget, unless GOGC or GOMEMLIMIT sets another. A run
// over transcripts with lines of megabytes should stay near 64 MiB of
// memory (README, Benchmarks; the binary's own code and data, sonic's and
// the AWS SDK's, take some 23 MB of it), and a run over a few small
// files should not collect every few megabytes.
//
// A fixed soft limit (debug.SetMemoryLimit) does both until the live data
// outgrows it: per-file results of 100,000 sessions, a registry of a
// million records. The collector then runs back to back; a folder of
// 100,000 sessions spent more than half its CPU in it. GOGC alone bounds
// the heap relative to the live data, but collects as often on a small
// heap: GOGC=50 made check --store and verify some 60% slower on a
// folder of 8,000 sessions.
//
// So the collector runs when the heap reaches a soft limit (GOGC off),
// and after each collection the limit is set for the live heap it left
// (limitFor): the floor while the live heap is small, a collection every
// few tens of megabytes allocated; then the live heap plus a headroom
// that grows with it, so that the limit is about twice a large live heap.
const heapFloor = 40 << 20

// heapHeadroom is the least room the limit leaves above the live heap:
// the runtime's own overhead of a heap of some 30 MB (free and partly
// used spans, metadata) and a few megabytes to allocate before the next
// collection. Twice the live heap, the rule for large heaps, would give
// a run whose live heap is 26 MB (two migrate workers, each with its
// transcript's call table, the payload cache) a limit of 52 MiB, some
// 75 MiB of memory with the binary's mapped code; this one gives 42.
const heapHeadroom = 16 << 20

// heapGrowth is the limit's multiple of a large live heap, in percent:
// 200 while the limit is tuned, 0 when it is not (the tuner then stops
// at its next collection).
var heapGrowth atomic.Int64

// limitFor returns the soft memory limit for a live heap of live bytes
// growing by growth percent: the largest of the floor, the live heap plus
// heapHeadroom, and growth percent of it less heapHeadroom, which meet at
// a live heap of 32 MiB for a growth of 200.
func limitFor(live uint64, growth int64) int64 {
	l := int64(live)
	return max(heapFloor, l+heapHeadroom, l*growth/100-heapHeadroom)
}

// tuneMemory sets the heap's budget up unless the environment sets the
// collector's own, and turns off the sampling of allocations for heap
// profiles, whose records hold some 1.5 MB of a long run's memory
// (--memprofile turns it back on).
func tuneMemory() {
	runtime.MemProfileRate = 0
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heapGrowth.Store(200)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(heapFloor)
	armTuner()
}

// gcSentinel is garbage as soon as it is made: its finalizer runs after
// each collection, sets the limit for the live heap the collection left,
// and makes the next one.
type gcSentinel struct{ live []metrics.Sample }

func armTuner() {
	runtime.SetFinalizer(&gcSentinel{live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}, func(s *gcSentinel) {
		growth := heapGrowth.Load()
		if growth == 0 {
			return
		}
		metrics.Read(s.live)
		if s.live[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(limitFor(s.live[0].Value.Uint64(), growth))
		}
		armTuner()
	})
}
