package registry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// openLocked opens the registry under its exclusive lock, making sure the
// locked file is still the one at its path: Compact replaces the registry
// by renaming a new file over it, and a writer that was waiting for the
// lock of the old file must not append to a file no longer there.
func (s *Store) openLocked(flag int) (*lockedfile.File, error) {
	path := s.RegistryPath()
	for {
		if err := notLinked(path); err != nil {
			return nil, err
		}
		if err := safefile.Intercept(safefile.Op{Kind: safefile.KindOpen, Path: path}); err != nil {
			return nil, err
		}
		f, err := lockedfile.OpenFile(path, flag, filePerm)
		if err != nil {
			return nil, err
		}
		locked, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if now, err := os.Stat(path); err == nil && os.SameFile(locked, now) {
			return f, nil
		}
		f.Close() // replaced meanwhile: lock the new one
	}
}

// Compact rewrites the registry without the records keep refuses, by
// writing a new file and renaming it over the old one under the registry's
// lock. Lines that do not parse are kept as they are, never dropped; a
// torn last line is set aside first, as Append does. It returns how many
// records it dropped.
func (s *Store) Compact(keep func(Record) bool) (int, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	f, err := s.openLocked(os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open registry: %w", err)
	}
	defer f.Close()
	end, err := s.repairTail(f.File)
	if err != nil {
		return 0, err
	}
	out, err := safefile.Create(s.RegistryPath(), filePerm)
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	dropped := 0
	br := bufio.NewReaderSize(io.NewSectionReader(f.File, 0, end), 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var r Record
			if uerr := api.Unmarshal(line, &r); uerr == nil && r.Hash != "" && !keep(r) {
				dropped++
			} else if _, werr := out.Write(line); werr != nil {
				return 0, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if dropped == 0 {
		return 0, nil
	}
	if err := out.Commit(); err != nil {
		return 0, err
	}
	s.known = nil // the records Append remembers are those of the old file
	return dropped, nil
}
