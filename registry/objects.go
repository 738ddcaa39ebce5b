package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/transcript-tool/transcript-tool/store"
)

// A store whose backend is not a local folder (object storage) cannot
// append to a file in place. There, each Append writes a new segment of
// its own, never rewritten: a whole object, under the writer's id with a
// sequence number of its own, saved in one request, so that a reader sees
// it whole or not at all, and a compaction that merged it may remove it
// without losing a line appended meanwhile (none ever is). The price is
// one segment per Append (per transcript migrated) until gc --yes
// compacts them into one. The single-file registry of earlier versions
// is a local folder's only.

// segmentFile is an open file of the registry: a local file, or a
// segment's bytes loaded from object storage.
type segmentFile interface {
	io.ReaderAt
	Close() error
}

// loaded is a segment loaded whole.
type loaded struct{ *bytes.Reader }

func (loaded) Close() error { return nil }

// openObjects is tryOpenRegistry for object storage: every segment,
// loaded whole, sorted by name. An error wrapping store.ErrNotExist says
// that one listed was gone when it was loaded: a compaction removed it,
// having saved what it held first.
func (s *Store) openObjects(ctx context.Context) ([]*regFile, error) {
	var names []string
	err := s.b.List(ctx, store.Segment, "", func(fi store.FileInfo) error {
		if fi.Bad == nil && isSegment(fi.Name) {
			names = append(names, fi.Name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list registry: %w", err)
	}
	sort.Strings(names)
	files := make([]*regFile, 0, len(names))
	for _, name := range names {
		h := store.Handle{Kind: store.Segment, Name: name}
		rc, err := s.b.Load(ctx, h, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("read registry %s: %w", s.b.Path(h), err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("read registry %s: %w", s.b.Path(h), err)
		}
		rf := &regFile{name: SegmentsDir + "/" + name, path: s.b.Path(h), f: loaded{bytes.NewReader(data)}, size: int64(len(data))}
		if err := rf.readHeader(); err != nil {
			return nil, err
		}
		files = append(files, rf)
	}
	return files, nil
}

// appendObject is Append for object storage: lines, whole, as a new
// segment. The caller holds appendMu.
func (s *Store) appendObject(ctx context.Context, lines []byte) error {
	h := store.Handle{Kind: store.Segment, Name: newWriter(s.shard).ID() + segmentExt}
	err := s.b.Save(ctx, h, func(w io.Writer) error {
		_, err := w.Write(lines)
		return err
	})
	if err == nil {
		err = s.b.Flush(ctx, h)
	}
	if err != nil {
		return fmt.Errorf("append to registry %s: %w", s.b.Path(h), err)
	}
	s.seg = s.b.Path(h)
	return nil
}

// readKnownObjects is readKnown for object storage: the whole registry,
// once per Store; later records are this Store's own, added by Append.
func (s *Store) readKnownObjects(ctx context.Context) error {
	if s.known != nil {
		return nil
	}
	files, err := s.openRegistry()
	if err != nil {
		return err
	}
	known := map[recordKey]bool{}
	var dec decoder
	for _, rf := range files {
		_, err := rf.scan(nil, func(line []byte, _ int, _ int64) error {
			var r Record
			if dec.decode(line, &r) == nil && r.Hash != "" {
				k, err := keyOf(r)
				if err != nil {
					return err
				}
				known[k] = true
			}
			return nil
		}, nil)
		if err != nil {
			return err
		}
	}
	s.known = known
	return nil
}

// compactObjects is Compact for object storage: the merged segment is
// saved whole before the segments it merged are removed; they are never
// appended to, so none holds a line the merged one lacks.
func (s *Store) compactObjects(ctx context.Context, keep func(Record) bool) (int, error) {
	files, err := s.openRegistry()
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, nil
	}
	h, _, err := headerOf(files)
	if err != nil {
		return 0, err
	}
	var out bytes.Buffer
	dropped, partial, err := writeMerged(&out, h, files, keep, nil)
	if err != nil {
		return 0, err
	}
	if dropped == 0 && len(files) == 1 && !partial {
		return 0, nil // one segment already
	}
	seg := store.Handle{Kind: store.Segment, Name: newWriter(s.shard).ID() + segmentExt}
	err = s.b.Save(ctx, seg, func(w io.Writer) error {
		_, err := w.Write(out.Bytes())
		return err
	})
	if err == nil {
		err = s.b.Flush(ctx, seg)
	}
	if err != nil {
		return 0, fmt.Errorf("compact registry into %s: %w", s.b.Path(seg), err)
	}
	for _, rf := range files {
		name := rf.name[len(SegmentsDir)+1:]
		if err := s.b.Remove(ctx, store.Handle{Kind: store.Segment, Name: name}); err != nil && !errors.Is(err, store.ErrNotExist) {
			return 0, fmt.Errorf("remove compacted registry %s: %w", rf.path, err)
		}
	}
	if err := s.b.Flush(ctx); err != nil {
		return 0, err
	}
	s.known = nil
	return dropped, nil
}
