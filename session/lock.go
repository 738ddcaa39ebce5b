package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrBusy is the error of a transcript that another transcript-tool
// process is rewriting.
var ErrBusy = errors.New("another transcript-tool is rewriting it; try again when it is done")

// Lock takes an exclusive advisory lock on an open transcript, so
// that two runs never rewrite one transcript at once: the second is refused
// at once rather than made to wait behind a long migration. Agents that
// append to their transcript take no such lock and are not hindered; they
// are caught by the change check before the rename. The lock goes with the
// file descriptor.
func Lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%s: %w", f.Name(), ErrBusy)
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}
