package fsck

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// GCOptions configure a collection.
type GCOptions struct {
	// Grace keeps unreferenced artifacts younger than this. Against
	// writers that take the store's lock (this version's migrate) it is
	// not needed; it is what protects the fresh or freshened artifacts of
	// writers that do not (see the package doc), and then it must be
	// longer than any one transcript's migration: commands refuse less
	// than MinGrace unless forced.
	Grace time.Duration
	// Remove deletes; without it GC only reports what it would delete,
	// takes no lock and writes nothing.
	Remove bool
	// PruneMissing also collects the artifacts whose transcripts cannot be
	// examined because they are gone: those the registry records only for
	// transcripts that no longer exist, and those it has no record of.
	PruneMissing bool
	// Now is the time the grace period counts back from.
	Now time.Time
	// Waiting, if not nil, is called once if GC must wait for writers to
	// release the store's lock.
	Waiting func(store string)
	// Collected, if not nil, is passed each artifact GC collects, in the
	// order of GCReport.Collected, as it removes it (or, without Remove,
	// finds it would), instead of GCReport.Collected holding them all: a
	// store of millions is collected in the memory of a few. An error it
	// returns stops GC there: what it keeps is the record of what was
	// deleted, and nothing more is deleted than it could record.
	Collected func(Collected) error
}

// DefaultGrace is the grace period of gc.
const DefaultGrace = time.Hour

// MinGrace is the shortest grace period gc accepts without being forced:
// longer than a writer that does not take the store's lock needs between
// writing or freshening an artifact and putting in place the transcript
// that refers to it.
const MinGrace = 10 * time.Minute

// Collected is an artifact GC removed, or would remove.
type Collected struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// GCReport is the result of GC over one store.
type GCReport struct {
	Store       string   `json:"store"`
	Transcripts int      `json:"transcripts"`
	Objects     int      `json:"objects"`
	Referenced  int      `json:"referenced"`
	Young       int      `json:"young"`       // unreferenced, kept for the grace period
	ElsewhereIn []string `json:"elsewhereIn"` // transcripts not given that the registry says use unreferenced artifacts
	// Gone counts the unreferenced artifacts kept because the registry
	// records them only for transcripts that no longer exist (named in
	// GoneIn), Unrecorded those kept because it has no record of them:
	// without PruneMissing nothing says that no transcript needs them.
	Gone       int         `json:"gone"`
	GoneIn     []string    `json:"goneIn"`
	Unrecorded int         `json:"unrecorded"`
	Collected  []Collected `json:"collected"`
	Bytes      int64       `json:"bytes"`
	Removed    bool        `json:"removed"`
	// RecordsDropped counts the registry records removed with their
	// artifacts, or naming artifacts already missing.
	RecordsDropped int `json:"recordsDropped"`
}

// GC removes the artifacts of store that none of the given transcripts
// refers to and that nothing else may need (see the package doc,
// # Collection): it keeps artifacts the registry records for a transcript
// that was not given and still exists, for one that no longer exists or
// none at all (unless opts.PruneMissing), and artifacts younger than the
// grace period. With opts.Remove it holds the store's lock exclusively
// from before it reads the first transcript until the last deletion.
// Every transcript is read before anything is removed; one that cannot
// be read, or whose references cannot be, stops GC with nothing removed.
func GC(ctx context.Context, st *registry.Store, transcripts []session.Input, opts GCOptions) (GCReport, error) {
	rep := GCReport{Store: st.Dir(), Transcripts: len(transcripts), Removed: opts.Remove,
		ElsewhereIn: []string{}, GoneIn: []string{}, Collected: []Collected{}}
	var lock store.Lock
	if opts.Remove {
		var err error
		lock, err = st.LockExclusive(ctx, func() {
			if opts.Waiting != nil {
				opts.Waiting(st.Dir())
			}
		})
		if errors.Is(err, fs.ErrNotExist) {
			return rep, nil // no store: nothing to collect, and none to create
		}
		if err != nil {
			return rep, err
		}
		defer lock.Close()
	}
	// The artifacts the transcripts refer to, the registry's claims on
	// artifacts and the store's objects are each sorted by artifact in
	// bounded memory, and joined.
	var sp extsort.Spill
	defer sp.Close()
	if opts.Remove {
		// Removing, GC spills the registry's compaction, whatever the
		// store's size: a spill file that cannot be made must stop it
		// before the first deletion, not after the last.
		if err := sp.Open(); err != nil {
			return rep, err
		}
	}
	referenced := extsort.NewSorter(digestSize, maxHeld, &sp)
	for _, in := range transcripts {
		if err := collectReferences(ctx, in, referenced); err != nil {
			return rep, err
		}
	}
	srcs := newSources(st, transcripts)
	claims, err := readClaims(ctx, st, srcs, &sp)
	if err != nil {
		return rep, err
	}
	objects := extsort.NewSorter(objectSize, maxHeld, &sp)
	var rec []byte // the record being made, for a sorter to copy
	err = st.Each(ctx, func(d store.Digest, fi store.FileInfo) error {
		rec = binary.BigEndian.AppendUint64(append(rec[:0], d[:]...), uint64(rep.Objects))
		rec = binary.BigEndian.AppendUint64(rec, uint64(fi.Size))
		objects.Add(append(rec, boolByte(young(fi, opts))))
		rep.Objects++
		return nil
	}, func(string, error) {})
	if err != nil {
		return rep, err
	}

	// The objects to remove, in the order they were listed; the artifacts
	// whose records --prune-missing drops if they name a transcript gone.
	doomed := extsort.NewSorter(doomedSize, maxHeld, &sp)
	var live *extsort.Sorter
	if opts.Remove && opts.PruneMissing {
		live = extsort.NewSorter(digestSize, maxHeld, &sp)
	}
	refs := newMembers(referenced)
	elsewhere, gone := map[string]bool{}, map[string]bool{}
	err = join(objects, claims, foldClaims, func(obj, group []byte) {
		c := claimOf(group)
		if live != nil && c.bits&claimLive != 0 {
			live.Add(group[:digestSize])
		}
		if obj == nil {
			return
		}
		if refs.has(obj[:digestSize]) {
			rep.Referenced++
			return
		}
		switch {
		case c.bits&claimElsewhere != 0:
			elsewhere[srcs.name(c.elsewhere)] = true
		case c.bits&claimGone != 0 && !opts.PruneMissing:
			rep.Gone++
			gone[srcs.name(c.gone)] = true
		case c.bits&claimRecorded == 0 && !opts.PruneMissing:
			rep.Unrecorded++
		case obj[objectSize-1] != 0:
			rep.Young++
		default:
			at := obj[digestSize : digestSize+8]
			doomed.Add(append(append(append(rec[:0], at...), obj[:digestSize]...), obj[digestSize+8:digestSize+16]...))
		}
	})
	_, refErr := refs.close()
	if err := errors.Join(err, refErr, sp.Err()); err != nil {
		return rep, err
	}
	rep.ElsewhereIn = slices.AppendSeq(rep.ElsewhereIn, maps.Keys(elsewhere))
	rep.GoneIn = slices.AppendSeq(rep.GoneIn, maps.Keys(gone))
	slices.Sort(rep.ElsewhereIn)
	slices.Sort(rep.GoneIn)

	removed := extsort.NewSorter(digestSize, maxHeld, &sp)
	err = doomed.Each(func(rec []byte) error {
		d := store.Digest(rec[8 : 8+digestSize])
		size := int64(binary.BigEndian.Uint64(rec[8+digestSize:]))
		if opts.Remove {
			// A lease not renewed in time may be taken as expired by a
			// writer, which may then deduplicate onto what is left.
			if err := lock.Held(); err != nil {
				return err
			}
			ok, err := remove(ctx, st, d, opts)
			if err != nil {
				return err
			}
			if !ok {
				rep.Young++
				return nil
			}
			removed.Add(d[:])
		}
		rep.Bytes += size
		c := Collected{Path: st.Name(d), Size: size}
		if opts.Collected != nil {
			return opts.Collected(c)
		}
		rep.Collected = append(rep.Collected, c)
		return nil
	})
	if err != nil {
		return rep, err
	}
	if opts.Remove {
		if err := st.Flush(ctx); err != nil {
			return rep, err
		}
		if err := lock.Held(); err != nil {
			return rep, err
		}
		var goneSource func(string) bool
		if opts.PruneMissing {
			goneSource = func(src string) bool {
				_, gone := srcs.goneAt[src]
				return gone && src != ""
			}
		}
		n, err := compact(ctx, st, removed, live, goneSource, &sp)
		if err != nil {
			return rep, fmt.Errorf("compact the registry: %w", err)
		}
		rep.RecordsDropped = n
	}
	return rep, nil
}

// The sorters' records of GC: an object is its digest, its number in the
// store's listing, its size and whether it is within the grace period; an
// object to remove is its number, its digest and its size.
const (
	objectSize = digestSize + 8 + 8 + 1
	doomedSize = 8 + digestSize + 8
)

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// young reports whether an object is within the grace period.
func young(fi store.FileInfo, opts GCOptions) bool {
	return opts.Now.Sub(fi.ModTime) < opts.Grace
}

// remove deletes a doomed object unless it has been touched since the
// scan, by a writer that does not take the store's lock: the look just
// before the deletion narrows that race from the whole scan to an
// instant, and a backend that deletes on condition (S3's
// If-Match-Last-Modified-Time, where the server honours it) closes it.
// It reports whether it deleted the object; one gone already counts as
// deleted.
func remove(ctx context.Context, st *registry.Store, d store.Digest, opts GCOptions) (bool, error) {
	fi, err := st.Backend().Stat(ctx, store.ObjectHandle(d))
	switch {
	case errors.Is(err, store.ErrNotExist):
		return true, nil
	case errors.Is(err, store.ErrNotFile):
		// Not an object at all: removing it is what a collector of
		// unreferenced objects does with it.
		return true, st.Remove(ctx, d)
	case err != nil:
		return false, err
	case young(fi, opts):
		return false, nil
	}
	return st.RemoveUnchanged(ctx, d, fi)
}

// compact drops from the registry the records of the objects removed
// (digests, sorted) and of objects already missing, so that it keeps
// records of what the store holds, and, with goneSource, the records that
// name a transcript it says is gone of the artifacts of live (digests,
// sorted): those that also have a record naming one that exists. The
// other records of an artifact kept stay, whatever transcript they name:
// they are all that says where it came from.
func compact(ctx context.Context, st *registry.Store, removed, live *extsort.Sorter, goneSource func(string) bool, sp *extsort.Spill) (int, error) {
	// No lock keeps writers out: a record appended after the objects
	// were listed names an object the listing did not see. Then only the
	// records of what this collector removed go.
	_, locked := store.As[store.Locker](st.Backend())
	var present *extsort.Sorter
	if locked {
		present = extsort.NewSorter(digestSize, maxHeld, sp)
		if err := st.Each(ctx, func(d store.Digest, _ store.FileInfo) error {
			present.Add(d[:])
			return nil
		}, func(string, error) {}); err != nil {
			return 0, err
		}
	}
	fates, err := newFates(sp, removed, live, present)
	if err != nil {
		return 0, err
	}
	n, err := st.Compact(ctx, func(r registry.Record) bool {
		d, err := store.ParseDigest(r.Hash)
		if err != nil {
			return true // not a record of an artifact: Verify reports it
		}
		f := fates.of(d)
		if f&fateRemoved != 0 || locked && f&fatePresent == 0 {
			return false
		}
		return goneSource == nil || f&fateLive == 0 || !goneSource(st.SourceOf(r))
	})
	return n, errors.Join(err, fates.err)
}

// The records of claimsSorter: a record's digest, its number in the
// registry's order, its claim (with claimLive, and claimElsewhere and
// claimGone as in verifyRecords), and the number of its source (see
// sources.id) where the claim is claimElsewhere and where it is
// claimGone, 0 otherwise; a group of them (see join) has the union of
// their claims and the last source of each.
const (
	claimLive    = claimGone << 1 // a record names a transcript that exists
	claimAt      = digestSize + 8
	elsewhereAt  = claimAt + 1
	goneSourceAt = elsewhereAt + 4
	claimSize    = goneSourceAt + 4
)

// readClaims reads the registry's claims on its artifacts, the status of
// each record's source told by srcs, into a sorter of claimSize records.
// Bad lines are Verify's business: they claim nothing.
func readClaims(ctx context.Context, st *registry.Store, srcs *sources, sp *extsort.Spill) (*extsort.Sorter, error) {
	claims := extsort.NewSorter(claimSize, maxHeld, sp)
	rec := make([]byte, claimSize)
	index := 0
	err := st.RecordsAt(ctx, func(r registry.Record, pos registry.Pos) error {
		index++
		d, err := store.ParseDigest(r.Hash)
		if err != nil {
			return nil
		}
		clear(rec)
		copy(rec, d[:])
		binary.BigEndian.PutUint64(rec[digestSize:], uint64(index))
		rec[claimAt] = claimRecorded
		switch src, status := srcs.note(r, pos, index); status {
		case examined:
			rec[claimAt] |= claimLive
		case exists:
			rec[claimAt] |= claimElsewhere | claimLive
			binary.BigEndian.PutUint32(rec[elsewhereAt:], srcs.id(src))
		case missing:
			rec[claimAt] |= claimGone
			binary.BigEndian.PutUint32(rec[goneSourceAt:], srcs.id(src))
		}
		claims.Add(rec)
		return nil
	}, func(*registry.BadLineError) {})
	return claims, err
}

// foldClaims folds a record of readClaims into its group, which precedes
// it in the registry's order.
func foldClaims(group, rec []byte) {
	group[claimAt] |= rec[claimAt]
	for _, at := range []int{elsewhereAt, goneSourceAt} {
		if src := rec[at : at+4]; binary.BigEndian.Uint32(src) != 0 {
			copy(group[at:], src)
		}
	}
}

// claim is what the registry says about who may need one artifact: the
// claims of its records, the source of the last that names a transcript
// that exists and was not given, and of the last that names one gone.
type claim struct {
	bits            byte
	elsewhere, gone uint32
}

// claimOf returns the claim of a group of readClaims' records, nil if none.
func claimOf(group []byte) claim {
	if group == nil {
		return claim{}
	}
	return claim{group[claimAt], binary.BigEndian.Uint32(group[elsewhereAt:]), binary.BigEndian.Uint32(group[goneSourceAt:])}
}

// recordAt is where a record is, its index in the registry's order, and
// how many records name its source.
type recordAt struct {
	registry.Pos
	index   int
	records int
}

// The status of a record's source.
const (
	examined = iota + 1 // given, so examined
	exists              // not given, and exists (or cannot be looked at)
	missing             // not given, and no longer exists
)

// sources tells what becomes of the transcripts the registry's records
// name: a record's source is examined if it is among the transcripts
// given (by its name as registry records name a transcript, or, for a
// local file, as the same file under another name); otherwise it exists
// if it does (or cannot be looked at), it is missing if it does not. Each
// is looked at once. It also keeps where the registry names each missing
// one first.
type sources struct {
	st         *registry.Store
	given      map[string]bool
	givenFiles map[session.FileKey]bool
	status     map[string]int
	goneAt     map[string]recordAt
	ids        map[string]uint32 // see id
	names      []string
}

// newSources returns the sources of st's records, given transcripts.
func newSources(st *registry.Store, transcripts []session.Input) *sources {
	s := &sources{st: st, given: map[string]bool{}, givenFiles: map[session.FileKey]bool{},
		status: map[string]int{}, goneAt: map[string]recordAt{}, ids: map[string]uint32{}}
	for _, in := range transcripts {
		s.given[registry.SourcePath(in.Name())] = true
		if in.Remote != nil {
			continue
		}
		if k, err := session.StatKey(in.Path); err == nil {
			s.givenFiles[k] = true
		}
	}
	return s
}

// note returns the source of a record of an artifact, the index-th of the
// registry, at pos, and its status, which it counts.
func (s *sources) note(r registry.Record, pos registry.Pos, index int) (string, int) {
	src := s.st.SourceOf(r)
	status := s.statusOf(src)
	if status == missing {
		at, ok := s.goneAt[src]
		if !ok {
			at = recordAt{Pos: pos, index: index}
		}
		at.records++
		s.goneAt[src] = at
	}
	return src, status
}

// statusOf returns the status of src, looked at once.
func (s *sources) statusOf(src string) int {
	if status, ok := s.status[src]; ok {
		return status
	}
	status := exists
	if strings.Contains(src, "://") {
		// A transcript in object storage: whether it is there is not
		// looked at, so one not given is kept as one that exists
		// elsewhere.
		if s.given[src] {
			status = examined
		}
		s.status[src] = status
		return status
	}
	k, err := session.StatKey(src)
	switch {
	case src == "" || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		status = missing
	case s.given[src] || err == nil && s.givenFiles[k]:
		status = examined
	}
	s.status[src] = status
	return status
}

// id returns the number of src, from 1, for a sorter's record.
func (s *sources) id(src string) uint32 {
	id, ok := s.ids[src]
	if !ok {
		s.names = append(s.names, src)
		id = uint32(len(s.names))
		s.ids[src] = id
	}
	return id
}

// name returns the source numbered id.
func (s *sources) name(id uint32) string { return s.names[id-1] }

// collectReferences adds the artifacts a transcript refers to to
// referenced, as many times as it does.
func collectReferences(ctx context.Context, in session.Input, referenced *extsort.Sorter) error {
	return session.Lines(in, func(l transcript.Line) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ids, err := externalizer.References(l.Text, transcript.JSONStart(l))
		if err != nil {
			return fmt.Errorf("cannot tell what this line refers to, so nothing is collected: %w", err)
		}
		for _, d := range ids {
			referenced.Add(d[:])
		}
		return nil
	})
}
