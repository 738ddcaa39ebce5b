package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
	"golang.org/x/sys/unix"
)

// LockExclusive takes the store's lock exclusively, for a collector that
// must see no writer between reading what refers to the store's objects
// and deleting those nothing refers to. It waits, polling, while writers
// hold the lock shared (calling waiting once, if it is not nil, when it
// starts to wait), until ctx is done. A store whose folder does not exist
// gives an error wrapping fs.ErrNotExist: it has nothing to collect, and a
// collector must not create it.
func (l *Local) LockExclusive(ctx context.Context, waiting func()) (store.Lock, error) {
	f, err := l.openLock()
	if err != nil {
		return nil, err
	}
	if err := lockWaiting(ctx, f, unix.LOCK_EX, waiting); err != nil {
		f.Close()
		return nil, err
	}
	return flockLock{f}, nil
}

// flockLock is a lock the kernel holds for as long as its file is open:
// it is never lost.
type flockLock struct{ *os.File }

// Held returns nil: the kernel keeps the lock until Close.
func (flockLock) Held() error { return nil }

// lockWaiting applies how (LOCK_SH or LOCK_EX) to f's lock, polling while
// another holds it in a way that excludes it (calling waiting once, if it
// is not nil, when it starts to wait), until ctx is done.
func lockWaiting(ctx context.Context, f *os.File, how int, waiting func()) error {
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := flock(f, how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if err := store.LockWait(ctx, &waiting, delay); err != nil {
			return err
		}
	}
}

// HoldShared takes the store's lock shared for this Local's writes, once:
// it is held from the first write until Release, so that no collector runs
// between a writer's finding an object and the transcript that refers to
// it being in place. It waits while a collector holds the lock, until ctx
// is done.
func (l *Local) HoldShared(ctx context.Context) error {
	l.lockMu.Lock()
	defer l.lockMu.Unlock()
	if l.shared != nil {
		return nil
	}
	if err := l.mkdirs(filepath.Join(l.dir, store.ObjectsDir)); err != nil {
		return err
	}
	f, err := l.openLock()
	if err != nil {
		return err
	}
	if err := lockWaiting(ctx, f, unix.LOCK_SH, nil); err != nil {
		f.Close()
		return err
	}
	l.shared = f
	return nil
}

// Release gives up the lock this Local's writes have held since the first
// write. Call it once every transcript that refers to what was stored or
// found through this Local is in place, or has failed; a later write takes
// the lock again.
func (l *Local) Release() error {
	l.lockMu.Lock()
	defer l.lockMu.Unlock()
	if l.shared == nil {
		return nil
	}
	err := l.shared.Close()
	l.shared = nil
	return err
}

// openLock opens the store's lock file, creating it, never through a
// symbolic link.
func (l *Local) openLock() (*os.File, error) {
	path := filepath.Join(l.dir, store.LockFile)
	if err := safefile.Intercept(safefile.Op{Kind: safefile.KindOpen, Path: path}); err != nil {
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, filePerm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s %w", path, store.ErrLinked)
	}
	if err != nil {
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	// Past the umask, like every file of the store.
	if err := safefile.SetPerm(f, filePerm); err != nil {
		f.Close()
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	return f, nil
}

// flock applies how to f's lock, again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			if err != nil && !errors.Is(err, unix.EWOULDBLOCK) {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return err
		}
	}
}
