package session

import (
	"os"
	"path/filepath"
	"syscall"
)

// FileKey identifies a file whatever its name, as os.SameFile does: by
// device and inode, or by absolute path where the system gives neither.
type FileKey struct {
	dev, ino uint64
	path     string
}

// KeyOf returns the key of the file at path that fi describes.
func KeyOf(path string, fi os.FileInfo) FileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileKey{dev: uint64(st.Dev), ino: st.Ino}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return FileKey{path: abs}
}

// StatKey returns the key of the file at path, a transcript's local path
// or a registry record's source: an error wrapping fs.ErrNotExist or
// syscall.ENOTDIR when nothing is there.
func StatKey(path string) (FileKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileKey{}, err
	}
	return KeyOf(path, fi), nil
}
