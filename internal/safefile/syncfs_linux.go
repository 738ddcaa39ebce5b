package safefile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// FS is an open handle on the file system that holds a directory, through
// which every file on it is made durable at once (syncfs(2)): the data and
// metadata of all its files, and the entries of all its directories. For
// many small files that is one flush of the disk's cache where an fsync
// of each file would be one each.
type FS struct {
	f *os.File
}

// OpenFS opens the file system that holds dir, to sync it later. It
// returns nil, and no error, where syncfs cannot stand in for fsyncs:
//
//   - before Linux 5.8, syncfs did not report write-back errors;
//   - on file systems other than ext2/3/4, XFS, Btrfs and tmpfs, whose
//     syncfs is not known to commit everything fsync would (network and
//     FUSE file systems among them).
//
// Open it before the files it is to sync are written: a write-back error
// is reported to the handles open when it happens.
func OpenFS(dir string) (*FS, error) {
	if !syncfsReports() {
		return nil, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil || !syncfsCommits(int64(st.Type)) {
		_ = f.Close()
		return nil, nil
	}
	return &FS{f: f}, nil
}

// Sync makes every file on the file system durable, as if each had been
// fsynced, and every directory on it. An error means that some write-back
// on the file system failed since the handle was opened, not necessarily
// of a file of the caller's: fsync each file then to know which.
func (s *FS) Sync() error {
	if err := Intercept(Op{Kind: KindSyncFS, Path: s.f.Name()}); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.f.Name(), err)
	}
	if err := unix.Syncfs(int(s.f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", s.f.Name(), err)
	}
	return nil
}

// Synced checks, after s.Sync returned nil, that no write-back of f's
// bytes failed since f was created (sync_file_range(2), which waits for
// write-back and reports the file's own errors without another flush of
// the disk's cache); nil means f's bytes are durable, and CommitNoDirSync
// then fsyncs f no more. It is reported to Hook as f's fsync.
func (f *File) Synced() error {
	if f.done {
		return errors.New("safefile: file already committed or aborted")
	}
	if err := Intercept(Op{Kind: KindSync, Path: f.f.Name()}); err != nil {
		return fmt.Errorf("fsync %s: %w", f.f.Name(), err)
	}
	if err := unix.SyncFileRange(int(f.f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER); err != nil {
		return fmt.Errorf("fsync %s: %w", f.f.Name(), err)
	}
	f.synced = true
	return nil
}

// Close closes the handle.
func (s *FS) Close() error { return s.f.Close() }

// syncfsCommits reports whether syncfs is known to commit, on file systems
// of type magic (statfs(2)), all that fsync of each file would.
func syncfsCommits(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}

// syncfsReports reports whether the kernel is Linux 5.8 or later, whose
// syncfs returns the write-back errors met since the handle was opened.
var syncfsReports = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast reports whether the release string of a Linux kernel, such
// as "6.1.0-13-amd64", names version major.minor or later.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	end := 0
	for end < len(parts[1]) && '0' <= parts[1][end] && parts[1][end] <= '9' {
		end++
	}
	mnr, err := strconv.Atoi(parts[1][:end])
	if err != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}
