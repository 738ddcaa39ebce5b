package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
)

// Open opens h to read in place (see store.Opener): the descriptor keeps
// the file readable once it is removed.
func (l *Local) Open(_ context.Context, h store.Handle) (store.File, error) {
	f, err := l.open(h)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return openFile{f, info(h.Name, fi)}, nil
}

// openFile is a file Open opened.
type openFile struct {
	*os.File
	fi store.FileInfo
}

func (f openFile) Stat() store.FileInfo { return f.fi }

// CreateAppend creates h with O_EXCL, 0600 whatever the umask, and opens it
// to append to; its first Sync also makes its name durable, with the
// folders' entries this Local has not made durable yet (see Flush).
func (l *Local) CreateAppend(_ context.Context, h store.Handle) (store.AppendFile, error) {
	if err := store.CheckHandle(h); err != nil {
		return nil, err
	}
	path := l.name(h)
	var f *os.File
	err := l.inFolders(path, func() (err error) {
		f, err = l.openFile(h, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, filePerm)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := safefile.SetPerm(f, filePerm); err != nil {
		f.Close()
		return nil, err
	}
	l.mu.Lock()
	l.dirty[filepath.Dir(path)] = true
	l.waiting[h] = true
	l.pending = append(l.pending, h)
	l.mu.Unlock()
	return &appendFile{l: l, h: h, f: f}, nil
}

// OpenAppend opens h, which is there, to append to.
func (l *Local) OpenAppend(_ context.Context, h store.Handle) (store.AppendFile, error) {
	f, err := l.openFile(h, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	a := &appendFile{l: l, h: h, f: f}
	a.named.Store(true)
	return a, nil
}

// appendFile is a file opened by CreateAppend or OpenAppend.
type appendFile struct {
	l *Local
	h store.Handle
	f *os.File
	// named is set once the file's name is durable: always for a file
	// OpenAppend opened, which a Sync of the Local that made it made so.
	named   atomic.Bool
	namedMu sync.Mutex
}

// Write appends p with one write(2).
func (a *appendFile) Write(p []byte) (int, error) { return safefile.Write(a.f, p) }

// Sync fsyncs the file and, the first time for a file CreateAppend made,
// the folders that gained its entry.
func (a *appendFile) Sync() error {
	if err := safefile.Sync(a.f); err != nil {
		return err
	}
	if a.named.Load() {
		return nil
	}
	a.namedMu.Lock()
	defer a.namedMu.Unlock()
	if a.named.Load() {
		return nil
	}
	if err := a.l.durable(a.h); err != nil {
		return err
	}
	a.named.Store(true)
	return nil
}

// Stat describes the file as it is now.
func (a *appendFile) Stat() (store.FileInfo, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return store.FileInfo{}, err
	}
	return info(a.h.Name, fi), nil
}

func (a *appendFile) Close() error { return a.f.Close() }

// LockFile takes the flock(2) lock of h's own file exclusively, as
// lockedfile does (versions before segments appended to the single-file
// registry under it), making sure the file locked is still the one under
// h's name.
func (l *Local) LockFile(_ context.Context, h store.Handle) (io.Closer, error) {
	if err := store.CheckHandle(h); err != nil {
		return nil, err
	}
	path := l.name(h)
	for {
		if err := notLinked(path); err != nil {
			return nil, err
		}
		if err := safefile.Intercept(safefile.Op{Kind: safefile.KindOpen, Path: path}); err != nil {
			return nil, err
		}
		f, err := lockedfile.OpenFile(path, os.O_RDWR, filePerm)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, store.ErrNotExist)
		}
		if err != nil {
			return nil, err
		}
		locked, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if now, err := os.Lstat(path); err == nil && os.SameFile(locked, now) {
			return f, nil
		}
		f.Close() // replaced meanwhile: lock the new one
	}
}
