package mem

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/transcript-tool/transcript-tool/store"
)

// Open returns h's bytes as they are now (see store.Opener): appends and
// removals since leave them be.
func (m *Mem) Open(_ context.Context, h store.Handle) (store.File, error) {
	f, err := m.get(h)
	if err != nil {
		return nil, err
	}
	return opened{bytes.NewReader(f.data), info(h.Name, f)}, nil
}

// opened is a file Open opened.
type opened struct {
	*bytes.Reader
	fi store.FileInfo
}

func (o opened) Stat() store.FileInfo { return o.fi }
func (opened) Close() error           { return nil }

// CreateAppend creates h, empty, and opens it to append to (see
// store.Appender).
func (m *Mem) CreateAppend(_ context.Context, h store.Handle) (store.AppendFile, error) {
	if err := store.CheckHandle(h); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[h]; ok {
		return nil, fmt.Errorf("%s: %w", m.Path(h), store.ErrExist)
	}
	f := m.newFile(nil)
	m.files[h] = f
	return &appendFile{m: m, h: h, id: f.id}, nil
}

// OpenAppend opens h, which is there, to append to.
func (m *Mem) OpenAppend(_ context.Context, h store.Handle) (store.AppendFile, error) {
	f, err := m.get(h)
	if err != nil {
		return nil, err
	}
	return &appendFile{m: m, h: h, id: f.id}, nil
}

// appendFile appends to one file of a Mem: the file it was opened on,
// not another saved or created under its name since.
type appendFile struct {
	m  *Mem
	h  store.Handle
	id uint64
}

// file returns the file a was opened on. The caller holds a.m.mu.
func (a *appendFile) file() (file, error) {
	f, ok := a.m.files[a.h]
	if !ok || f.id != a.id {
		return file{}, fmt.Errorf("%s: %w", a.m.Path(a.h), store.ErrNotExist)
	}
	return f, nil
}

// Write appends p to a copy of the file's bytes, which replaces them, so
// that what Open and Load handed out never changes.
func (a *appendFile) Write(p []byte) (int, error) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	f, err := a.file()
	if err != nil {
		return 0, err
	}
	f.data = append(f.data[:len(f.data):len(f.data)], p...)
	f.modTime = time.Now()
	a.m.files[a.h] = f
	return len(p), nil
}

// Sync has nothing to do: what Mem holds is as durable as it gets.
func (a *appendFile) Sync() error { return nil }

// Stat describes the file as it is now.
func (a *appendFile) Stat() (store.FileInfo, error) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	f, err := a.file()
	if err != nil {
		return store.FileInfo{}, err
	}
	return info(a.h.Name, f), nil
}

func (a *appendFile) Close() error { return nil }
