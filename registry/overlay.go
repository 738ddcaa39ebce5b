package registry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/transcript-tool/transcript-tool/store"
)

// maxOverlay bounds the bytes of the segments after an indexed one that
// an overlay reads whole and holds the artifacts of, and the bytes of the
// indexed segment's lines of those artifacts that it reads and holds the
// places of; a registry with more of either is merged as any other. A
// variable for tests.
var maxOverlay int64 = 4 << 20

// errOverlayLarge is the error of an overlay whose artifacts the indexed
// segment has more than maxOverlay bytes of lines of: the registry is
// merged instead.
var errOverlayLarge = errors.New("an overlay's artifacts have too many lines in the indexed segment")

// overlay is what the small segments after an indexed one change in the
// listing of that segment: the artifacts they add, in the listing's
// order, and, of the index's artifacts, those whose newest record they
// hold (hidden) and those they add places to (refs). It is what a
// registry is between the gc --yes that compacted it into one indexed
// segment and the next: each run of migrate since has added a segment of
// its own (see docs/registry-index.md, # Listings).
type overlay struct {
	extra  []*extraArt
	hidden []int64          // ranks in the index, ascending
	refs   map[int64]uint32 // rank in the index -> distinct places, all segments counted
}

// extraArt is an artifact of an overlay's segments: its newest place
// there.
type extraArt struct {
	d     store.Digest
	time  [12]byte // the newest place's creation time, as timeKey orders it
	q     uint64   // the order the places were read in, for ties
	file  int      // in Listing.files
	line  int      // from 1
	off   int64
	place int
	id    uint32 // its number, for its places (see artPlace)
	// at is how many of the index's artifacts are newer; rank is its
	// rank in the listing, refs its distinct places.
	at, rank int64
	refs     uint32
}

// overlaid reports whether files, a registry's, are one indexed segment
// followed by segments small enough to be an overlay of it.
func overlaid(files []*regFile) bool {
	if len(files) < 2 || files[0].from != 0 || !indexed(files[0]) {
		return false
	}
	var n int64
	for _, rf := range files[1:] {
		if rf.from != 0 {
			return false // a file a compacted segment holds in part
		}
		n += rf.size
	}
	return n <= maxOverlay
}

// newOverlay reads the files of l but the first whole, passing bad each
// line that holds no artifact's record, and merges their artifacts with
// those of l.ix, the first's index; errOverlayLarge when the first has
// too many lines of them.
func (l *Listing) newOverlay(ctx context.Context, bad func(*BadLineError)) (*overlay, error) {
	s, files, ix := l.s, l.files, l.ix
	arts := map[store.Digest]*extraArt{}
	var (
		places artPlaces
		q      uint64
		tk     []byte
		file   int
		lp     = linePlaces{bad: bad}
	)
	rd := &recordReader{s: s, ctx: ctx, bad: bad, fn: func(p Record, at Pos) error {
		d, place, ok := lp.next(p, at)
		if !ok {
			return nil
		}
		a := arts[d]
		if a == nil {
			a = &extraArt{d: d, id: uint32(len(arts))}
			arts[d] = a
		}
		places = places.add(a.id, p)
		tk = timeKey(tk[:0], p.CreatedAt, 0, 0)
		// Read later, so newer when made at the same time.
		if a.file == 0 || bytes.Compare(tk[:12], a.time[:]) >= 0 {
			copy(a.time[:], tk)
			a.q, a.file, a.line, a.off, a.place = q, file, at.Line, at.Offset, place
		}
		q++
		return nil
	}}
	for file = 1; file < len(files); file++ {
		lp.line = 0
		if err := rd.file(files[file], nil); err != nil {
			return nil, err
		}
	}
	o := &overlay{refs: map[int64]uint32{}}
	n := len(arts)
	known, err := l.knownOf(arts, &places)
	if err != nil {
		return nil, err
	}
	refs := places.distinct(n)
	for i := range known {
		known[i].refs = refs[known[i].id]
	}
	for _, a := range arts {
		a.refs = refs[a.id]
		o.extra = append(o.extra, a)
	}
	// Newest first; of the same time, read later first.
	sort.Slice(o.extra, func(i, j int) bool {
		if c := bytes.Compare(o.extra[i].time[:], o.extra[j].time[:]); c != 0 {
			return c > 0
		}
		return o.extra[i].q > o.extra[j].q
	})
	if err := o.place(ix, known); err != nil {
		return nil, fmt.Errorf("registry index %s: %w", s.where(indexHandle(files[0].h)), err)
	}
	for j, a := range o.extra {
		a.rank = a.at - int64(countBelow(o.hidden, a.at)) + int64(j)
	}
	return o, nil
}

// knownArt is an artifact of the overlay's segments that the indexed
// segment holds too: its newest place there (a timeKey, every bit
// flipped, as the index's artifacts are sorted), whether the overlay
// holds a newer record (hide), its number (extraArt.id) and its
// distinct places in all the segments.
type knownArt struct {
	key  [20]byte
	hide bool
	id   uint32
	refs uint32
}

// artPlaces is the places of an overlay's artifacts, 20 bytes each,
// counted once all are in.
type artPlaces []artPlace

// artPlace is a place of artifact number art: the hash of its source,
// entry and site.
type artPlace struct {
	art uint32
	h   [16]byte
}

// add returns ps with place p of artifact number art.
func (ps artPlaces) add(art uint32, p Record) artPlaces {
	var h [16]byte
	appendPlaceHash(h[:0], p)
	return append(ps, artPlace{art, h})
}

// distinct returns the number of distinct places of each of the n
// artifacts.
func (ps artPlaces) distinct(n int) []uint32 {
	slices.SortFunc(ps, func(a, b artPlace) int { return cmp.Or(cmp.Compare(a.art, b.art), bytes.Compare(a.h[:], b.h[:])) })
	refs := make([]uint32, n)
	for i, p := range ps {
		if i == 0 || p != ps[i-1] {
			refs[p.art]++
		}
	}
	return refs
}

// knownOf returns what l.rf, the indexed segment, holds of arts, the
// artifacts of the overlay's segments, sorted as the index's: an
// artifact it holds a newer record of leaves arts, its places counted in
// the index's artifact; one whose newest record is in arts hides the
// index's. The places l.rf holds of them are added to places. An
// artifact may have lines all over l.rf, each read on its own: past
// maxOverlay bytes of them, which would take longer and hold more than
// the merged listing, it returns errOverlayLarge.
func (l *Listing) knownOf(arts map[store.Digest]*extraArt, places *artPlaces) ([]knownArt, error) {
	rf, ix := l.rf, l.ix
	if len(arts) == 0 {
		return nil, nil
	}
	keys := make([]Key, 0, len(arts))
	for d := range arts {
		keys = append(keys, Key{Field: FieldHash, Value: d.String()})
	}
	// A record's line holds at least its hash: past maxOverlay bytes of
	// them the registry is merged instead, and so past as many lines.
	// The lines that are not records, which the listing tells, are none
	// of them.
	lines, err := ix.lines(keys, int(maxOverlay/int64(minRecordLine)), false)
	switch {
	case errors.Is(err, errManyLines):
		return nil, errOverlayLarge
	case err != nil:
		return nil, fmt.Errorf("registry index %s: %w", l.s.where(indexHandle(rf.h)), err)
	}
	newest := map[store.Digest]*[20]byte{}
	var (
		tk   []byte
		r    Record
		read int64
	)
	for _, n := range lines {
		line, off, size, err := l.readLine(n)
		if err != nil {
			return nil, err
		}
		if line == nil || (off == 0 && rf.header > 0) {
			continue // no record: told by the listing's badLines
		}
		if read += size; read > maxOverlay {
			return nil, errOverlayLarge
		}
		if l.dec.decode(line, &r) != nil {
			continue
		}
		d, err := store.ParseDigest(r.Hash)
		a := arts[d]
		if err != nil || a == nil {
			continue // another key of the same fingerprint
		}
		k := newest[d]
		if k == nil {
			k = new([20]byte)
			newest[d] = k
		}
		i := 0
		_ = r.places(func(p Record) error {
			*places = places.add(a.id, p)
			tk = timeKey(tk[:0], p.CreatedAt, n, i)
			if bytes.Compare(tk, k[:]) > 0 {
				copy(k[:], tk)
			}
			i++
			return nil
		})
	}
	known := make([]knownArt, 0, len(newest))
	for d, k := range newest {
		a := arts[d]
		// The overlay's segments come after rf: of the same time,
		// their record is the newer.
		ka := knownArt{hide: bytes.Compare(a.time[:], k[:12]) >= 0, id: a.id}
		for i, c := range k {
			ka.key[i] = ^c
		}
		known = append(known, ka)
		if !ka.hide {
			delete(arts, d)
		}
	}
	slices.SortFunc(known, func(a, b knownArt) int { return bytes.Compare(a.key[:], b.key[:]) })
	return known, nil
}

// place finds, in one pass over the index's artifacts, the rank of each
// of known (hidden, or given its refs) and where each of the overlay's
// own artifacts goes among them (at). A known artifact the index does
// not have is ErrIndexChanged.
func (o *overlay) place(ix *index, known []knownArt) error {
	ei := 0
	var t [12]byte
	err := ix.eachArt(func(rank int64, b []byte) (bool, error) {
		for k, c := range b[:12] {
			t[k] = ^c
		}
		for ei < len(o.extra) && bytes.Compare(t[:], o.extra[ei].time[:]) <= 0 {
			o.extra[ei].at = rank
			ei++
		}
		for len(known) > 0 && bytes.Compare(known[0].key[:], b[:20]) <= 0 {
			if !bytes.Equal(known[0].key[:], b[:20]) {
				return false, ErrIndexChanged
			}
			if known[0].hide {
				o.hidden = append(o.hidden, rank)
			} else {
				o.refs[rank] = known[0].refs
			}
			known = known[1:]
		}
		return ei < len(o.extra) || len(known) > 0, nil
	})
	if err != nil {
		return err
	}
	if len(known) > 0 {
		return ErrIndexChanged
	}
	for ; ei < len(o.extra); ei++ {
		o.extra[ei].at = ix.narts
	}
	return nil
}

// countBelow returns how many of sorted, ascending, are less than v.
func countBelow(sorted []int64, v int64) int {
	i, _ := slices.BinarySearch(sorted, v)
	return i
}

// ranker gives the index's artifacts, taken in their order, their ranks
// in the listing with the overlay's: an artifact hidden has none.
type ranker struct {
	o      *overlay
	hi, ei int // hidden and extra artifacts before the rank last asked
}

// rank returns the listing's rank of the index's artifact i, and false
// when the overlay hides it. Calls must ask for ascending i.
func (k *ranker) rank(i int64) (int64, bool) {
	o := k.o
	for k.hi < len(o.hidden) && o.hidden[k.hi] < i {
		k.hi++
	}
	if k.hi < len(o.hidden) && o.hidden[k.hi] == i {
		return 0, false
	}
	for k.ei < len(o.extra) && o.extra[k.ei].at <= i {
		k.ei++
	}
	return i - int64(k.hi) + int64(k.ei), true
}

// scan hands p the lines of the overlay's artifacts, read from files in
// order.
func (o *overlay) scan(files []*regFile, p *scanPool) error {
	byPlace := slices.Clone(o.extra)
	slices.SortFunc(byPlace, func(a, b *extraArt) int { return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.off, b.off)) })
	var lr lineReader
	for _, a := range byPlace {
		rf := files[a.file]
		line, err := lr.at(rf, a.off)
		if err != nil {
			return err
		}
		if err := p.add(scanLine{rank: a.rank, place: a.place, refs: int(a.refs), n: int64(a.line) - 1, off: a.off, path: rf.path}, line); err != nil {
			return err
		}
	}
	return nil
}
