// Package faulty wraps a store.Backend to fail its calls on demand, for
// tests: "fail the k-th call with ENOSPC", "fail every Save of a segment",
// "tear this append", "kill the process at the k-th call, losing what was
// not yet durable". The crash and error sweeps of the packages above store
// run through it, against any backend; it wraps the optional interfaces
// that write and read files (store.Appender, store.Opener,
// store.FileLocker) too, so that store.As finds them through it.
//
// Only tests import it. A Backend counts calls in the order they are made,
// so a test that wants the k-th call to be the same one on every run keeps
// the code under test sequential.
package faulty

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
	// The methods of the optional interfaces.
	Open         Method = "open"          // store.Opener
	CreateAppend Method = "create-append" // store.Appender
	OpenAppend   Method = "open-append"   // store.Appender
	Write        Method = "write"         // store.AppendFile
	Sync         Method = "sync"          // store.AppendFile
	LockFile     Method = "lock-file"     // store.FileLocker
)

// Call is one call about to be made: the N-th (from 1) of this Backend.
type Call struct {
	N      int
	Method Method
	Handle store.Handle // zero for List and Flush
	// Tear, for a Write, appends the first half of its bytes, as a write
	// cut short by a full disk or a crash: a hook calls it, then fails
	// the call or kills the process. Nil for other calls.
	Tear func()
}

// Backend is a store.Backend that asks Hook before each call; a Hook that
// returns an error fails the call with it, and the wrapped backend never
// sees the call. Hook may also kill the process, for crash tests.
//
// It also keeps what its callers were not yet told is durable (see
// Undurable), so that a crash test can drop it as a power loss would.
type Backend struct {
	store.Backend
	Hook func(Call) error

	mu    sync.Mutex
	n     int
	calls []Call
	// saved holds the files saved since the last Flush that succeeded;
	// appended, of each file appended to, how many bytes are written
	// and how many a Sync made durable (-1: not even its name).
	saved    map[store.Handle]bool
	appended map[store.Handle]*appended
}

type appended struct{ written, synced int64 }

// New wraps b.
func New(b store.Backend, hook func(Call) error) *Backend {
	return &Backend{Backend: b, Hook: hook, saved: map[store.Handle]bool{}, appended: map[store.Handle]*appended{}}
}

// Calls returns the calls made so far, failed or not, in order.
func (f *Backend) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

func (f *Backend) ask(m Method, h store.Handle) error { return f.call(Call{Method: m, Handle: h}) }

// call numbers c and asks the hook about it.
func (f *Backend) call(c Call) error {
	f.mu.Lock()
	f.n++
	c.N = f.n
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
	if err := f.Backend.Save(ctx, h, write); err != nil {
		return err
	}
	f.mu.Lock()
	f.saved[h] = true
	delete(f.appended, h)
	f.mu.Unlock()
	return nil
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
	f.mu.Lock()
	delete(f.saved, h)
	delete(f.appended, h)
	f.mu.Unlock()
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
	f.mu.Lock()
	saved := make([]store.Handle, 0, len(f.saved))
	for h := range f.saved {
		saved = append(saved, h)
	}
	f.mu.Unlock()
	if err := f.Backend.Flush(ctx, must...); err != nil {
		return err
	}
	f.mu.Lock()
	for _, h := range saved {
		delete(f.saved, h)
	}
	f.mu.Unlock()
	return nil
}

// Unwrap returns the wrapped backend, so that store.As finds its optional
// interfaces (its lock, its sweeper).
func (f *Backend) Unwrap() store.Backend { return f.Backend }

// Decorate wraps c, an optional interface of the wrapped backend that
// store.As found, so that the calls of Opener, Appender and FileLocker
// and of the files they open are asked about too; others (a lock) are
// passed as they are.
func (f *Backend) Decorate(c any) any {
	switch c.(type) {
	case store.Opener, store.Appender, store.FileLocker, store.UnchangedRemover:
		return capabilities{f, c}
	}
	return c
}

// capabilities is an optional interface of the wrapped backend, which
// As takes for the one it looks for: it has the methods of them all.
type capabilities struct {
	f *Backend
	c any
}

var (
	_ store.Opener           = capabilities{}
	_ store.Appender         = capabilities{}
	_ store.FileLocker       = capabilities{}
	_ store.UnchangedRemover = capabilities{}
)

// Open asks the hook, then opens.
func (c capabilities) Open(ctx context.Context, h store.Handle) (store.File, error) {
	if err := c.f.ask(Open, h); err != nil {
		return nil, err
	}
	return c.c.(store.Opener).Open(ctx, h)
}

// RemoveUnchanged asks the hook, as for Remove, then removes.
func (c capabilities) RemoveUnchanged(ctx context.Context, h store.Handle, seen store.FileInfo) (bool, error) {
	if err := c.f.ask(Remove, h); err != nil {
		return false, err
	}
	removed, err := c.c.(store.UnchangedRemover).RemoveUnchanged(ctx, h, seen)
	if removed {
		c.f.mu.Lock()
		delete(c.f.saved, h)
		delete(c.f.appended, h)
		c.f.mu.Unlock()
	}
	return removed, err
}

// LockFile asks the hook, then locks.
func (c capabilities) LockFile(ctx context.Context, h store.Handle) (io.Closer, error) {
	if err := c.f.ask(LockFile, h); err != nil {
		return nil, err
	}
	return c.c.(store.FileLocker).LockFile(ctx, h)
}

// CreateAppend asks the hook, then creates.
func (c capabilities) CreateAppend(ctx context.Context, h store.Handle) (store.AppendFile, error) {
	if err := c.f.ask(CreateAppend, h); err != nil {
		return nil, err
	}
	af, err := c.c.(store.Appender).CreateAppend(ctx, h)
	if err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	c.f.appended[h] = &appended{synced: -1}
	delete(c.f.saved, h)
	c.f.mu.Unlock()
	return &appendFile{af, c.f, h}, nil
}

// OpenAppend asks the hook, then opens.
func (c capabilities) OpenAppend(ctx context.Context, h store.Handle) (store.AppendFile, error) {
	if err := c.f.ask(OpenAppend, h); err != nil {
		return nil, err
	}
	af, err := c.c.(store.Appender).OpenAppend(ctx, h)
	if err != nil {
		return nil, err
	}
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if c.f.appended[h] == nil {
		// Made before this Backend saw it: durable as it is.
		fi, err := af.Stat()
		if err != nil {
			af.Close()
			return nil, err
		}
		c.f.appended[h] = &appended{written: fi.Size, synced: fi.Size}
	}
	return &appendFile{af, c.f, h}, nil
}

// appendFile asks the hook before each Write and Sync.
type appendFile struct {
	store.AppendFile
	f *Backend
	h store.Handle
}

// Write asks the hook, then writes.
func (a *appendFile) Write(p []byte) (int, error) {
	torn := 0
	tear := func() {
		torn, _ = a.AppendFile.Write(p[:len(p)/2])
		a.wrote(torn)
	}
	if err := a.f.call(Call{Method: Write, Handle: a.h, Tear: tear}); err != nil {
		return torn, err
	}
	n, err := a.AppendFile.Write(p)
	a.wrote(n)
	return n, err
}

func (a *appendFile) wrote(n int) {
	a.f.mu.Lock()
	if s := a.f.appended[a.h]; s != nil {
		s.written += int64(n)
	}
	a.f.mu.Unlock()
}

// Sync asks the hook, then syncs.
func (a *appendFile) Sync() error {
	if err := a.f.ask(Sync, a.h); err != nil {
		return err
	}
	a.f.mu.Lock()
	var written int64 = -1
	if s := a.f.appended[a.h]; s != nil {
		written = s.written
	}
	a.f.mu.Unlock()
	if err := a.AppendFile.Sync(); err != nil {
		return err
	}
	a.f.mu.Lock()
	if s := a.f.appended[a.h]; s != nil && written > s.synced {
		s.synced = written
	}
	a.f.mu.Unlock()
	return nil
}

// Loss is what a power loss may take of a file: all of it (a file saved
// and not flushed since, or created to append to and never synced), or
// the bytes appended past Synced.
type Loss struct {
	Handle store.Handle
	Whole  bool
	Synced int64
}

// Undurable returns what this Backend's callers were not yet told is
// durable, sorted by handle.
func (f *Backend) Undurable() []Loss {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Loss
	for h := range f.saved {
		out = append(out, Loss{Handle: h, Whole: true})
	}
	for h, s := range f.appended {
		switch {
		case s.synced < 0:
			out = append(out, Loss{Handle: h, Whole: true})
		case s.written > s.synced:
			out = append(out, Loss{Handle: h, Synced: s.synced})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Handle, out[j].Handle
		return a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name
	})
	return out
}

// LoseUndurable drops what Undurable returns from the files of a backend
// in a local folder (whose Path names them), as a power loss may: a crash
// test calls it just before it kills the process.
func (f *Backend) LoseUndurable() error {
	for _, l := range f.Undurable() {
		path := f.Path(l.Handle)
		if !filepath.IsAbs(path) {
			return errors.New("faulty: " + path + " is not a local file")
		}
		var err error
		if l.Whole {
			err = os.Remove(path)
		} else {
			err = os.Truncate(path, l.Synced)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
