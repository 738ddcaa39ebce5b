// Package safefile writes files so that no half-written file ever stands
// under its final name: a temporary file beside the target is written,
// fsynced, closed and renamed, and then the directory is fsynced so that the
// rename itself survives a crash.
//
// Every file system call goes through package variables so that tests can
// inject faults (no space, I/O errors, permission denied) at each step.
package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Seams for fault injection in tests.
var (
	createTemp = os.CreateTemp
	rename     = os.Rename
	syncFile   = (*os.File).Sync
	openDir    = os.Open
)

// File is a temporary file that becomes Name on Commit.
type File struct {
	*os.File
	name string
	done bool
}

// Create starts writing the file name with permissions perm. The temporary
// file lives in name's directory, so that the final rename stays on one
// file system.
func Create(name string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	// A long name plus the suffix could pass the file system's limit.
	if len(base) > 100 {
		base = base[:100]
	}
	f, err := createTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, name: name}, nil
}

// Commit makes the written bytes durable under the final name: fsync,
// close, rename, fsync of the directory.
func (f *File) Commit() error {
	if err := f.CommitNoDirSync(); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(f.name))
}

// CommitNoDirSync is Commit without the directory fsync, for callers that
// batch it: the file is complete under its final name, but the rename is
// durable only once the caller has called SyncDir on its directory.
func (f *File) CommitNoDirSync() error {
	if f.done {
		return errors.New("safefile: file already committed or aborted")
	}
	f.done = true
	tmp := f.File.Name()
	if err := syncFile(f.File); err != nil {
		_ = f.File.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.File.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := rename(tmp, f.name); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Abort discards the temporary file. It is safe to call after Commit, so
// that callers can defer it.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.File.Close()
	_ = os.Remove(f.File.Name())
}

// WriteFile atomically replaces name with data.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir fsyncs a directory so that entries created or renamed in it are
// durable.
func SyncDir(dir string) error {
	d, err := openDir(dir)
	if err != nil {
		return err
	}
	err = syncFile(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
