package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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
// and after each collection the limit becomes the larger of heapFloor
// and the live heap times heapGrowth: on a small live heap, a collection
// every few tens of megabytes allocated; on a large one, a heap that
// grows in proportion to it.
const heapFloor = 40 << 20

// heapGrowth is the limit's multiple of the live heap, in percent: 200
// while the limit is tuned, 0 when it is not (see holdMore). tuneMu
// orders the tuner's setting of the limit and holdMore's: a collection
// finished as ls starts must not leave ls a limit near its live heap.
var (
	heapGrowth atomic.Int64
	tuneMu     sync.Mutex
)

// limitFor returns the soft memory limit for a live heap of live bytes
// growing by growth percent.
func limitFor(live uint64, growth int64) int64 {
	return max(heapFloor, int64(live/100)*growth)
}

// tuneMemory sets the heap's budget up unless the environment sets the
// collector's own.
func tuneMemory() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heapGrowth.Store(200)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(heapFloor)
	armTuner()
}

// holdMore is for a command whose live data grows with the store, not
// with a line: ls keeps every artifact of the registry to sort them (a
// million take some 250 MB, kept compact, see listing). Its heap grows by
// a quarter of its live data (GOGC=25), with no limit: a limit that close
// to the live heap has the runtime return memory to the system and fault
// it back in (a million-row ls took 3.7 s of system time with the limit at
// 1.25 times its live heap, 2.9 s without).
func holdMore() {
	tuneMu.Lock()
	defer tuneMu.Unlock()
	if heapGrowth.Swap(0) == 0 {
		return // the environment sets the collector's budget
	}
	debug.SetGCPercent(25)
	debug.SetMemoryLimit(math.MaxInt64)
}

// gcSentinel is garbage as soon as it is made: its finalizer runs after
// each collection, sets the limit for the live heap the collection left,
// and makes the next one.
type gcSentinel struct{ live []metrics.Sample }

func armTuner() {
	runtime.SetFinalizer(&gcSentinel{live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}, func(s *gcSentinel) {
		tuneMu.Lock()
		growth := heapGrowth.Load()
		if growth != 0 {
			metrics.Read(s.live)
			if s.live[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(limitFor(s.live[0].Value.Uint64(), growth))
			}
		}
		tuneMu.Unlock()
		if growth != 0 {
			armTuner()
		}
	})
}
