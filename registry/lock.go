package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// LockFile is the name of the store's lock file: writers hold it shared,
// a collector exclusively (see the package doc, # Locking).
const LockFile = "lock"

// Lock is the store's lock, held exclusively by LockExclusive's caller.
type Lock struct{ f *os.File }

// Unlock releases the lock.
func (l *Lock) Unlock() error { return l.f.Close() }

// LockExclusive takes the store's lock exclusively, for a collector that
// must see no writer between reading what refers to the store's objects
// and deleting those nothing refers to. It waits, polling, while writers
// hold the lock shared (calling waiting once, if it is not nil, when it
// starts to wait), until ctx is done. A store whose directory does not
// exist gives an error wrapping fs.ErrNotExist: it has nothing to collect,
// and a collector must not create it.
func (s *Store) LockExclusive(ctx context.Context, waiting func()) (*Lock, error) {
	f, err := s.openLock()
	if err != nil {
		return nil, err
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		if waiting != nil {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// holdShared takes the store's lock shared for this Store's writes, once:
// it is held from the first Put or Append until Release, so that no
// collector runs between a writer's finding an object and the transcript
// that refers to it being in place. It waits while a collector holds the
// lock.
func (s *Store) holdShared() error {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.shared != nil {
		return nil
	}
	if err := s.mkdirs(filepath.Join(s.dir, ObjectsDir)); err != nil {
		return err
	}
	f, err := s.openLock()
	if err != nil {
		return err
	}
	if err := flock(f, unix.LOCK_SH); err != nil {
		f.Close()
		return err
	}
	s.shared = f
	return nil
}

// Release gives up the lock this Store's writes have held since the first
// Put or Append (see the package doc, # Locking). Call it once every
// transcript that refers to what was stored or found through this Store is
// in place, or has failed; a later write takes the lock again.
func (s *Store) Release() error {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.shared == nil {
		return nil
	}
	err := s.shared.Close()
	s.shared = nil
	return err
}

// openLock opens the store's lock file, creating it, never through a
// symbolic link.
func (s *Store) openLock() (*os.File, error) {
	path := filepath.Join(s.dir, LockFile)
	if err := safefile.Intercept(safefile.Op{Kind: safefile.KindOpen, Path: path}); err != nil {
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, filePerm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s %w", path, ErrLinked)
	}
	if err != nil {
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	// Past the umask, like every file of the store.
	if err := setPerm(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open the store's lock: %w", err)
	}
	return f, nil
}

// setPerm gives the open file f the store's file permissions, if it has
// others.
func setPerm(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Mode().Perm() == filePerm {
		return err
	}
	if err := safefile.Intercept(safefile.Op{Kind: safefile.KindChmod, Path: f.Name()}); err != nil {
		return err
	}
	return f.Chmod(filePerm)
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

// freshen sets the modification time of the object at path to now, so
// that a collector that does not take the store's lock (an older version,
// another machine) counts its grace period from this use, not from the
// object's creation. It does not follow a link. An object gone meanwhile
// gives an error wrapping fs.ErrNotExist: the caller writes it again.
func freshen(path string) error {
	t := unix.NsecToTimespec(time.Now().UnixNano())
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{t, t}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "freshen", Path: path, Err: err}
	}
	return nil
}
