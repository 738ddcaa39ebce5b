package registry

import "path/filepath"

// SourcePath returns the path by which a record names the transcript at
// path (Record.Source): its absolute path, so that the records of a
// transcript are found whatever folder a later command runs in and
// however it spells the path; path as given when it has none.
func SourcePath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
