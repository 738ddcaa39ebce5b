package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/transcript-tool/transcript-tool/store"
)

// Compact merges the registry, the single-file registry of earlier
// versions and every segment, into one new segment without the records
// keep refuses, and then removes the files it merged; see
// docs/registry-index.md, # Compaction, for why no reader loses a record
// meanwhile. Lines that do not parse are kept as they are, never dropped;
// a torn last line is set aside in a file beside its own. A registry that
// is one segment already, with nothing to drop, is left as it is. It
// returns how many records it dropped.
//
// The caller holds the store's lock exclusively (LockExclusive), so that
// no writer appends to a segment meanwhile.
func (s *Store) Compact(ctx context.Context, keep func(Record) bool) (int, error) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	// Versions before segments appended to the single-file registry
	// under its own lock, which Compact holds until it has removed the
	// file: such a writer waiting for it then finds the file gone and
	// makes a new one, which readers read.
	if fl, ok := store.As[store.FileLocker](s.b); ok {
		l, err := fl.LockFile(ctx, legacy)
		switch {
		case errors.Is(err, store.ErrNotExist):
		case err != nil:
			return 0, fmt.Errorf("lock registry %s: %w", s.RegistryPath(), err)
		default:
			defer l.Close()
		}
	}
	files, err := s.openRegistry(ctx)
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
	merged := segmentHandle(newWriter(s.shard))
	var (
		b       indexBuilder
		dropped int
	)
	err = s.b.Save(ctx, merged, func(w io.Writer) error {
		d, partial, err := writeMerged(w, h, files, keep, &b)
		if err != nil {
			return err
		}
		if d == 0 && len(files) == 1 && files[0].h.Kind == store.Segment && !partial && ends[0] == files[0].size {
			return errOneSegment
		}
		dropped = d
		return nil
	})
	if errors.Is(err, errOneSegment) {
		return 0, nil
	}
	// The new segment is durable under its name before anything it holds
	// is removed.
	if err == nil {
		err = s.b.Flush(ctx, merged)
	}
	if err != nil {
		return 0, fmt.Errorf("compact registry into %s: %w", s.where(merged), err)
	}
	s.indexMerged(ctx, &b, merged)
	for i, rf := range files {
		if !s.unchanged(ctx, rf) {
			continue // appended to meanwhile, by a writer without the lock: the header says how much it holds
		}
		if err := s.setAside(ctx, rf, ends[i]); err != nil {
			return 0, err
		}
		if err := s.b.Remove(ctx, rf.h); err != nil && !errors.Is(err, store.ErrNotExist) {
			return 0, fmt.Errorf("remove compacted registry %s: %w", rf.path, err)
		}
	}
	if err := s.b.Flush(ctx); err != nil {
		return 0, err
	}
	s.removeStrayIndexes(ctx)
	// This Store's segment is merged: its next Append starts another, and
	// reads the registry again.
	s.dropSegment()
	return dropped, nil
}

// errOneSegment stops the save of a merged segment that would be the one
// segment the registry already is.
var errOneSegment = errors.New("the registry is one segment already")

// unchanged reports whether rf is still under its name, the same file
// (where the backend tells files apart) as long as when it was opened.
func (s *Store) unchanged(ctx context.Context, rf *regFile) bool {
	now, err := s.b.Stat(ctx, rf.h)
	return err == nil && now.ID == rf.id && now.Size == rf.size
}

// setAside copies the bytes of rf past end, a torn last line, to a file
// beside it, "<name>.torn-<nanoseconds>", before rf is removed: a crash
// mid-append leaves them, and they are never dropped silently.
func (s *Store) setAside(ctx context.Context, rf *regFile, end int64) error {
	if end == rf.size {
		return nil
	}
	aside := store.Handle{Kind: rf.h.Kind, Name: rf.h.Name + ".torn-" + strconv.FormatInt(time.Now().UnixNano(), 10)}
	err := s.b.Save(ctx, aside, func(w io.Writer) error {
		// Copied, not held: a torn tail may be as long as any line.
		_, err := io.Copy(w, io.NewSectionReader(rf.f, end, rf.size-end))
		return err
	})
	if err == nil {
		err = s.b.Flush(ctx, aside)
	}
	if err != nil {
		return fmt.Errorf("set aside torn registry tail of %s: %w", rf.path, err)
	}
	return nil
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
		h.Compacts = append(h.Compacts, covered{File: store.Key(rf.h), Size: ends[i], SHA256: hex.EncodeToString(sum.Sum(nil))})
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
				if err := ix.addLong(rf.f, off, size); err != nil {
					return err
				}
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
