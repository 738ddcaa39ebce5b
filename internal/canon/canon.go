// Package canon gives a path its one name: absolute, cleaned, with every
// symbolic link of it resolved, so that ".", a relative path, a path
// through a linked folder and the path itself name one store, one
// transcript and one registry record.
//
// A path that does not exist yet (a store or an --out folder about to be
// made) is resolved as far as it exists, and the rest is joined as given.
// A URL (anything with "://", an s3:// store or bucket) is its own name.
package canon

import (
	"os"
	"path/filepath"
	"strings"
)

// Path returns the canonical name of path: see the package doc. It fails
// only when the working folder cannot be known for a relative path.
func Path(path string) (string, error) {
	if path == "" || IsURL(path) {
		return path, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return resolve(abs), nil
}

// Must is Path for callers that have no error to report: on failure it
// returns path as given, which names the same thing for this process.
func Must(path string) string {
	p, err := Path(path)
	if err != nil {
		return path
	}
	return p
}

// IsURL reports whether name is a URL rather than a local path.
func IsURL(name string) bool {
	scheme, _, ok := strings.Cut(name, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, `/\.`)
}

// resolve resolves the links of the absolute, clean path abs as far as it
// exists. Only a missing part stops the resolution there; any other error
// (a folder that cannot be searched) leaves the rest as it is spelled,
// which is what the system would make of it too.
func resolve(abs string) string {
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real
	}
	if _, lerr := os.Lstat(abs); lerr == nil || !os.IsNotExist(lerr) {
		return abs
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if dir == abs {
		return abs
	}
	return filepath.Join(resolve(dir), base)
}
