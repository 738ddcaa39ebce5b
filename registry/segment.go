package registry

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/transcript-tool/transcript-tool/store"
)

// segmentExt ends the name of every segment, <writer id>.jsonl; other
// files of kind store.Segment (indexes, torn tails set aside) are not
// segments.
const segmentExt = ".jsonl"

// Shard is the share of the inputs a writer takes, K of N (the --shard
// K/N of the command line); the zero Shard is all of them.
type Shard struct{ K, N int }

// Writer names the writer of one segment.
type Writer struct {
	Host  string
	PID   int
	Start time.Time // when the segment was started
	// Seq tells apart the segments one process starts: those of two
	// Stores opened on one store (two writers, even in one process), and
	// the new segment a Store starts when a collector has compacted its
	// last one away.
	Seq   uint64
	Shard Shard
}

// writerSeq numbers the writers of this process.
var writerSeq atomic.Uint64

// newWriter returns a Writer that no other segment of this process has
// had, and that no other process's can have but by a host name, process
// id and start time all equal.
func newWriter(shard Shard) Writer {
	host, pid := store.Process()
	return Writer{Host: host, PID: pid, Start: time.Now().UTC(), Seq: writerSeq.Add(1), Shard: shard}
}

// ID returns w's id, the name of its segment without ".jsonl": its start
// time (UTC, to the nanosecond), host, process id, sequence number and,
// for a shard, "s<K>of<N>", joined by "_". The start time comes first, so
// that segments sorted by name, the order readers merge them in, are
// roughly in the order they were started: the first record of an
// artifact is then its oldest. The host is cut to 64 bytes of letters,
// digits, '.' and '-', any other byte made '-', so that the id is a safe
// file name on every system, and never starts with '.'.
func (w Writer) ID() string {
	var host strings.Builder
	for i := 0; i < len(w.Host) && host.Len() < 64; i++ {
		c := w.Host[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			host.WriteByte(c)
		} else {
			host.WriteByte('-')
		}
	}
	id := w.Start.UTC().Format("20060102T150405.000000000Z") + "_" + host.String() + "_" +
		strconv.Itoa(w.PID) + "_" + strconv.FormatUint(w.Seq, 10)
	if w.Shard.N > 0 {
		id += fmt.Sprintf("_s%dof%d", w.Shard.K, w.Shard.N)
	}
	return id
}

// segmentHandle returns the handle of the segment of writer w.
func segmentHandle(w Writer) store.Handle {
	return store.Handle{Kind: store.Segment, Name: w.ID() + segmentExt}
}

// header is the first line of a segment written by Compact: the files
// whose whole lines it holds, each up to a length and identified by the
// SHA-256 of its bytes up to there, so that a file made anew under a
// compacted file's name (by a writer of the single-file registry) is
// never taken for it. It has no "hash", so that no reader takes it for a
// record.
type header struct {
	Compacts []covered `json:"compacts"`
}

type covered struct {
	File   string `json:"file"` // relative to the store, with '/'
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

var headerPrefix = []byte(`{"compacts":`)

// regFile is one file of the registry opened by openRegistry.
type regFile struct {
	h    store.Handle
	path string // for messages (see Store.where)
	f    store.File
	size int64  // when opened: bytes appended since are not read
	id   uint64 // the file's store.FileInfo.ID when opened
	// from is the offset up to which a compacted segment holds the
	// file's lines, with lines lines before it; reading starts there.
	from  int64
	lines int
	// header is the length of the segment's header line, if it has one.
	header  int64
	compact header
}

func closeAll(files []*regFile) {
	for _, rf := range files {
		rf.f.Close()
	}
}

// maxListings bounds how often openRegistry lists the registry again
// because a file it listed was removed before it opened it: once for
// each compaction that ends meanwhile.
const maxListings = 100

// openRegistry opens the single-file registry of earlier versions, then
// every segment, sorted by name, all at once, so that what it returns is
// one state of the registry (see docs/registry-index.md, # Compaction): a
// segment listed and then removed before it is opened was merged into a
// compacted segment saved before its removal, so the files are listed and
// opened again. A file that an opened compacted segment holds is read
// only past what it holds. A store without a registry has no files. The
// caller closes the files.
func (s *Store) openRegistry(ctx context.Context) ([]*regFile, error) {
	for try := 0; ; try++ {
		files, err := s.tryOpenRegistry(ctx)
		if errors.Is(err, store.ErrNotExist) && try < maxListings {
			continue
		}
		if err != nil {
			return nil, err
		}
		if try < maxListings {
			again, err := s.compactedSince(ctx, files)
			if err != nil || again {
				closeAll(files)
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		if err := cover(files); err != nil {
			closeAll(files)
			return nil, err
		}
		return files, nil
	}
}

// compactedSince reports whether the registry now has a compacted
// segment that holds a file that is not among files, the files opened
// from a listing. A listing is not one state of the registry: a local
// folder's is read name by name, so a file removed while it is read may
// be left out, and a file made meanwhile missed. A compaction that ends
// meanwhile can thus hide both the segments it merged and the segment it
// made; but that segment, saved before the files it merges are removed,
// is under its name when the registry is listed again, and the reader
// lists anew.
func (s *Store) compactedSince(ctx context.Context, files []*regFile) (bool, error) {
	opened := make(map[string]bool, len(files))
	for _, rf := range files {
		opened[store.Key(rf.h)] = true
	}
	entries, err := s.registryFiles(ctx)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if opened[store.Key(e.h)] || e.h.Kind != store.Segment || e.fi.Bad != nil {
			continue
		}
		f, fi, err := s.open(ctx, e, &spool{})
		if errors.Is(err, store.ErrNotExist) {
			return true, nil // compacted away in turn
		}
		if err != nil {
			return false, fmt.Errorf("open registry %s: %w", s.where(e.h), err)
		}
		rf := &regFile{h: e.h, path: s.where(e.h), f: f, size: fi.Size}
		err = rf.readHeader()
		f.Close()
		if err != nil {
			return false, fmt.Errorf("read registry %s: %w", rf.path, err)
		}
		for _, c := range rf.compact.Compacts {
			if !opened[c.File] {
				return true, nil
			}
		}
	}
	return false, nil
}

// tryOpenRegistry lists and opens the registry's files; an error wrapping
// store.ErrNotExist says that a file listed was gone when it was opened.
func (s *Store) tryOpenRegistry(ctx context.Context) ([]*regFile, error) {
	entries, err := s.registryFiles(ctx)
	if err != nil {
		return nil, err
	}
	listed()
	files := make([]*regFile, 0, len(entries))
	sp := &spool{}
	for _, e := range entries {
		f, fi, err := s.open(ctx, e, sp)
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("open registry %s: %w", s.where(e.h), err)
		}
		rf := &regFile{h: e.h, path: s.where(e.h), f: f, size: fi.Size, id: fi.ID}
		files = append(files, rf)
		if e.h.Kind == store.Segment {
			if err := rf.readHeader(); err != nil {
				closeAll(files)
				return nil, fmt.Errorf("read registry %s: %w", rf.path, err)
			}
		}
	}
	return files, nil
}

// listed is called between the listing of the registry's files and their
// opening, for tests that compact the registry there.
var listed = func() {}

// listedFile is a file of the registry as its backend listed it.
type listedFile struct {
	h  store.Handle
	fi store.FileInfo
}

// registryFiles lists the registry's files: the single-file registry
// first, if it is there, then the segments sorted by name, which is the
// order readers merge them in. What stands under a registry file's name
// and is no file (a link, a folder) is listed too, with fi.Bad set:
// opening it says what it is, and it is refused.
func (s *Store) registryFiles(ctx context.Context) ([]listedFile, error) {
	var out []listedFile
	err := s.b.List(ctx, store.Legacy, "", func(fi store.FileInfo) error {
		if fi.Name == store.RegistryFile {
			out = append(out, listedFile{legacy, fi})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list registry: %w", err)
	}
	var segs []listedFile
	err = s.b.List(ctx, store.Segment, "", func(fi store.FileInfo) error {
		// What is no file is named by its path relative to the store.
		if name := path.Base(filepath.ToSlash(fi.Name)); isSegment(name) {
			segs = append(segs, listedFile{store.Handle{Kind: store.Segment, Name: name}, fi})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list registry: %w", err)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].h.Name < segs[j].h.Name })
	return append(out, segs...), nil
}

// open opens a file of the registry as listed, through sp, and describes
// it as it was opened: with the ID its listing gave, if the file loaded
// has none (a backend that reads files whole, see spool). Should the file
// have been replaced between the two, the ID is the wrong file's, and the
// file is taken to have changed since: kept by Compact, read again by
// readKnown.
func (s *Store) open(ctx context.Context, e listedFile, sp *spool) (store.File, store.FileInfo, error) {
	f, err := sp.load(ctx, s.b, e.h)
	if err != nil {
		return nil, store.FileInfo{}, err
	}
	fi := f.Stat()
	if fi.ID == 0 {
		fi.ID = e.fi.ID
	}
	return f, fi, nil
}

// isSegment reports whether the name of a file of kind store.Segment is a
// segment's.
func isSegment(name string) bool {
	return strings.HasSuffix(name, segmentExt) && len(name) > len(segmentExt) && !store.IsTemp(name)
}

// readHeader reads a segment's header line, if it starts with one.
func (rf *regFile) readHeader() error {
	if rf.size < int64(len(headerPrefix)) {
		return nil
	}
	br := bufio.NewReader(io.NewSectionReader(rf.f, 0, min(rf.size, maxHeader)))
	start, err := br.Peek(len(headerPrefix))
	if err != nil || !bytes.Equal(start, headerPrefix) {
		return err
	}
	line, err := br.ReadBytes('\n')
	if err == io.EOF {
		return nil // torn, or longer than a header: not a header
	}
	if err != nil {
		return err
	}
	var h header
	if api.Unmarshal(line, &h) != nil {
		return nil // a bad line, for the readers to report
	}
	rf.header, rf.compact = int64(len(line)), h
	return nil
}

// cover sets where reading each file starts: past the lines a compacted
// segment among files holds, when the file still has those very bytes.
func cover(files []*regFile) error {
	byName := map[string][]covered{}
	for _, rf := range files {
		for _, c := range rf.compact.Compacts {
			byName[c.File] = append(byName[c.File], c)
		}
	}
	for _, rf := range files {
		for _, c := range byName[store.Key(rf.h)] {
			if c.Size <= rf.from || c.Size > rf.size {
				continue
			}
			sum, lines, err := prefixSum(rf.f, c.Size)
			if err != nil {
				return fmt.Errorf("read registry %s: %w", rf.path, err)
			}
			if sum == c.SHA256 {
				rf.from, rf.lines = c.Size, lines
			}
		}
	}
	return nil
}

// prefixSum returns the hex SHA-256 of f's first n bytes and how many
// lines they end.
func prefixSum(f io.ReaderAt, n int64) (string, int, error) {
	h := sha256.New()
	lines := 0
	buf := make([]byte, 64<<10)
	r := io.NewSectionReader(f, 0, n)
	for {
		k, err := r.Read(buf)
		h.Write(buf[:k])
		lines += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return hex.EncodeToString(h.Sum(nil)), lines, nil
		}
		if err != nil {
			return "", 0, err
		}
	}
}

// maxLine bounds a registry line that is read: a record takes a few
// hundred bytes, and Append splits one of many places to fit (see fit).
// A longer line is not a record: it is reported as a bad line and passed
// over, never held, so that a line of hundreds of megabytes costs a
// reader no memory.
const maxLine = 1 << 20

// maxHeader bounds the header line of a compacted segment: it names every
// file the compaction merged, some 200 bytes each. A first line that
// starts like a header but runs longer is not one.
const maxHeader = 16 << 20

// LineTooLongError is the error of a registry line over maxLine bytes.
type LineTooLongError struct{ Size int64 }

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("a line of %d bytes, over the %d a registry record may take", e.Size, maxLine)
}

// scan calls fn for each whole line of rf past what a compacted segment
// holds, but its header, with the line's number (from 1) and offset (the
// line's bytes are fn's only until it returns), and
// returns the offset just past the last whole line: a torn last line is
// never passed. A line longer than maxLine is not read into memory: it
// is passed to tooLong instead, with its length, or passed over if
// tooLong is nil. With h, the bytes of rf up to that offset, all of
// them, are also written to h.
func (rf *regFile) scan(h hash.Hash, fn func(line []byte, n int, off int64) error, tooLong func(n int, off, size int64) error) (int64, error) {
	start, n := rf.from, rf.lines
	if h != nil {
		start, n = 0, 0
	}
	br := bufio.NewReaderSize(io.NewSectionReader(rf.f, start, rf.size-start), 64<<10)
	off := start
	var (
		long   []byte // a line longer than br's buffer, read again whole
		pieced bool   // the line is longer than br's buffer
		size   int64  // the bytes of the line read so far
	)
	for {
		// The line is fn's only until it returns: no copy for a line that
		// fits in br's buffer, which every record does.
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		pieced = pieced || err == bufio.ErrBufferFull
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			n++
			line := chunk
			switch {
			case size > maxLine:
				line = nil
			case pieced:
				// Read again once its length is known: put together
				// piece by piece, it would be copied as it grew.
				long = slices.Grow(long[:0], int(size))[:size]
				if _, err := rf.f.ReadAt(long, off); err != nil {
					return off, err
				}
				line = long
			}
			if h != nil {
				if line != nil {
					h.Write(line)
				} else if _, err := io.Copy(h, io.NewSectionReader(rf.f, off, size)); err != nil {
					return off, err
				}
			}
			if off >= rf.from && !(off == 0 && rf.header > 0) {
				var ferr error
				switch {
				case line != nil:
					ferr = fn(line, n, off)
				case tooLong != nil:
					ferr = tooLong(n, off, size)
				}
				if ferr != nil {
					return off, ferr
				}
			}
			off += size
		}
		pieced, size = false, 0
		if err == io.EOF {
			return off, nil // a torn tail, if any, is not a line
		}
		if err != nil {
			return off, err
		}
	}
}
