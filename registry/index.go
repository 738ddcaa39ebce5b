package registry

import (
	"bytes"
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
const indexVersion = 1

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

// index is a segment's index, loaded.
type index struct {
	covered int64   // the segment's bytes it covers, whole lines
	offs    []int64 // where each line it covers starts, and covered
	keys    []byte  // 16 bytes a key, sorted: fingerprint, then posting
	posts   []byte  // lists of line numbers, for keys of several lines
	always  []uint32
}

// single marks a posting that is one line's number rather than where its
// list starts in posts.
const single = 1 << 63

// lines returns the numbers (from 0) of the lines that may hold a record
// matching one of keys, in order: those of the keys, and those the index
// always returns (lines that are not records, or not of an artifact).
func (ix *index) lines(keys []Key) ([]uint32, error) {
	out := slices.Clone(ix.always)
	n := len(ix.keys) / 16
	for _, k := range keys {
		fp := fingerprint(k)
		lo, hi := 0, n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if binary.LittleEndian.Uint64(ix.keys[16*m:]) < fp {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == n || binary.LittleEndian.Uint64(ix.keys[16*lo:]) != fp {
			continue
		}
		p := binary.LittleEndian.Uint64(ix.keys[16*lo+8:])
		if p&single != 0 {
			out = append(out, uint32(p&^single))
			continue
		}
		list, err := decodeList(ix.posts, p)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 0 && int(out[len(out)-1]) >= len(ix.offs)-1 {
		return nil, errors.New("a line past those it covers")
	}
	return out, nil
}

// decodeList decodes the list of line numbers at posts[at:]: its length,
// then each number less the one before it, as uvarints.
func decodeList(posts []byte, at uint64) ([]uint32, error) {
	if at >= uint64(len(posts)) {
		return nil, errors.New("a list past its end")
	}
	b := posts[at:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errors.New("a bad list")
	}
	b = b[k:]
	out := make([]uint32, 0, n)
	var v uint64
	for range n {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errors.New("a bad list")
		}
		b, v = b[k:], v+d
		if v > math.MaxUint32 {
			return nil, errors.New("a bad list")
		}
		out = append(out, uint32(v))
	}
	return out, nil
}

// indexBuilder makes the index of a segment from its lines, in order.
type indexBuilder struct {
	lens   []uint64
	ents   []posting
	always []uint32
	dec    decoder
	keys   []uint64 // of the line being added
}

type posting struct {
	fp   uint64
	line uint32
}

// addLong adds the segment's next line when it is over maxLine, of size
// bytes: it holds no record, and is read each time, to be reported.
func (b *indexBuilder) addLong(size int64) {
	b.always = append(b.always, uint32(len(b.lens)))
	b.lens = append(b.lens, uint64(size))
}

// add adds the segment's next line, with its newline.
func (b *indexBuilder) add(line []byte) {
	n := uint32(len(b.lens))
	b.lens = append(b.lens, uint64(len(line)))
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
}

// encode returns the index of the lines added, covering that many bytes
// of the segment f, the file whose inode is ino.
func (b *indexBuilder) encode(f io.ReaderAt, ino uint64) ([]byte, error) {
	var covered int64
	for _, n := range b.lens {
		covered += int64(n)
	}
	sum, err := sampleSum(f, covered)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(b.ents, func(x, y posting) int {
		if x.fp != y.fp {
			if x.fp < y.fp {
				return -1
			}
			return 1
		}
		return int(int64(x.line) - int64(y.line))
	})
	var keys, posts []byte
	for i := 0; i < len(b.ents); {
		j := i + 1
		for j < len(b.ents) && b.ents[j].fp == b.ents[i].fp {
			j++
		}
		keys = binary.LittleEndian.AppendUint64(keys, b.ents[i].fp)
		if j == i+1 {
			keys = binary.LittleEndian.AppendUint64(keys, single|uint64(b.ents[i].line))
		} else {
			keys = binary.LittleEndian.AppendUint64(keys, uint64(len(posts)))
			posts = appendList(posts, b.ents[i:j])
		}
		i = j
	}
	var lens []byte
	for _, n := range b.lens {
		lens = binary.AppendUvarint(lens, n)
	}
	always := make([]posting, len(b.always))
	for i, n := range b.always {
		always[i].line = n
	}
	out := append([]byte(nil), indexMagic...)
	out = binary.LittleEndian.AppendUint32(out, indexVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(covered))
	out = binary.LittleEndian.AppendUint64(out, ino)
	out = append(out, sum[:]...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(b.lens)))
	for _, sec := range [][]byte{lens, keys, posts, appendList(nil, always)} {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(sec)))
		out = append(out, sec...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendList appends the list of the lines of ps, in order (see
// decodeList).
func appendList(b []byte, ps []posting) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	var last uint32
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.line-last))
		last = p.line
	}
	return b
}

// decodeIndex returns the index in data, if it is whole and of the
// segment f, whose inode is ino, as it is now (size bytes).
func decodeIndex(data []byte, f io.ReaderAt, ino uint64, size int64) (*index, error) {
	const head = 8 + 4 + 8 + 8 + 32 + 8
	if len(data) < head+4 || !bytes.Equal(data[:8], indexMagic) {
		return nil, errors.New("not an index")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("damaged (checksum)")
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != indexVersion {
		return nil, fmt.Errorf("version %d", v)
	}
	ix := &index{covered: int64(binary.LittleEndian.Uint64(data[12:]))}
	if binary.LittleEndian.Uint64(data[20:]) != ino {
		return nil, errors.New("of another file")
	}
	if ix.covered < 0 || ix.covered > size {
		return nil, errors.New("covers more than the segment holds")
	}
	sum, err := sampleSum(f, ix.covered)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(sum[:], data[28:60]) {
		return nil, errors.New("of other bytes")
	}
	nlines := binary.LittleEndian.Uint64(data[60:])
	rest := body[head:]
	var secs [4][]byte
	for i := range secs {
		if len(rest) < 8 {
			return nil, errors.New("truncated")
		}
		n := binary.LittleEndian.Uint64(rest)
		if n > uint64(len(rest)-8) {
			return nil, errors.New("truncated")
		}
		secs[i], rest = rest[8:8+n], rest[8+n:]
	}
	if len(rest) != 0 || len(secs[1])%16 != 0 || nlines > uint64(len(secs[0])) {
		return nil, errors.New("malformed")
	}
	ix.offs = make([]int64, 0, nlines+1)
	var off int64
	for b := secs[0]; len(b) > 0; {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > uint64(ix.covered) {
			return nil, errors.New("malformed")
		}
		ix.offs = append(ix.offs, off)
		off, b = off+int64(n), b[k:]
	}
	if uint64(len(ix.offs)) != nlines || off != ix.covered {
		return nil, errors.New("malformed")
	}
	ix.offs = append(ix.offs, off)
	ix.keys, ix.posts = secs[1], secs[2]
	if ix.always, err = decodeList(secs[3], 0); err != nil {
		return nil, err
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

// maxIndex bounds the index a reader loads, against a file planted under
// an index's name: an index is far smaller than its segment.
func maxIndex(size int64) int64 { return 4<<10 + 2*size }

// loadIndex returns the index of rf, a segment of a local store, or nil
// when it has none that matches it as it is now.
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
	defer xf.Close()
	fi, err := xf.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndex(rf.size) {
		return nil
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(xf, data); err != nil {
		return nil
	}
	ix, err := decodeIndex(data, f, ino, rf.size)
	if err != nil {
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
	ino, err := inode(f)
	if err != nil {
		return err
	}
	data, err := b.encode(f, ino)
	if err != nil {
		return err
	}
	return safefile.WriteFile(indexPath(path), data, filePerm)
}

// indexMerged writes the index of the segment a compaction has just
// merged into path, b having been given its lines, if it is large enough
// to have one. It is a cache: a failure leaves the segment without one,
// and the next reader that looks up records in it makes it.
func indexMerged(b *indexBuilder, path string) {
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
