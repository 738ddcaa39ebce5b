package registry

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
)

// An index is a cache beside a segment of a local store that says which
// of its lines name a given hash, tool call or entry id, session, tool or
// source, so that a reader looking for a few records reads those lines
// and not the whole registry (see the package doc, # Indexes). It is
// never trusted over its segment: one that does not match it is ignored.

// Field is a field of a record a reader can look records up by.
type Field uint8

// The fields records can be looked up by.
const (
	FieldHash    Field = iota + 1 // Record.Hash
	FieldID                       // Record.ToolCallID or Record.Entry
	FieldSession                  // Record.Session
	FieldTool                     // Record.Tool
	FieldSource                   // Record.Source
)

// Key names the records whose Field is Value.
type Key struct {
	Field Field
	Value string
}

// indexExt ends the name of a segment's index, which is the segment's
// name with indexExt for segmentExt; it is not a segment's.
const indexExt = ".idx"

// indexMinSize is the size from which a segment has an index: a smaller
// one is read whole faster than its index is checked. A variable for
// tests.
var indexMinSize int64 = 1 << 20

// indexVersion is the version of the index format, in its header.
const indexVersion = 2

var indexMagic = []byte("ttregidx")

// indexPath returns the path of the index of the segment at path.
func indexPath(path string) string { return strings.TrimSuffix(path, segmentExt) + indexExt }

// fingerprint is what an index keeps of a key: records whose keys share
// one are all read, and the caller tells them apart.
func fingerprint(k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(k.Field)})
	io.WriteString(h, k.Value)
	return h.Sum64()
}

// The format's fixed sizes: the header (magic, version, length covered,
// inode, sample SHA-256, numbers of lines, of lines always read and of
// keys), and a key (fingerprint, line number).
const (
	indexHead = 8 + 4 + 8 + 8 + sha256.Size + 8 + 8 + 8
	keySize   = 8 + 4
)

// indexSize is the size of an index of nlines lines, nalways of them
// always read, and nkeys keys: every section is of fixed-size entries, so
// that a reader finds any entry with one pread.
func indexSize(nlines, nalways, nkeys int64) int64 {
	return indexHead + 8*(nlines+1) + 4*nalways + keySize*nkeys + 4
}

// index is a segment's index, open: it is read a few entries at a time,
// never whole, so that a lookup in a registry of millions of records
// holds only what it finds.
type index struct {
	f                      *os.File
	covered                int64 // the segment's bytes it covers, whole lines
	nlines, nalways, nkeys int64
	buf                    []byte
}

func (ix *index) close() { ix.f.Close() }

func (ix *index) alwaysAt() int64 { return indexHead + 8*(ix.nlines+1) }
func (ix *index) keysAt() int64   { return ix.alwaysAt() + 4*ix.nalways }

// read returns the n bytes of the index at off, valid until the next read.
func (ix *index) read(off int64, n int) ([]byte, error) {
	ix.buf = slices.Grow(ix.buf[:0], n)[:n]
	if _, err := ix.f.ReadAt(ix.buf, off); err != nil {
		return nil, err
	}
	return ix.buf, nil
}

// fpAt returns the fingerprint of key i.
func (ix *index) fpAt(i int64) (uint64, error) {
	b, err := ix.read(ix.keysAt()+keySize*i, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// keysPerRead is how many keys a lookup reads at once past the first.
const keysPerRead = 4096 / keySize

// lines returns the numbers (from 0) of the lines that may hold a record
// matching one of keys, in order: those of the keys, and those the index
// always returns (lines that are not records, or not of an artifact).
func (ix *index) lines(keys []Key) ([]uint32, error) {
	var out []uint32
	for i := int64(0); i < ix.nalways; i += 1024 {
		b, err := ix.read(ix.alwaysAt()+4*i, 4*int(min(1024, ix.nalways-i)))
		if err != nil {
			return nil, err
		}
		for ; len(b) > 0; b = b[4:] {
			out = append(out, binary.LittleEndian.Uint32(b))
		}
	}
	for _, k := range keys {
		fp := fingerprint(k)
		// The first key of fp, by binary search: a pread each step.
		lo, hi := int64(0), ix.nkeys
		for lo < hi {
			m := int64(uint64(lo+hi) >> 1)
			v, err := ix.fpAt(m)
			if err != nil {
				return nil, err
			}
			if v < fp {
				lo = m + 1
			} else {
				hi = m
			}
		}
	run:
		for i := lo; i < ix.nkeys; i += keysPerRead {
			b, err := ix.read(ix.keysAt()+keySize*i, keySize*int(min(keysPerRead, ix.nkeys-i)))
			if err != nil {
				return nil, err
			}
			for ; len(b) > 0; b = b[keySize:] {
				if binary.LittleEndian.Uint64(b) != fp {
					break run
				}
				out = append(out, binary.LittleEndian.Uint32(b[8:]))
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 0 && int64(out[len(out)-1]) >= ix.nlines {
		return nil, errors.New("a line past those it covers")
	}
	return out, nil
}

// span returns where line n (from 0) starts and ends.
func (ix *index) span(n uint32) (off, end int64, err error) {
	b, err := ix.read(indexHead+8*int64(n), 16)
	if err != nil {
		return 0, 0, err
	}
	off, end = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if off < 0 || end <= off || end > ix.covered {
		return 0, 0, errors.New("a bad line offset")
	}
	return off, end, nil
}

// indexBuilder makes the index of a segment from its lines, in order, in
// bounded memory: past a few MiB, the offsets of lines and sorted runs of
// keys go to a temporary file, merged when the index is written. Its zero
// value is ready to use.
type indexBuilder struct {
	nlines, covered int64
	always          []uint32
	offs            []byte    // offsets of lines not yet spilled, 8 bytes each
	ents            []posting // keys not yet spilled
	nkeys           int64
	spill           *os.File // unlinked: gone with the builder, whatever happens
	spilled         int64
	offChunks, runs []chunk // where spilled offsets and runs of keys are
	err             error   // a failure to spill: no index is written
	dec             decoder
	keys            []uint64 // of the line being added
}

type posting struct {
	fp   uint64
	line uint32
}

// chunk is a part of a builder's spill file.
type chunk struct{ off, n int64 }

// The builder's bounds: how many keys, and how many bytes of offsets, it
// holds before it spills them. Variables for tests.
var (
	maxHeldKeys = 1 << 18
	maxHeldOffs = 1 << 20
)

// addLong adds the segment's next line when it is over maxLine, of size
// bytes: it holds no record, and is read each time, to be reported.
func (b *indexBuilder) addLong(size int64) {
	b.always = append(b.always, uint32(b.nlines))
	b.addLine(size)
}

// addLine records the offset of the next line, size bytes long.
func (b *indexBuilder) addLine(size int64) {
	b.offs = binary.LittleEndian.AppendUint64(b.offs, uint64(b.covered))
	b.nlines++
	b.covered += size
	if len(b.offs) >= maxHeldOffs {
		b.offChunks = append(b.offChunks, b.write(b.offs))
		b.offs = b.offs[:0]
	}
}

// write appends p to the spill file and returns where it is.
func (b *indexBuilder) write(p []byte) chunk {
	if b.err != nil {
		return chunk{}
	}
	if b.spill == nil {
		f, err := os.CreateTemp("", ".transcript-tool-index-*")
		if err != nil {
			b.err = err
			return chunk{}
		}
		os.Remove(f.Name())
		b.spill = f
	}
	c := chunk{b.spilled, int64(len(p))}
	if _, err := b.spill.WriteAt(p, b.spilled); err != nil {
		b.err = err
	}
	b.spilled += int64(len(p))
	return c
}

// close releases the spill file.
func (b *indexBuilder) close() {
	if b.spill != nil {
		b.spill.Close()
		b.spill = nil
	}
}

// add adds the segment's next line, with its newline.
func (b *indexBuilder) add(line []byte) {
	n := uint32(b.nlines)
	b.addLine(int64(len(line)))
	var r Record
	if err := b.dec.decode(line, &r); err != nil || r.Hash == "" {
		b.always = append(b.always, n)
		return
	}
	if _, err := store.ParseDigest(r.Hash); err != nil {
		b.always = append(b.always, n)
		return
	}
	b.keys = b.keys[:0]
	key := func(f Field, v string) {
		if v != "" {
			b.keys = append(b.keys, fingerprint(Key{f, v}))
		}
	}
	key(FieldHash, r.Hash)
	key(FieldSession, r.Session)
	key(FieldSource, r.Source)
	_ = r.places(func(p Record) error {
		key(FieldTool, p.Tool)
		key(FieldID, p.ToolCallID)
		key(FieldID, p.Entry)
		return nil
	})
	slices.Sort(b.keys)
	for _, fp := range slices.Compact(b.keys) {
		b.ents = append(b.ents, posting{fp, n})
	}
	if len(b.ents) >= maxHeldKeys {
		b.spillRun()
	}
}

func comparePostings(x, y posting) int {
	return cmp.Or(cmp.Compare(x.fp, y.fp), cmp.Compare(x.line, y.line))
}

// spillRun writes the keys held, sorted, to the spill file as a run.
func (b *indexBuilder) spillRun() {
	slices.SortFunc(b.ents, comparePostings)
	buf := make([]byte, 0, keySize*len(b.ents))
	for _, p := range b.ents {
		buf = appendPosting(buf, p)
	}
	b.runs = append(b.runs, b.write(buf))
	b.nkeys += int64(len(b.ents))
	b.ents = b.ents[:0]
}

func appendPosting(buf []byte, p posting) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, p.fp)
	return binary.LittleEndian.AppendUint32(buf, p.line)
}

// run is a sorted run of keys being merged, and its next key.
type run struct {
	r    *bufio.Reader
	head posting
}

// next reads the run's next key, reporting false at its end.
func (r *run) next() (bool, error) {
	var k [keySize]byte
	if _, err := io.ReadFull(r.r, k[:]); err == io.EOF {
		return false, nil
	} else if err != nil {
		return false, err
	}
	r.head = posting{binary.LittleEndian.Uint64(k[:]), binary.LittleEndian.Uint32(k[8:])}
	return true, nil
}

// mergeKeys writes every key added, in order, to w: the sorted runs
// spilled, merged, the keys held being one more.
func (b *indexBuilder) mergeKeys(w io.Writer) error {
	if len(b.ents) > 0 && len(b.runs) > 0 {
		b.spillRun()
	}
	if b.err != nil {
		return b.err
	}
	if len(b.runs) == 0 {
		slices.SortFunc(b.ents, comparePostings)
		var buf []byte
		for _, p := range b.ents {
			buf = appendPosting(buf[:0], p)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	}
	runs := make([]*run, 0, len(b.runs))
	for _, c := range b.runs {
		r := &run{r: bufio.NewReaderSize(io.NewSectionReader(b.spill, c.off, c.n), 16<<10)}
		if ok, err := r.next(); err != nil {
			return err
		} else if ok {
			runs = append(runs, r)
		}
	}
	var buf []byte
	for len(runs) > 0 {
		// A few runs a million keys each: a linear look for the least
		// head costs less than keeping a heap.
		least := 0
		for i, r := range runs {
			if comparePostings(r.head, runs[least].head) < 0 {
				least = i
			}
		}
		r := runs[least]
		buf = appendPosting(buf[:0], r.head)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if !ok {
			runs = slices.Delete(runs, least, least+1)
		}
	}
	return nil
}

// encode writes the index of the lines added, covering that many bytes of
// the segment f, the file whose inode is ino, to w.
func (b *indexBuilder) encode(w io.Writer, f io.ReaderAt, ino uint64) error {
	sum, err := sampleSum(f, b.covered)
	if err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	head := append([]byte(nil), indexMagic...)
	head = binary.LittleEndian.AppendUint32(head, indexVersion)
	head = binary.LittleEndian.AppendUint64(head, uint64(b.covered))
	head = binary.LittleEndian.AppendUint64(head, ino)
	head = append(head, sum[:]...)
	head = binary.LittleEndian.AppendUint64(head, uint64(b.nlines))
	head = binary.LittleEndian.AppendUint64(head, uint64(len(b.always)))
	head = binary.LittleEndian.AppendUint64(head, uint64(b.nkeys)+uint64(len(b.ents)))
	bw.Write(head)
	for _, c := range b.offChunks {
		if _, err := io.Copy(bw, io.NewSectionReader(b.spill, c.off, c.n)); err != nil {
			return err
		}
	}
	bw.Write(b.offs)
	bw.Write(binary.LittleEndian.AppendUint64(nil, uint64(b.covered)))
	var n [4]byte
	for _, l := range b.always {
		binary.LittleEndian.PutUint32(n[:], l)
		bw.Write(n[:])
	}
	if err := b.mergeKeys(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err = w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openIndex returns the index in xf, if it is whole and of the segment
// f, whose inode is ino, as it is now (size bytes). It checks the whole
// index's CRC-32C, reading it a piece at a time.
func openIndex(xf *os.File, f io.ReaderAt, ino uint64, size int64) (*index, error) {
	fi, err := xf.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a file")
	}
	var head [indexHead]byte
	if _, err := xf.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:8], indexMagic) {
		return nil, errors.New("not an index")
	}
	if v := binary.LittleEndian.Uint32(head[8:]); v != indexVersion {
		return nil, fmt.Errorf("version %d", v)
	}
	at := head[12:]
	u64 := func() int64 {
		v := binary.LittleEndian.Uint64(at)
		at = at[8:]
		return int64(min(v, math.MaxInt64/64))
	}
	ix := &index{f: xf, covered: u64()}
	if uint64(u64()) != ino {
		return nil, errors.New("of another file")
	}
	sum := at[:sha256.Size]
	at = at[sha256.Size:]
	ix.nlines, ix.nalways, ix.nkeys = u64(), u64(), u64()
	if ix.covered < 0 || ix.covered > size {
		return nil, errors.New("covers more than the segment holds")
	}
	if ix.nlines > math.MaxUint32 || ix.nlines > ix.covered || ix.nalways > ix.nlines || ix.nkeys > ix.covered ||
		indexSize(ix.nlines, ix.nalways, ix.nkeys) != fi.Size() {
		return nil, errors.New("malformed")
	}
	crc := crc32.New(castagnoli)
	if _, err := io.Copy(crc, io.NewSectionReader(xf, 0, fi.Size()-4)); err != nil {
		return nil, err
	}
	var tail [4]byte
	if _, err := xf.ReadAt(tail[:], fi.Size()-4); err != nil || binary.LittleEndian.Uint32(tail[:]) != crc.Sum32() {
		return nil, errors.New("damaged (checksum)")
	}
	got, err := sampleSum(f, ix.covered)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(got[:], sum) {
		return nil, errors.New("of other bytes")
	}
	return ix, nil
}

// sampleSum returns the SHA-256 of samples of f's first n bytes: its
// first and last 64 KiB and 4 KiB at 16 places between, so that a
// segment made anew, cut or rewritten under its index is told from the
// one indexed, for the price of a few reads rather than one of all of
// it. (Segments are only appended to; an index records its segment's
// inode too.)
func sampleSum(f io.ReaderAt, n int64) ([sha256.Size]byte, error) {
	h := sha256.New()
	var buf [64 << 10]byte
	read := func(off, k int64) error {
		off, k = max(off, 0), min(k, n-max(off, 0))
		if k <= 0 {
			return nil
		}
		if _, err := f.ReadAt(buf[:k], off); err != nil {
			return err
		}
		h.Write(buf[:k])
		return nil
	}
	if err := read(0, int64(len(buf))); err != nil {
		return [sha256.Size]byte{}, err
	}
	for i := int64(1); i <= 16; i++ {
		if err := read(n*i/17, 4<<10); err != nil {
			return [sha256.Size]byte{}, err
		}
	}
	if err := read(n-int64(len(buf)), int64(len(buf))); err != nil {
		return [sha256.Size]byte{}, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, nil
}

// inode returns the inode number of f.
func inode(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	ino, ok := inodeOf(fi)
	if !ok {
		return 0, errors.New("no inode")
	}
	return ino, nil
}

// inodeOf returns the inode number of the file fi describes.
func inodeOf(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// loadIndex returns the index of rf, a segment of a local store, open,
// or nil when it has none that matches it as it is now.
func loadIndex(rf *regFile) *index {
	f, ok := rf.f.(*os.File)
	if !ok || rf.name == RegistryFile || rf.size < indexMinSize {
		return nil
	}
	ino, err := inode(f)
	if err != nil {
		return nil
	}
	xf, err := openNoFollow(indexPath(rf.path))
	if err != nil {
		return nil
	}
	ix, err := openIndex(xf, f, ino, rf.size)
	if err != nil {
		xf.Close()
		return nil
	}
	return ix
}

// stale reports whether so much was appended to ix's segment since it
// was built that it is better built again than its tail read.
func (ix *index) stale(size int64) bool {
	return size-ix.covered > max(indexMinSize, ix.covered/8)
}

// writeIndex writes the index b holds of the segment at path, open as f,
// atomically: a temporary file beside it, fsynced, renamed, the
// directory fsynced. An index is a cache: the caller may ignore the
// error (a store the reader may not write to has none).
func writeIndex(b *indexBuilder, path string, f *os.File) error {
	defer b.close()
	ino, err := inode(f)
	if err != nil {
		return err
	}
	out, err := safefile.Create(indexPath(path), filePerm)
	if err != nil {
		return err
	}
	defer out.Abort()
	if err := b.encode(out, f, ino); err != nil {
		return err
	}
	return out.Commit()
}

// indexMerged writes the index of the segment a compaction has just
// merged into path, b having been given its lines, if it is large enough
// to have one. It is a cache: a failure leaves the segment without one,
// and the next reader that looks up records in it makes it.
func indexMerged(b *indexBuilder, path string) {
	defer b.close()
	f, err := openNoFollow(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < indexMinSize {
		return
	}
	_ = writeIndex(b, path, f)
}

// removeStrayIndexes removes the indexes in dir, the folder of segments,
// whose segments are gone: those of segments a compaction removed, and
// any a reader wrote meanwhile. The caller holds the store's lock
// exclusively.
func removeStrayIndexes(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	present := map[string]bool{}
	for _, e := range entries {
		present[e.Name()] = true
	}
	for _, e := range entries {
		name := e.Name()
		if isTemp(name) || !strings.HasSuffix(name, indexExt) || !e.Type().IsRegular() {
			continue
		}
		if !present[strings.TrimSuffix(name, indexExt)+segmentExt] {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}
