package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file in dir (O_TMPFILE). ok is false, with
// no error, where the file system does not make such files.
func openUnnamed(dir string, perm os.FileMode) (fd int, ok bool, err error) {
	fd, err = unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case err == nil:
		return fd, true, nil
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return 0, false, nil
	}
	return 0, false, err
}
