package session

import (
	"errors"
	"fmt"
	"os"
)

// ErrWriterOpen is the error of a transcript that a process has open for
// writing, as an agent that keeps its transcript open does.
var ErrWriterOpen = errors.New("a process has it open for writing (is an agent still running?)")

// Lease is a read lease on an open transcript (Linux's F_SETLEASE). While
// it is held no process has the file open for writing: one that opens it
// for writing waits in open(2) until the lease is released (or the
// kernel's lease-break-time, 45 s by default, has passed), and the holder
// sees the lease broken. An agent that opens its transcript to append
// just as it is replaced is so either seen, or finds the new file. A nil
// Lease, where none is to be had, is never broken, and releasing it does
// nothing.
type Lease struct {
	f *os.File
}

// TakeLease takes a read lease on f, which must be open read-only. It
// fails with ErrWriterOpen while a process has the file open for writing.
// It returns nil, and no error, where leases are not to be had: on other
// systems, on file systems without them (NFS, FUSE), and on a file of
// another user without CAP_LEASE.
func TakeLease(f *os.File) (*Lease, error) {
	ok, err := setReadLease(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if !ok {
		return nil, nil
	}
	return &Lease{f: f}, nil
}

// Broken reports whether a process has opened the file for writing since
// the lease was taken; it waits in open(2) for Release.
func (l *Lease) Broken() bool {
	return l != nil && !holdsReadLease(l.f)
}

// Release gives up the lease: a process waiting to open the file goes on.
func (l *Lease) Release() {
	if l != nil {
		releaseLease(l.f)
	}
}
