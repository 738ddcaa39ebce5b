package fsck

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
)

// Verify joins the store's objects, the registry's records and the
// transcripts' references by artifact, each sorted in bounded memory by
// an extsort.Sorter: a store of millions of objects, a registry of
// millions of records of artifacts the store lost, or transcripts of
// millions of references, are checked in a few MiB. The records carry
// their place in the registry, so that what is said of them is said in
// the registry's order all the same.

// maxHeld bounds the bytes each sorter of Verify holds before it spills
// to a temporary file. A variable for tests.
var maxHeld = 2 << 20

const digestSize = len(store.Digest{})

// A place is where a line of the registry is: its number among the
// registry's lines (records and bad lines), which orders places, the
// file's number among the registry's files, the line's number in its
// file and its byte offset.
const placeSize = 8 + 4 + 8 + 8

// The sorters' records: a record of an artifact is its digest, its place
// and its claim; a finding of the registry is its place, its kind, and
// the digest of the artifact missing or where the message of a bad line
// is in the spill file.
const (
	recordSize  = digestSize + placeSize + 1
	findingSize = placeSize + 1 + digestSize
)

// A claim, of the bits a record claims of its artifact and their union
// over the artifact's records.
const (
	claimRecorded  byte = 1 << iota // a record names the artifact
	claimElsewhere                  // one names a transcript that exists and was not given
	claimGone                       // one names a transcript that no longer exists
)

// The kinds of the findings of the registry.
const (
	foundMissing byte = iota + 1 // a record of an artifact not in the store
	foundBad                     // a bad line
)

// places numbers the registry's lines and files.
type places struct {
	n     uint64
	files []string
	file  map[string]uint32
}

// next appends to b the place of the next line, at pos.
func (p *places) next(b []byte, pos registry.Pos) []byte {
	p.n++
	f, ok := p.file[pos.Path]
	if !ok {
		f = uint32(len(p.files))
		p.files = append(p.files, pos.Path)
		p.file[pos.Path] = f
	}
	b = binary.BigEndian.AppendUint64(b, p.n)
	b = binary.BigEndian.AppendUint32(b, f)
	b = binary.BigEndian.AppendUint64(b, uint64(pos.Line))
	return binary.BigEndian.AppendUint64(b, uint64(pos.Offset))
}

// finding returns a finding of the registry at place b.
func (p *places) finding(b []byte, msg string) Finding {
	return Finding{Severity: Error, Path: p.files[binary.BigEndian.Uint32(b[8:])],
		Line: int(binary.BigEndian.Uint64(b[12:])), Offset: int64(binary.BigEndian.Uint64(b[20:])), Message: msg}
}

// verifyRecords reads the registry's records, the status of their sources
// told by srcs, joins them with the store's objects, and reports, in the
// registry's order, its bad lines and the first record of each artifact
// not in the store. It returns the objects, in order, each with its
// claims (see eachClaimed).
func verifyRecords(ctx context.Context, st *registry.Store, srcs *sources, objects *extsort.Sorter, sp *extsort.Spill, rep *Report) (*extsort.Sorter, error) {
	records := extsort.NewSorter(recordSize, maxHeld, sp)
	found := extsort.NewSorter(findingSize, maxHeld, sp)
	at := &places{file: map[string]uint32{}}
	var rec []byte // the record being made, for a sorter to copy
	bad := func(pos registry.Pos, msg string) {
		c := sp.Write([]byte(msg))
		rec = binary.BigEndian.AppendUint64(append(at.next(rec[:0], pos), foundBad), uint64(c.Off))
		rec = binary.BigEndian.AppendUint64(rec, uint64(c.N))
		found.Add(append(rec, make([]byte, findingSize-len(rec))...))
	}
	err := st.RecordsAt(ctx, func(r registry.Record, pos registry.Pos) error {
		rep.Records++
		d, err := store.ParseDigest(r.Hash)
		if err != nil {
			bad(pos, "bad registry record: "+err.Error())
			return nil
		}
		claim := claimRecorded
		switch _, status := srcs.note(r, pos, rep.Records); status {
		case exists:
			claim |= claimElsewhere
		case missing:
			claim |= claimGone
		}
		rec = append(at.next(append(rec[:0], d[:]...), pos), claim)
		records.Add(rec)
		return nil
	}, func(e *registry.BadLineError) {
		bad(registry.Pos{Path: e.Path, Line: e.Line, Offset: e.Offset}, "bad registry record: "+e.Err.Error())
	})
	if err != nil {
		return nil, err
	}

	claimed := extsort.NewSorter(digestSize+1, maxHeld, sp)
	if err := join(objects, records, orClaims, func(d []byte, first []byte) {
		var claim byte
		if first != nil {
			claim = first[recordSize-1]
		}
		if d == nil {
			rec = append(append(append(rec[:0], first[digestSize:digestSize+placeSize]...), foundMissing), first[:digestSize]...)
			found.Add(rec)
			return
		}
		claimed.Add(append(append(rec[:0], d...), claim))
	}); err != nil {
		return nil, err
	}

	var msg []byte
	err = found.Each(func(rec []byte) error {
		switch kind, arg := rec[placeSize], rec[placeSize+1:]; kind {
		case foundMissing:
			rep.add(at.finding(rec, fmt.Sprintf("records artifact %x, which is not in the store", arg)))
		case foundBad:
			c := extsort.Chunk{Off: int64(binary.BigEndian.Uint64(arg)), N: int64(binary.BigEndian.Uint64(arg[8:]))}
			msg = append(msg[:0], make([]byte, c.N)...)
			if _, err := io.ReadFull(sp.Reader(c), msg); err != nil {
				return err
			}
			rep.add(at.finding(rec, string(msg)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claimed, sp.Err()
}

// join merges objects and records, both sorted by digest (their first
// bytes). It calls fn once for each object, and once for the records of
// each artifact not in the store: with the object (nil for the latter),
// and the group of the artifact's records (nil if it has none), which is
// the first of them in order, into which fold folds each of the others
// in turn. An object listed twice, the same bytes, is one.
func join(objects, records *extsort.Sorter, fold func(group, rec []byte), fn func(obj, group []byte)) error {
	var objErr, recErr error
	next, stop := iter.Pull(sorted(objects, &objErr))
	defer stop()
	obj, more := next()
	var last []byte // the last object passed on
	advance := func() {
		last = append(last[:0], obj...)
		for obj, more = next(); more && bytes.Equal(obj, last); obj, more = next() {
		}
	}
	// The objects before d, which no record names.
	unrecorded := func(d []byte) {
		for more && (d == nil || bytes.Compare(obj[:digestSize], d) < 0) {
			fn(obj, nil)
			advance()
		}
	}
	var group []byte // the group of the records of one artifact
	flush := func() {
		d := group[:digestSize]
		unrecorded(d)
		if !more || !bytes.Equal(obj[:digestSize], d) {
			fn(nil, group)
			return
		}
		for more && bytes.Equal(obj[:digestSize], d) {
			fn(obj, group)
			advance()
		}
	}
	for rec := range sorted(records, &recErr) {
		if group != nil && bytes.Equal(rec[:digestSize], group[:digestSize]) {
			fold(group, rec)
			continue
		}
		if group != nil {
			flush()
		}
		group = append(group[:0], rec...)
	}
	if group != nil {
		flush()
	}
	unrecorded(nil)
	return errors.Join(recErr, objErr)
}

// orClaims folds the claim of a record of verifyRecords into its group's.
func orClaims(group, rec []byte) { group[recordSize-1] |= rec[recordSize-1] }

// sorted returns the records of s, in order, as a sequence: each is the
// caller's until it asks for the next. *err is set to a failure to read
// them.
func sorted(s *extsort.Sorter, err *error) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		done := errors.New("done")
		if e := s.Each(func(rec []byte) error {
			if !yield(rec) {
				return done
			}
			return nil
		}); e != nil && e != done {
			*err = e
		}
	}
}

// eachObject calls fn with every object of claimed, from verifyRecords,
// in order, its claims, and whether referenced (digests, in any order
// and number) holds it. It returns the number of digests referenced
// holds, each counted once.
func eachObject(claimed, referenced *extsort.Sorter, fn func(d store.Digest, claim byte, referenced bool)) (int, error) {
	refs := newMembers(referenced)
	err := claimed.Each(func(rec []byte) error {
		d := rec[:digestSize]
		fn(store.Digest(d), rec[digestSize], refs.has(d))
		return nil
	})
	n, refErr := refs.close()
	return n, errors.Join(err, refErr)
}

// members tells which of the digests asked about, in order, a sorter of
// digests (in any order and number) holds, and counts those it holds,
// each once.
type members struct {
	next  func() ([]byte, bool)
	stop  func()
	err   error
	d     []byte // the next digest of the sorter
	more  bool
	last  []byte // the last digest counted
	count int
}

// newMembers returns the members of s, which close releases.
func newMembers(s *extsort.Sorter) *members {
	m := &members{}
	m.next, m.stop = iter.Pull(sorted(s, &m.err))
	m.d, m.more = m.next()
	return m
}

// has reports whether the sorter holds d, no less than the digest asked
// about before.
func (m *members) has(d []byte) bool {
	m.skip(d)
	return m.more && bytes.Equal(m.d, d)
}

// skip counts the digests before d (all, if d is nil) and passes them.
func (m *members) skip(d []byte) {
	for ; m.more && (d == nil || bytes.Compare(m.d, d) < 0); m.d, m.more = m.next() {
		if !bytes.Equal(m.d, m.last) {
			m.count++
			m.last = append(m.last[:0], m.d...)
		}
	}
}

// close counts the digests not passed yet and returns how many distinct
// digests the sorter holds, and a failure to read it.
func (m *members) close() (int, error) {
	m.skip(nil)
	m.stop()
	return m.count, m.err
}
