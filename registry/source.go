package registry

import (
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/internal/canon"
)

// SourcePath returns the path by which a record names the transcript at
// path (Record.Source): its one name (package canon: absolute, links
// resolved), so that the records of a transcript are found whatever
// folder a later command runs in and however it spells the path.
func SourcePath(path string) string { return canon.Must(path) }

// SourceOf returns the transcript a record of s names: its Source, or,
// for a relative one (written by early versions, relative to the folder
// that holds the store), that path below the store's folder. A URL and
// "" are returned as they are.
func (s *Store) SourceOf(r Record) string {
	src := r.Source
	if src == "" || filepath.IsAbs(src) || canon.IsURL(src) || canon.IsURL(s.Dir()) {
		return src
	}
	return filepath.Join(filepath.Dir(s.Dir()), src)
}
