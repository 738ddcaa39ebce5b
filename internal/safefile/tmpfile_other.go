//go:build !linux

package safefile

import "os"

// openUnnamed reports that unnamed files (Linux's O_TMPFILE) are not made
// here: CreateNew makes a named temporary file.
func openUnnamed(dir string, perm os.FileMode) (fd int, ok bool, err error) {
	return 0, false, nil
}
