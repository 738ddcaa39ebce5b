package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// setReadLease takes a read lease on f. ok is false, with no error, where
// the file system or the file's owner allow none.
func setReadLease(f *os.File) (ok bool, err error) {
	_, err = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EAGAIN):
		return false, ErrWriterOpen
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EINVAL),
		errors.Is(err, unix.ENOLCK), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		// Another user's file without CAP_LEASE, a file system without
		// leases, or leases turned off (/proc/sys/fs/leases-enable).
		return false, nil
	}
	return false, err
}

// holdsReadLease reports whether f still holds its read lease: while one
// is broken, F_GETLEASE reports the lease it is to become, none.
func holdsReadLease(f *os.File) bool {
	t, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err == nil && t == unix.F_RDLCK
}

func releaseLease(f *os.File) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
}
