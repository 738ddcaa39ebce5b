// Package fault injects failures and crashes into the file operations that
// package safefile reports through safefile.Hook, for tests: "fail the k-th
// operation with ENOSPC", "kill this process at the k-th operation". It
// also records the operations, so that a test can learn how many there are
// and which kind each one is.
//
// Only tests import it. An Injector counts operations in the order the
// hook sees them, so a test that wants the k-th operation to be the same
// one on every run keeps the code under test sequential (migrate.Options
// Jobs 1).
package fault

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// Action is what an Injector does at its operation.
type Action int

// The actions.
const (
	Fail  Action = iota // fail the operation with Err; it is not made
	Crash               // kill the process with SIGKILL before the operation
	Tear                // for a write, write the first half of its bytes, then Crash; else Crash
)

// Injector acts on the At-th operation (1-based) reported to safefile.Hook.
// The zero value only records.
type Injector struct {
	At     int
	Action Action
	Err    syscall.Errno // for Fail

	mu  sync.Mutex
	ops []Op
	hit *Op
}

// Op is a recorded operation: its number, kind and path.
type Op struct {
	N    int
	Kind safefile.Kind
	Path string
}

func (o Op) String() string { return fmt.Sprintf("#%d %s %s", o.N, o.Kind, o.Path) }

// Install makes in the hook of package safefile until the returned
// function is called.
func (in *Injector) Install() (uninstall func()) {
	safefile.Hook = in.hook
	return func() { safefile.Hook = nil }
}

func (in *Injector) hook(op safefile.Op) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	rec := Op{N: len(in.ops) + 1, Kind: op.Kind, Path: op.Path}
	in.ops = append(in.ops, rec)
	if rec.N != in.At {
		return nil
	}
	in.hit = &rec
	switch in.Action {
	case Tear:
		if op.Kind == safefile.KindWrite && len(op.Data) > 1 {
			_, _ = op.File.Write(op.Data[:len(op.Data)/2])
		}
		fallthrough
	case Crash:
		Kill()
	}
	return &fs.PathError{Op: string(op.Kind), Path: op.Path, Err: in.Err}
}

// Kill kills the running process with SIGKILL: no deferred function runs,
// no buffer is flushed, as with kill -9 from outside.
func Kill() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for {
		time.Sleep(time.Second) // until the signal lands
	}
}

// Ops returns the operations seen so far.
func (in *Injector) Ops() []Op {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Op(nil), in.ops...)
}

// Hit returns the operation the injector acted on, if it was reached.
func (in *Injector) Hit() (Op, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.hit == nil {
		return Op{}, false
	}
	return *in.hit, true
}
