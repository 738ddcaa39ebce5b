// Package mem is a Backend that keeps a store's files in memory, for tests:
// the conformance suite holds it to the same contract as the local and S3
// backends, and tests of the layers above use it where a folder would only
// be slower. A Mem may be used from
// several goroutines at once; everything it holds is gone with it.
package mem

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/transcript-tool/transcript-tool/store"
)

// Mem is a Backend in memory.
type Mem struct {
	mu     sync.Mutex
	files  map[store.Handle]file
	lastID uint64
}

type file struct {
	data    []byte
	modTime time.Time
	id      uint64 // tells apart the files that stood under one name in turn
}

var (
	_ store.Backend  = (*Mem)(nil)
	_ store.Appender = (*Mem)(nil)
	_ store.Opener   = (*Mem)(nil)
)

// New returns an empty Mem.
func New() *Mem { return &Mem{files: map[store.Handle]file{}} }

// Location names the store as a mem: URL.
func (m *Mem) Location() string { return "mem:" }

// Path returns a name for h that no program outside this one can open.
func (m *Mem) Path(h store.Handle) string { return "mem:" + store.Key(h) }

// Save stores the bytes write writes, whole, once write returns.
func (m *Mem) Save(_ context.Context, h store.Handle, write func(io.Writer) error) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	m.mu.Lock()
	m.files[h] = m.newFile(buf.Bytes())
	m.mu.Unlock()
	return nil
}

// newFile returns a file of data, with an ID no other file of m had. The
// caller holds mu.
func (m *Mem) newFile(data []byte) file {
	m.lastID++
	return file{data: data, modTime: time.Now(), id: m.lastID}
}

// info describes f, named name.
func info(name string, f file) store.FileInfo {
	return store.FileInfo{Name: name, Size: int64(len(f.data)), ModTime: f.modTime, ID: f.id}
}

func (m *Mem) get(h store.Handle) (file, error) {
	if err := store.CheckHandle(h); err != nil {
		return file{}, err
	}
	m.mu.Lock()
	f, ok := m.files[h]
	m.mu.Unlock()
	if !ok {
		return file{}, fmt.Errorf("%s: %w", m.Path(h), store.ErrNotExist)
	}
	return f, nil
}

// Load returns a reader of a copy-free view of h's bytes: neither Save nor
// an append changes bytes stored, they replace them.
func (m *Mem) Load(_ context.Context, h store.Handle, offset, length int64) (io.ReadCloser, error) {
	f, err := m.get(h)
	if err != nil {
		return nil, err
	}
	data := f.data[min(offset, int64(len(f.data))):]
	if length > 0 {
		data = data[:min(length, int64(len(data)))]
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// Stat describes h.
func (m *Mem) Stat(_ context.Context, h store.Handle) (store.FileInfo, error) {
	f, err := m.get(h)
	if err != nil {
		return store.FileInfo{}, err
	}
	return info(h.Name, f), nil
}

// List calls fn for the files of kind k whose names start with prefix.
func (m *Mem) List(_ context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	m.mu.Lock()
	var infos []store.FileInfo
	for h, f := range m.files {
		if h.Kind == k && strings.HasPrefix(h.Name, prefix) {
			infos = append(infos, info(h.Name, f))
		}
	}
	m.mu.Unlock()
	for _, fi := range infos {
		if err := fn(fi); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes h.
func (m *Mem) Remove(_ context.Context, h store.Handle) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.files, h)
	m.mu.Unlock()
	return nil
}

// Touch sets h's modification time to now.
func (m *Mem) Touch(_ context.Context, h store.Handle) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[h]
	if !ok {
		return fmt.Errorf("%s: %w", m.Path(h), store.ErrNotExist)
	}
	f.modTime = time.Now()
	m.files[h] = f
	return nil
}

// Flush has nothing to do: what Mem holds is as durable as it gets. It
// reports a handle of must that is not there.
func (m *Mem) Flush(_ context.Context, must ...store.Handle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range must {
		if _, ok := m.files[h]; !ok {
			return fmt.Errorf("%s was not made durable: it is not there", m.Path(h))
		}
	}
	return nil
}

// Discard has nothing to drop: a Save is whole when it returns.
func (m *Mem) Discard() {}

// Corrupt replaces the bytes of h, for tests of what readers do with a
// damaged file.
func (m *Mem) Corrupt(h store.Handle, data []byte) {
	m.mu.Lock()
	m.files[h] = m.newFile(data)
	m.mu.Unlock()
}
