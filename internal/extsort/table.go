package extsort

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"sort"
)

// Table is a table of records of one size, sorted by their keys (a
// prefix of each, distinct), in a spill file, that finds a record by its
// key reading one block of the file: it holds in memory only the first
// key of each block. The registry's writer keeps the keys of the records
// it has read in tables, and gc the fates of artifacts. A Table is not
// safe for concurrent use: Find keeps the block it read last.
type Table struct {
	sp                     *Spill
	size, keyLen, perBlock int
	n                      int64
	firsts                 []byte  // the first key of each block
	chunks                 []Chunk // each write, of perWrite blocks but the last
	perWrite               int     // blocks written at once
	buf                    []byte  // records added not yet written
	last                   []byte  // the key added last
	err                    error   // the first key added out of order

	block []byte // the block read last
	at    int    // its number, -1 for none
}

// tableWrite is about how many bytes a Table writes to its spill file at
// once, and a TableReader reads.
const tableWrite = 64 << 10

var errTableOrder = errors.New("extsort: a table's key out of order")

// NewTable returns an empty table, in sp, of records of size bytes whose
// first keyLen bytes are their keys, read perBlock records at a time.
func NewTable(sp *Spill, size, keyLen, perBlock int) *Table {
	return &Table{sp: sp, size: size, keyLen: keyLen, perBlock: perBlock,
		perWrite: max(tableWrite/(size*perBlock), 1), at: -1}
}

// Add appends a copy of rec, whose key must not be before that of the
// record added last; a record with the same key as that one is dropped,
// so that a key is in the table once. Add is not called after Done.
func (t *Table) Add(rec []byte) {
	key := rec[:t.keyLen]
	if t.n > 0 {
		switch c := bytes.Compare(key, t.last); {
		case c == 0:
			return
		case c < 0:
			t.err = cmp.Or(t.err, errTableOrder)
			return
		}
	}
	if t.n%int64(t.perBlock) == 0 {
		t.firsts = append(t.firsts, key...)
	}
	t.n++
	t.last = append(t.last[:0], key...)
	t.buf = append(t.buf, rec...)
	if len(t.buf) == t.perWrite*t.perBlock*t.size {
		t.chunks = append(t.chunks, t.sp.Write(t.buf))
		t.buf = t.buf[:0]
	}
}

// Done writes the records not yet written, and returns the first failure
// to write the table's spill file or a key added out of order: the table
// is then not to be read.
func (t *Table) Done() error {
	if len(t.buf) > 0 {
		t.chunks = append(t.chunks, t.sp.Write(t.buf))
	}
	t.buf, t.last = nil, nil
	return cmp.Or(t.err, t.sp.Err())
}

// Len returns the number of records in the table.
func (t *Table) Len() int64 { return t.n }

// Find returns the record whose key is key, and whether there is one,
// reading at most one block of the spill file; the record is the
// caller's only until the next Find. A failure to read is returned as
// it is.
func (t *Table) Find(key []byte) ([]byte, bool, error) {
	k := t.keyLen
	// The last block whose first key is not after key: the only one
	// that can hold it.
	b := sort.Search(len(t.firsts)/k, func(i int) bool { return bytes.Compare(t.firsts[i*k:(i+1)*k], key) > 0 }) - 1
	if b < 0 {
		return nil, false, nil
	}
	if b != t.at {
		// Kept: gc's compaction looks artifacts up in the registry's
		// order, where one often has records on lines close together.
		c := t.chunks[b/t.perWrite]
		off := int64(b%t.perWrite) * int64(t.perBlock*t.size)
		n := min(c.N-off, int64(t.perBlock*t.size))
		t.block = slices.Grow(t.block[:0], int(n))[:n]
		if _, err := t.sp.Section(c).ReadAt(t.block, off); err != nil {
			t.at = -1
			return nil, false, err
		}
		t.at = b
	}
	rec := func(i int) []byte { return t.block[i*t.size : (i+1)*t.size : (i+1)*t.size] }
	n := len(t.block) / t.size
	i := sort.Search(n, func(i int) bool { return bytes.Compare(rec(i)[:k], key) >= 0 })
	if i == n || !bytes.Equal(rec(i)[:k], key) {
		return nil, false, nil
	}
	return rec(i), true, nil
}

// Reader returns a reader of the table's records, in order.
func (t *Table) Reader() *TableReader { return &TableReader{t: t} }

// TableReader reads the records of a Table in order, a write of the
// table at a time.
type TableReader struct {
	t    *Table
	next int    // the chunk to read next
	buf  []byte // the chunk read last
	at   int    // the offset in buf of the next record
	err  error
}

// Next returns the next record, or false at the end of the table or on
// a failure to read it (see Err). The record is the caller's only until
// the next call.
func (r *TableReader) Next() ([]byte, bool) {
	if r.at == len(r.buf) {
		if r.err != nil || r.next == len(r.t.chunks) {
			return nil, false
		}
		c := r.t.chunks[r.next]
		r.buf = slices.Grow(r.buf[:0], int(c.N))[:c.N]
		if _, err := r.t.sp.Section(c).ReadAt(r.buf, 0); err != nil {
			r.err, r.buf, r.at = err, r.buf[:0], 0
			return nil, false
		}
		r.next, r.at = r.next+1, 0
	}
	rec := r.buf[r.at : r.at+r.t.size : r.at+r.t.size]
	r.at += r.t.size
	return rec, true
}

// Err returns the failure that ended Next early, if any.
func (r *TableReader) Err() error { return r.err }
