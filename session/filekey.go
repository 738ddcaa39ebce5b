package session

import (
	"os"
	"path/filepath"
	"syscall"
)

// fileKey identifies a file whatever its name: by device and inode, or by
// absolute path where the system gives neither.
type fileKey struct {
	dev, ino uint64
	path     string
}

// keyOf returns the key of the file at path that fi describes.
func keyOf(path string, fi os.FileInfo) fileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: st.Ino}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return fileKey{path: abs}
}
