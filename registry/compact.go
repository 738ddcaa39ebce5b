package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// openLocked opens the single-file registry under its exclusive lock,
// making sure the locked file is still the one at its path. Versions
// before segments appended to it under that lock, so Compact takes it too
// until it has removed the file: such a writer waiting for it then finds
// the file gone and makes a new one, which readers read (see the package
// doc, # Compaction).
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

// Compact merges the registry, the single-file registry of earlier
// versions and every segment, into one new segment without the records
// keep refuses, and then removes the files it merged; see the package
// doc, # Compaction, for why no reader loses a record meanwhile. Lines
// that do not parse are kept as they are, never dropped; a torn last line
// is set aside in a file beside its own. A registry that is one segment
// already, with nothing to drop, is left as it is. It returns how many
// records it dropped.
//
// The caller holds the store's lock exclusively (LockExclusive), so that
// no writer appends to a segment meanwhile.
func (s *Store) Compact(keep func(Record) bool) (int, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	if !s.folder {
		return s.compactObjects(context.Background(), keep)
	}
	legacy, err := s.openLocked(os.O_RDWR)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, fmt.Errorf("open registry: %w", err)
	default:
		defer legacy.Close()
	}
	files, err := s.openRegistry()
	if err != nil {
		return 0, err
	}
	defer closeAll(files)
	if len(files) == 0 {
		return 0, nil
	}

	// First what each file holds, for the new segment's header, which
	// comes before its lines.
	h, ends, err := headerOf(files)
	if err != nil {
		return 0, err
	}

	dir := filepath.Join(s.dir, SegmentsDir)
	made := false
	if err := safefile.Mkdir(dir, dirPerm); err == nil {
		made = true
	} else if !errors.Is(err, fs.ErrExist) {
		return 0, fmt.Errorf("create registry directory: %w", err)
	}
	if err := notLinked(dir); err != nil {
		return 0, err
	}
	merged := s.segmentPath(newWriter(s.shard))
	out, err := safefile.Create(merged, filePerm)
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	var b indexBuilder
	dropped, partial, err := writeMerged(out, h, files, keep, &b)
	if err != nil {
		return 0, err
	}
	if dropped == 0 && len(files) == 1 && files[0].name != RegistryFile && !partial && ends[0] == files[0].size {
		return 0, nil // one segment already
	}
	// The new segment is durable under its name before anything it holds
	// is removed.
	if err := out.Commit(); err != nil {
		return 0, err
	}
	indexMerged(&b, merged)
	if made {
		if err := safefile.SyncDir(s.dir); err != nil {
			return 0, err
		}
	}
	removedLegacy := false
	for i, rf := range files {
		if !unchanged(rf) {
			continue // appended to meanwhile, by a writer without the lock: the header says how much it holds
		}
		if err := setAside(rf, ends[i]); err != nil {
			return 0, err
		}
		if err := os.Remove(rf.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("remove compacted registry %s: %w", rf.path, err)
		}
		removedLegacy = removedLegacy || rf.name == RegistryFile
	}
	if err := safefile.SyncDir(dir); err != nil {
		return 0, err
	}
	removeStrayIndexes(dir)
	if removedLegacy {
		if err := safefile.SyncDir(s.dir); err != nil {
			return 0, err
		}
	}
	// This Store's segment is merged: its next Append starts another, and
	// reads the registry again.
	s.dropSegment()
	return dropped, nil
}

// unchanged reports whether rf is still at its path, as long as when it
// was opened.
func unchanged(rf *regFile) bool {
	f, ok := rf.f.(*os.File)
	if !ok {
		return false
	}
	opened, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(rf.path)
	return err == nil && os.SameFile(opened, now) && now.Size() == rf.size
}

// headerOf returns the header of a segment merging files: the length of
// each up to its last whole line, ends, and the SHA-256 of its bytes up
// to there.
func headerOf(files []*regFile) (header, []int64, error) {
	var h header
	ends := make([]int64, len(files))
	for i, rf := range files {
		sum := sha256.New()
		var err error
		if ends[i], err = rf.scan(sum, func([]byte, int, int64) error { return nil }, nil); err != nil {
			return h, nil, fmt.Errorf("read registry %s: %w", rf.path, err)
		}
		h.Compacts = append(h.Compacts, covered{File: rf.name, Size: ends[i], SHA256: hex.EncodeToString(sum.Sum(nil))})
	}
	return h, ends, nil
}

// writeMerged writes the segment merging files to w: the header h, then
// their lines but the records keep refuses. It returns how many it
// dropped, and whether a file was read only in part (past the lines a
// compacted segment among files holds).
//
// With ix, each line written is also added to it.
func writeMerged(w io.Writer, h header, files []*regFile, keep func(Record) bool, ix *indexBuilder) (dropped int, partial bool, err error) {
	b, err := api.Marshal(h)
	if err != nil {
		return 0, false, err
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return 0, false, err
	}
	if ix != nil {
		ix.add(b)
	}
	var dec decoder
	for _, rf := range files {
		partial = partial || rf.from > 0
		_, err := rf.scan(nil, func(line []byte, _ int, _ int64) error {
			var r Record
			if uerr := dec.decode(line, &r); uerr == nil && r.Hash != "" && !keep(r) {
				dropped++
				return nil
			}
			if ix != nil {
				ix.add(line)
			}
			_, err := w.Write(line)
			return err
		}, func(_ int, off, size int64) error {
			// Not a record, but its bytes are kept all the same.
			if ix != nil {
				ix.addLong(size)
			}
			_, err := io.Copy(w, io.NewSectionReader(rf.f, off, size))
			return err
		})
		if err != nil {
			return 0, false, fmt.Errorf("compact registry %s: %w", rf.path, err)
		}
	}
	return dropped, partial, nil
}
