package s3test

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Memory is the peak memory of this process over a stretch of a test.
type Memory struct {
	// HeapInuse and Sys are runtime.MemStats': the Go heap's spans in use,
	// and all the memory the Go runtime holds from the system.
	HeapInuse, Sys uint64
	// RSS is the peak resident set size (Linux's VmHWM, reset at the
	// start where the kernel allows), 0 where unknown.
	RSS uint64
}

// WatchMemory samples this process's memory every 10ms until the returned
// function is called, which returns the peaks. The test's own allocations
// before the call count only as far as they stay live.
func WatchMemory(t testing.TB) func() Memory {
	runtime.GC()
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	var (
		mu   sync.Mutex
		peak Memory
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		mu.Lock()
		peak.HeapInuse = max(peak.HeapInuse, m.HeapInuse)
		peak.Sys = max(peak.Sys, m.Sys)
		mu.Unlock()
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	var once sync.Once
	finish := func() Memory {
		once.Do(func() {
			close(stop)
			<-done
			sample()
			peak.RSS = peakRSS()
		})
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
	t.Cleanup(func() { finish() })
	return finish
}

// peakRSS returns VmHWM of /proc/self/status in bytes, or 0.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
