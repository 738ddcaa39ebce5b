package registry

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/store"
)

// An index is a cache beside a segment that says which
// of its lines name a given hash, tool call or entry id, session, tool or
// source, so that a reader looking for a few records reads those lines
// and not the whole registry (see docs/registry-index.md, # Indexes). It is
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
const indexVersion = 3

var indexMagic = []byte("ttregidx")

// maxHeld bounds the bytes each part of an index being built holds in
// memory (its line offsets, its keys, the places and the artifacts of
// its listing) before it spills them to a temporary file: an index of a
// registry of any size is built in a few MiB. A variable for tests.
var maxHeld = 2 << 20

// indexHandle returns the handle of the index of segment seg.
func indexHandle(seg store.Handle) store.Handle {
	return store.Handle{Kind: store.Segment, Name: strings.TrimSuffix(seg.Name, segmentExt) + indexExt}
}

// fingerprint is what an index keeps of a key: records whose keys share
// one are all read, and the caller tells them apart.
func fingerprint(k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(k.Field)})
	io.WriteString(h, k.Value)
	return h.Sum64()
}

// The format's fixed sizes: the header (magic, version, length covered,
// file ID, sample SHA-256, CRC-32C of the bytes covered, numbers of
// lines, of lines always read, of keys and of artifacts), and a key
// (fingerprint, line number).
const (
	indexHead = 8 + 4 + 8 + 8 + sha256.Size + 4 + 4*8
	keySize   = 8 + 4
)

// indexSize is the size of an index of nlines lines, nalways of them
// always read, nkeys keys and narts artifacts: every section is of
// fixed-size entries, so that a reader finds any entry with one pread.
func indexSize(nlines, nalways, nkeys, narts int64) int64 {
	return indexHead + 8*(nlines+1) + 4*nalways + keySize*nkeys + artSize*narts + 4
}

// index is a segment's index, open: it is read a few entries at a time,
// never whole, so that a lookup in a registry of millions of records
// holds only what it finds.
type index struct {
	f                             store.File
	covered                       int64  // the segment's bytes it covers, whole lines
	sum                           uint32 // their CRC-32C, which a listing checks
	nlines, nalways, nkeys, narts int64
	buf                           []byte
}

func (ix *index) close() { ix.f.Close() }

func (ix *index) alwaysAt() int64 { return indexHead + 8*(ix.nlines+1) }
func (ix *index) keysAt() int64   { return ix.alwaysAt() + 4*ix.nalways }
func (ix *index) artsAt() int64   { return ix.keysAt() + keySize*ix.nkeys }

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
	return binary.BigEndian.Uint64(b), nil
}

// keysPerRead is how many keys a lookup reads at once past the first.
const keysPerRead = 4096 / keySize

// errManyLines is the error of index.lines for keys that name more
// lines than the caller would hold: it reads the segment whole instead.
var errManyLines = errors.New("more lines than a lookup holds")

// maxLookupLines bounds the lines a lookup through an index holds, 4
// bytes each (twice as many, at most, before the lines of several keys
// are held once), and 8 more for each line passed on (see
// recordReader.file): 4 MiB. Past it, the segment is read whole. A
// variable for tests.
var maxLookupLines = 1 << 18

// minRecordLine is the fewest bytes a line holding a record of an
// artifact takes: its hash, in braces, and the newline.
const minRecordLine = len(`{"hash":""}`) + 2*sha256.Size + 1

// eachAlways calls fn with the number (from 0) of each line the index
// always returns, in order, reading 4 KiB of them at a time: lines that
// are not records, or not of an artifact. fn may read the index.
func (ix *index) eachAlways(fn func(n uint32) error) error {
	var held [4096]byte
	for i := int64(0); i < ix.nalways; i += 1024 {
		b, err := ix.read(ix.alwaysAt()+4*i, 4*int(min(1024, ix.nalways-i)))
		if err != nil {
			return err
		}
		for b = held[:copy(held[:], b)]; len(b) > 0; b = b[4:] {
			if err := fn(binary.LittleEndian.Uint32(b)); err != nil {
				return err
			}
		}
	}
	return nil
}

// lines returns the numbers (from 0) of the lines that may hold a record
// matching one of keys, in order, each once: those of the keys, and,
// with always, those the index always returns (see eachAlways). Past
// atMost of them it stops with errManyLines, having held no more: a
// registry of millions of lines that are not records, or of records of
// one key, is read whole rather than its line numbers held.
func (ix *index) lines(keys []Key, atMost int, always bool) ([]uint32, error) {
	var out []uint32
	add := func(n uint32) error {
		if len(out) >= 2*atMost {
			// A line of several keys is held once: twice atMost
			// lines are sorted, at most, each time.
			slices.Sort(out)
			if out = slices.Compact(out); len(out) > atMost {
				return errManyLines
			}
		}
		out = append(out, n)
		return nil
	}
	if always {
		if ix.nalways > int64(atMost) {
			return nil, errManyLines
		}
		if err := ix.eachAlways(add); err != nil {
			return nil, err
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
				if binary.BigEndian.Uint64(b) != fp {
					break run
				}
				if err := add(binary.BigEndian.Uint32(b[8:])); err != nil {
					return nil, err
				}
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > atMost {
		return nil, errManyLines
	}
	if len(out) > 0 && int64(out[len(out)-1]) >= ix.nlines {
		return nil, errors.New("a line past those it covers")
	}
	return out, nil
}

// eachArt calls fn with the rank and the artSize bytes of each of ix's
// artifacts in order, newest first, reading 64 KiB of them at a time,
// until fn returns false or an error. The bytes are valid during the
// call.
func (ix *index) eachArt(fn func(rank int64, a []byte) (bool, error)) error {
	const perRead = 64 << 10 / artSize
	for i := int64(0); i < ix.narts; i += perRead {
		b, err := ix.read(ix.artsAt()+artSize*i, artSize*int(min(perRead, ix.narts-i)))
		if err != nil {
			return err
		}
		for rank := i; len(b) > 0; b, rank = b[artSize:], rank+1 {
			if more, err := fn(rank, b[:artSize]); !more || err != nil {
				return err
			}
		}
	}
	return nil
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
// bounded memory: its parts are sorted by sorters that spill past maxHeld
// bytes each to a temporary file. Its zero value is ready to use; close
// releases the temporary file.
type indexBuilder struct {
	nlines, covered int64
	sum             uint32 // the CRC-32C of the lines added
	nalways         int64
	always          []byte          // numbers of lines always read not yet spilled, 4 bytes each
	alwaysChunks    []extsort.Chunk // those spilled, in order
	sp              extsort.Spill
	offs            []byte          // offsets of lines not yet spilled, 8 bytes each
	offChunks       []extsort.Chunk // the offsets spilled, in order
	keys            *extsort.Sorter // of keySize: fingerprint, line
	places          *extsort.Sorter // of placeSize (see addPlaces)
	dec             decoder
	fps             []uint64 // of the line being added
	rec             []byte
}

// addLong adds the segment's next line when it is over maxLine, the
// size bytes at off in f: it holds no record, and is read each time, to
// be reported. Its bytes are read again for the sum of those covered.
func (b *indexBuilder) addLong(f io.ReaderAt, off, size int64) error {
	buf := make([]byte, min(size, 64<<10))
	for at := off; at < off+size; {
		n := min(int64(len(buf)), off+size-at)
		if _, err := f.ReadAt(buf[:n], at); err != nil {
			return err
		}
		b.sum = crc32.Update(b.sum, castagnoli, buf[:n])
		at += n
	}
	b.addAlways(uint32(b.nlines))
	b.addLine(size)
	return nil
}

// addAlways records that line n is always read, spilling the numbers
// held past maxHeld bytes: a segment of millions of lines that are not
// records is indexed in bounded memory too.
func (b *indexBuilder) addAlways(n uint32) {
	b.always = binary.LittleEndian.AppendUint32(b.always, n)
	b.nalways++
	if len(b.always) >= maxHeld {
		b.alwaysChunks = append(b.alwaysChunks, b.sp.Write(b.always))
		b.always = b.always[:0]
	}
}

// addLine records the offset of the next line, size bytes long.
func (b *indexBuilder) addLine(size int64) {
	if b.keys == nil {
		b.keys = extsort.NewSorter(keySize, maxHeld, &b.sp)
		b.places = extsort.NewSorter(placeSize, maxHeld, &b.sp)
	}
	b.offs = binary.LittleEndian.AppendUint64(b.offs, uint64(b.covered))
	b.nlines++
	b.covered += size
	if len(b.offs) >= maxHeld {
		b.offChunks = append(b.offChunks, b.sp.Write(b.offs))
		b.offs = b.offs[:0]
	}
}

// close releases the builder's temporary file.
func (b *indexBuilder) close() { b.sp.Close() }

// add adds the segment's next line, with its newline.
func (b *indexBuilder) add(line []byte) {
	n, off := uint32(b.nlines), b.covered
	b.sum = crc32.Update(b.sum, castagnoli, line)
	b.addLine(int64(len(line)))
	var r Record
	if err := b.dec.decode(line, &r); err != nil || r.Hash == "" {
		b.addAlways(n)
		return
	}
	d, err := store.ParseDigest(r.Hash)
	if err != nil {
		b.addAlways(n)
		return
	}
	b.fps = b.fps[:0]
	key := func(f Field, v string) {
		if v != "" {
			b.fps = append(b.fps, fingerprint(Key{f, v}))
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
	slices.Sort(b.fps)
	for _, fp := range slices.Compact(b.fps) {
		b.rec = binary.BigEndian.AppendUint64(b.rec[:0], fp)
		b.keys.Add(binary.BigEndian.AppendUint32(b.rec, n))
	}
	b.addPlaces(d, r, n, off, len(line))
}

// placeSize is the size of a place of an artifact, as the builder sorts
// them to make the listing: the artifact's digest, a hash of the place
// (source, entry, site), when it was made and where its record is
// (timeKey, the line and the place's number in it), and where the line is
// (its offset and length).
const placeSize = 32 + 16 + 20 + 8 + 4

// timeKey returns a record's creation time and position, line n and
// place i, as bytes whose order is theirs.
func timeKey(b []byte, createdAt string, n uint32, i int) []byte {
	t, _ := time.Parse(time.RFC3339Nano, createdAt)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix())^1<<63)
	b = binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
	b = binary.BigEndian.AppendUint32(b, n)
	return binary.BigEndian.AppendUint32(b, uint32(i))
}

// addPlaces adds the places of r, the record of line n, at off and size
// bytes long, an artifact's.
func (b *indexBuilder) addPlaces(d store.Digest, r Record, n uint32, off int64, size int) {
	i := 0
	_ = r.places(func(p Record) error {
		b.rec = appendPlace(b.rec[:0], d, p, n, i)
		b.rec = binary.BigEndian.AppendUint64(b.rec, uint64(off))
		b.places.Add(binary.BigEndian.AppendUint32(b.rec, uint32(size)))
		i++
		return nil
	})
}

// appendPlace appends to b the place p of artifact d, place number i of
// line n, as a sorter of places holds it (see placeSize) but for where
// the line is, which the caller appends.
func appendPlace(b []byte, d store.Digest, p Record, n uint32, i int) []byte {
	b = append(b, d[:]...)
	b = appendPlaceHash(b, p)
	return timeKey(b, p.CreatedAt, n, i)
}

// appendPlaceHash appends to b the 16-byte hash of place p: its source,
// entry and site, which tell places apart.
func appendPlaceHash(b []byte, p Record) []byte {
	h := fnv.New128a()
	for _, v := range []string{p.Source, p.Entry, p.Site} {
		io.WriteString(h, v)
		h.Write([]byte{0})
	}
	return h.Sum(b)
}

// artSize is the size of an artifact of the listing: its newest record's
// timeKey, every bit flipped so that the newest sorts first, the number
// of distinct places that refer to it, and where the record's line is
// (offset, length), so that a listing reads the lines of many artifacts
// at once.
const artSize = 20 + 4 + 8 + 4

// artifacts returns the sorter of the artifacts of the lines added,
// newest first: the places sorted by artifact, then place, counted once
// each, the newest kept.
func (b *indexBuilder) artifacts() (*extsort.Sorter, error) {
	return newest(b.places, &b.sp, placeSize-placeHead)
}

// placeHead is the size of a place as appendPlace makes it.
const placeHead = 32 + 16 + 20

// newest returns the sorter of the artifacts of places, a sorter of
// places (see appendPlace) followed by where bytes saying where their
// line is, newest first: the places sorted by artifact, then place,
// counted once each, the newest kept. An artifact is as artSize says,
// where bytes in place of the line's offset and length. It spills to sp.
func newest(places *extsort.Sorter, sp *extsort.Spill, where int) (*extsort.Sorter, error) {
	arts := extsort.NewSorter(24+where, maxHeld, sp)
	var (
		cur    []byte // the artifact's newest place
		refs   uint32
		art    = make([]byte, 0, 24+where)
		commit = func() {
			if cur == nil {
				return
			}
			art = art[:0]
			for _, c := range cur[48:68] {
				art = append(art, ^c)
			}
			art = binary.BigEndian.AppendUint32(art, refs)
			arts.Add(append(art, cur[68:]...))
		}
	)
	err := places.Each(func(p []byte) error {
		switch {
		case cur == nil || !bytes.Equal(p[:32], cur[:32]):
			commit()
			cur, refs = append(cur[:0], p...), 1
			return nil
		case !bytes.Equal(p[32:48], cur[32:48]):
			refs++
			copy(cur[32:48], p[32:48]) // the place counted last
		}
		if bytes.Compare(p[48:68], cur[48:68]) > 0 {
			copy(cur[48:], p[48:])
		}
		return nil
	})
	commit()
	return arts, err
}

// encode writes the index of the lines added, covering that many bytes of
// the segment f, the file whose store.FileInfo.ID is id, to w.
func (b *indexBuilder) encode(w io.Writer, f io.ReaderAt, id uint64) error {
	sum, err := sampleSum(f, b.covered)
	if err != nil {
		return err
	}
	arts, err := b.artifacts()
	if err != nil {
		return err
	}
	if err := b.sp.Err(); err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10)
	head := append([]byte(nil), indexMagic...)
	head = binary.LittleEndian.AppendUint32(head, indexVersion)
	head = binary.LittleEndian.AppendUint64(head, uint64(b.covered))
	head = binary.LittleEndian.AppendUint64(head, id)
	head = append(head, sum[:]...)
	head = binary.LittleEndian.AppendUint32(head, b.sum)
	for _, n := range []int64{b.nlines, b.nalways, b.keys.Len(), arts.Len()} {
		head = binary.LittleEndian.AppendUint64(head, uint64(n))
	}
	bw.Write(head)
	for _, c := range b.offChunks {
		if _, err := io.Copy(bw, b.sp.Reader(c)); err != nil {
			return err
		}
	}
	bw.Write(b.offs)
	bw.Write(binary.LittleEndian.AppendUint64(nil, uint64(b.covered)))
	for _, c := range b.alwaysChunks {
		if _, err := io.Copy(bw, b.sp.Reader(c)); err != nil {
			return err
		}
	}
	bw.Write(b.always)
	write := func(rec []byte) error {
		_, err := bw.Write(rec)
		return err
	}
	if err := b.keys.Each(write); err != nil {
		return err
	}
	if err := arts.Each(write); err != nil {
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
// f, whose store.FileInfo.ID is id, as it is now (size bytes). It checks
// the whole index's CRC-32C, reading it a piece at a time.
func openIndex(xf store.File, f io.ReaderAt, id uint64, size int64) (*index, error) {
	xsize := xf.Stat().Size
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
	if uint64(u64()) != id {
		return nil, errors.New("of another file")
	}
	sum := at[:sha256.Size]
	ix.sum = binary.LittleEndian.Uint32(at[sha256.Size:])
	at = at[sha256.Size+4:]
	ix.nlines, ix.nalways, ix.nkeys, ix.narts = u64(), u64(), u64(), u64()
	if ix.covered < 0 || ix.covered > size {
		return nil, errors.New("covers more than the segment holds")
	}
	if ix.nlines > math.MaxUint32 || ix.nlines > ix.covered || ix.nalways > ix.nlines || ix.nkeys > ix.covered || ix.narts > ix.covered ||
		indexSize(ix.nlines, ix.nalways, ix.nkeys, ix.narts) != xsize {
		return nil, errors.New("malformed")
	}
	crc := crc32.New(castagnoli)
	if _, err := io.Copy(crc, io.NewSectionReader(xf, 0, xsize-4)); err != nil {
		return nil, err
	}
	var tail [4]byte
	if _, err := xf.ReadAt(tail[:], xsize-4); err != nil || binary.LittleEndian.Uint32(tail[:]) != crc.Sum32() {
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
// file ID too.)
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

// loadIndex returns the index of rf, open, or nil when it has none that
// matches it as it is now. The caller closes it.
func (s *Store) loadIndex(ctx context.Context, rf *regFile) *index {
	if !indexed(rf) {
		return nil
	}
	xf, err := store.OpenFile(ctx, s.b, indexHandle(rf.h))
	if err != nil {
		return nil
	}
	ix, err := openIndex(xf, rf.f, rf.id, rf.size)
	if err != nil {
		xf.Close()
		return nil
	}
	return ix
}

// indexed reports whether rf is a segment that has an index: large
// enough, and of a backend that tells apart the files that stood under
// its name in turn, as an index must (see FileInfo.ID).
func indexed(rf *regFile) bool {
	return rf.h.Kind == store.Segment && rf.id != 0 && rf.size >= indexMinSize
}

// stale reports whether so much was appended to ix's segment since it
// was built that it is better built again than its tail read.
func (ix *index) stale(size int64) bool {
	return size-ix.covered > max(indexMinSize, ix.covered/8)
}

// writeIndex saves the index b holds of rf, streamed to the backend as
// it is encoded, and makes it durable; it releases b. An index is a
// cache: the caller may ignore the error (a store the reader may not
// write to has none).
func (s *Store) writeIndex(ctx context.Context, b *indexBuilder, rf *regFile) error {
	defer b.close()
	h := indexHandle(rf.h)
	if err := s.b.Save(ctx, h, func(w io.Writer) error { return b.encode(w, rf.f, rf.id) }); err != nil {
		return err
	}
	return s.b.Flush(ctx, h)
}

// indexMerged writes the index of seg, the segment a compaction has just
// merged, b having been given its lines, if it should have one; it
// releases b. It is a cache: a failure leaves the segment without one,
// and the next reader that looks up records in it makes it.
func (s *Store) indexMerged(ctx context.Context, b *indexBuilder, seg store.Handle) {
	defer b.close()
	if _, ok := store.As[store.Opener](s.b); !ok {
		return // a file loaded whole has no ID, and no index
	}
	f, err := store.OpenFile(ctx, s.b, seg)
	if err != nil {
		return
	}
	defer f.Close()
	fi := f.Stat()
	rf := &regFile{h: seg, f: f, size: fi.Size, id: fi.ID}
	if indexed(rf) {
		_ = s.writeIndex(ctx, b, rf)
	}
}

// removeStrayIndexes removes the indexes whose segments are gone: those
// of segments a compaction removed, and any a reader wrote meanwhile.
// The caller holds the store's lock exclusively.
func (s *Store) removeStrayIndexes(ctx context.Context) {
	present := map[string]bool{}
	var indexes []string
	err := s.b.List(ctx, store.Segment, "", func(fi store.FileInfo) error {
		if fi.Bad == nil {
			present[fi.Name] = true
			if strings.HasSuffix(fi.Name, indexExt) {
				indexes = append(indexes, fi.Name)
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, name := range indexes {
		if !present[strings.TrimSuffix(name, indexExt)+segmentExt] {
			_ = s.b.Remove(ctx, store.Handle{Kind: store.Segment, Name: name})
		}
	}
	_ = s.b.Flush(ctx)
}
