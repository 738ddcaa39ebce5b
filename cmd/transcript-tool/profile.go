package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/urfave/cli/v2"
)

// profileFlags are hidden global flags that write Go profiles of one run,
// for performance work on the real binary:
//
//	transcript-tool --cpuprofile cpu.out migrate DIR
//	go tool pprof bin/transcript-tool cpu.out
//
// An execution trace shows what the CPU profile cannot: where workers
// wait, in system calls or on locks, while a core is idle:
//
//	transcript-tool --trace trace.out migrate DIR
//	go tool trace -pprof=syscall trace.out >syscall.pprof
var profileFlags = []cli.Flag{
	&cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile to `FILE`"},
	&cli.StringFlag{Name: "memprofile", Hidden: true, Usage: "write a heap profile to `FILE` at exit"},
	&cli.StringFlag{Name: "trace", Hidden: true, Usage: "write an execution trace to `FILE`"},
}

// defaultMemProfileRate is the runtime's own sampling rate of heap
// profiles, one allocation every 512 KiB on average.
const defaultMemProfileRate = 512 << 10

// startProfiles starts the profiles the flags ask for and returns the
// function that ends them.
func startProfiles(c *cli.Context) (stop func() error, err error) {
	var cpu *os.File
	if p := c.String("cpuprofile"); p != "" {
		if cpu, err = os.Create(p); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, err
		}
	}
	var tr *os.File
	if p := c.String("trace"); p != "" {
		tr, err = os.Create(p)
		if err == nil {
			if err = trace.Start(tr); err != nil {
				tr.Close()
			}
		}
		if err != nil {
			if cpu != nil {
				pprof.StopCPUProfile()
				cpu.Close()
			}
			return nil, err
		}
	}
	mem := c.String("memprofile")
	if mem != "" {
		// Sampled from here on: tuneMemory turned sampling off at start.
		runtime.MemProfileRate = defaultMemProfileRate
	}
	return func() error {
		// Every profile is ended and written, whatever fails.
		var errs []error
		if tr != nil {
			trace.Stop()
			errs = append(errs, tr.Close())
		}
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if mem != "" {
			errs = append(errs, writeHeapProfile(mem))
		}
		return errors.Join(errs...)
	}, nil
}

// writeHeapProfile writes a heap profile, after a garbage collection, to
// the file named path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("write heap profile: %w", err)
	}
	return f.Close()
}
