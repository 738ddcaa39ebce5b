// Package faulty wraps a store.Backend to fail its calls on demand, for
// tests: "fail the k-th call with ENOSPC", "fail every Save of a segment",
// "kill the process at the k-th call". The crash and error sweeps of the
// packages above store run through it, against any backend.
//
// Only tests import it. A Backend counts calls in the order they are made,
// so a test that wants the k-th call to be the same one on every run keeps
// the code under test sequential.
package faulty

import (
	"context"
	"io"
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Method names a method of store.Backend.
type Method string

// The methods a hook sees.
const (
	Save   Method = "save"
	Load   Method = "load"
	Stat   Method = "stat"
	List   Method = "list"
	Remove Method = "remove"
	Touch  Method = "touch"
	Flush  Method = "flush"
)

// Call is one call about to be made: the N-th (from 1) of this Backend.
type Call struct {
	N      int
	Method Method
	Handle store.Handle // zero for List and Flush
}

// Backend is a store.Backend that asks Hook before each call; a Hook that
// returns an error fails the call with it, and the wrapped backend never
// sees the call. Hook may also kill the process, for crash tests.
type Backend struct {
	store.Backend
	Hook func(Call) error

	mu    sync.Mutex
	n     int
	calls []Call
}

// New wraps b.
func New(b store.Backend, hook func(Call) error) *Backend {
	return &Backend{Backend: b, Hook: hook}
}

// Calls returns the calls made so far, failed or not, in order.
func (f *Backend) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

func (f *Backend) ask(m Method, h store.Handle) error {
	f.mu.Lock()
	f.n++
	c := Call{N: f.n, Method: m, Handle: h}
	f.calls = append(f.calls, c)
	hook := f.Hook
	f.mu.Unlock()
	if hook == nil {
		return nil
	}
	return hook(c)
}

// Save asks the hook, then saves.
func (f *Backend) Save(ctx context.Context, h store.Handle, write func(io.Writer) error) error {
	if err := f.ask(Save, h); err != nil {
		return err
	}
	return f.Backend.Save(ctx, h, write)
}

// Load asks the hook, then loads.
func (f *Backend) Load(ctx context.Context, h store.Handle, offset, length int64) (io.ReadCloser, error) {
	if err := f.ask(Load, h); err != nil {
		return nil, err
	}
	return f.Backend.Load(ctx, h, offset, length)
}

// Stat asks the hook, then stats.
func (f *Backend) Stat(ctx context.Context, h store.Handle) (store.FileInfo, error) {
	if err := f.ask(Stat, h); err != nil {
		return store.FileInfo{}, err
	}
	return f.Backend.Stat(ctx, h)
}

// List asks the hook, then lists.
func (f *Backend) List(ctx context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	if err := f.ask(List, store.Handle{Kind: k, Name: prefix}); err != nil {
		return err
	}
	return f.Backend.List(ctx, k, prefix, fn)
}

// Remove asks the hook, then removes.
func (f *Backend) Remove(ctx context.Context, h store.Handle) error {
	if err := f.ask(Remove, h); err != nil {
		return err
	}
	return f.Backend.Remove(ctx, h)
}

// Touch asks the hook, then touches.
func (f *Backend) Touch(ctx context.Context, h store.Handle) error {
	if err := f.ask(Touch, h); err != nil {
		return err
	}
	return f.Backend.Touch(ctx, h)
}

// Flush asks the hook, then flushes.
func (f *Backend) Flush(ctx context.Context, must ...store.Handle) error {
	if err := f.ask(Flush, store.Handle{}); err != nil {
		return err
	}
	return f.Backend.Flush(ctx, must...)
}

// Unwrap returns the wrapped backend, so that store.As finds its optional
// interfaces (its lock, its sweeper).
func (f *Backend) Unwrap() store.Backend { return f.Backend }
