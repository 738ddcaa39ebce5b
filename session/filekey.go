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
