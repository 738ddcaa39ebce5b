package fsck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
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
	referenced := map[store.Digest]bool{}
	for _, in := range transcripts {
		if err := collectReferences(ctx, in, referenced); err != nil {
			return rep, err
		}
	}
	cl, err := readClaims(ctx, st, transcripts)
	if err != nil {
		return rep, err
	}

	var doomed []object
	elsewhere, gone := map[string]bool{}, map[string]bool{}
	err = st.Each(ctx, func(d store.Digest, fi store.FileInfo) error {
		rep.Objects++
		if referenced[d] {
			rep.Referenced++
			return nil
		}
		switch c := cl.of(d); {
		case c.elsewhere != "":
			elsewhere[c.elsewhere] = true
		case c.gone && !opts.PruneMissing:
			rep.Gone++
			gone[c.goneSource] = true
		case !c.recorded && !opts.PruneMissing:
			rep.Unrecorded++
		case young(fi, opts):
			rep.Young++
		default:
			doomed = append(doomed, object{d, fi})
		}
		return nil
	}, func(string, error) {})
	if err != nil {
		return rep, err
	}
	rep.ElsewhereIn = slices.AppendSeq(rep.ElsewhereIn, maps.Keys(elsewhere))
	rep.GoneIn = slices.AppendSeq(rep.GoneIn, maps.Keys(gone))
	slices.Sort(rep.ElsewhereIn)
	slices.Sort(rep.GoneIn)

	var removed []store.Digest
	for _, o := range doomed {
		if opts.Remove {
			// A lease not renewed in time may be taken as expired by a
			// writer, which may then deduplicate onto what is left.
			if err := lock.Held(); err != nil {
				return rep, err
			}
			ok, err := remove(ctx, st, o.d, opts)
			if err != nil {
				return rep, err
			}
			if !ok {
				rep.Young++
				continue
			}
			removed = append(removed, o.d)
		}
		rep.Collected = append(rep.Collected, Collected{Path: st.Name(o.d), Size: o.fi.Size})
		rep.Bytes += o.fi.Size
	}
	if opts.Remove {
		if err := st.Flush(ctx); err != nil {
			return rep, err
		}
		if err := lock.Held(); err != nil {
			return rep, err
		}
		stale := func(registry.Record) bool { return false }
		if opts.PruneMissing {
			stale = cl.stale(st)
		}
		n, err := compact(ctx, st, removed, stale)
		if err != nil {
			return rep, fmt.Errorf("compact the registry: %w", err)
		}
		rep.RecordsDropped = n
	}
	return rep, nil
}

// object is an object GC found.
type object struct {
	d  store.Digest
	fi store.FileInfo
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

// compact drops from the registry the records of the objects removed and
// of objects already missing, so that it keeps records of what the store
// holds, and the records stale says to drop. The other records of an
// artifact kept stay, whatever transcript they name: they are all that
// says where it came from.
func compact(ctx context.Context, st *registry.Store, removed []store.Digest, stale func(registry.Record) bool) (int, error) {
	deleted := map[store.Digest]bool{}
	for _, d := range removed {
		deleted[d] = true
	}
	named := func(r registry.Record) bool { return !stale(r) }
	if _, locked := store.As[store.Locker](st.Backend()); !locked {
		// No lock keeps writers out: a record appended after the objects
		// were listed names an object the listing did not see. Only the
		// records of what this collector removed go.
		return st.Compact(ctx, func(r registry.Record) bool {
			d, err := store.ParseDigest(r.Hash)
			return err != nil || !deleted[d] && named(r)
		})
	}
	present := map[store.Digest]bool{}
	if err := st.Each(ctx, func(d store.Digest, _ store.FileInfo) error {
		present[d] = true
		return nil
	}, func(string, error) {}); err != nil {
		return 0, err
	}
	return st.Compact(ctx, func(r registry.Record) bool {
		d, err := store.ParseDigest(r.Hash)
		if err != nil {
			return true // not a record of an artifact: Verify reports it
		}
		return present[d] && !deleted[d] && named(r)
	})
}

// claim is what the registry says about who may need one artifact.
type claim struct {
	recorded bool
	// elsewhere is a transcript that a record names, that exists and
	// that was not given, so was not examined.
	elsewhere string
	// gone says that a record names a transcript that no longer exists,
	// goneSource ("" for a record that names none).
	gone       bool
	goneSource string
	// live says that a record names a transcript that exists.
	live bool
}

// claims are the claims of every artifact the registry records, and where
// it names each transcript that no longer exists first.
type claims struct {
	m      map[store.Digest]claim
	goneAt map[string]recordAt
}

// recordAt is where a record is, its index in the registry's order, and
// how many records name its source.
type recordAt struct {
	registry.Pos
	index   int
	records int
}

func (c *claims) of(d store.Digest) claim { return c.m[d] }

// stale returns whether a record of st is one --prune-missing drops: it
// names a transcript that no longer exists, and its artifact has a record
// naming one that does. A deleted session leaves no record; an artifact
// whose every record names a transcript that is gone (a moved tree's,
// still referenced) keeps them, since they say where it came from.
func (c *claims) stale(st *registry.Store) func(registry.Record) bool {
	return func(r registry.Record) bool {
		src := st.SourceOf(r)
		if _, gone := c.goneAt[src]; !gone || src == "" {
			return false
		}
		d, err := store.ParseDigest(r.Hash)
		return err == nil && c.m[d].live
	}
}

// readClaims reads the registry's claims on its artifacts, the status of
// each record's source told by sources. Bad lines are Verify's business:
// they claim nothing.
func readClaims(ctx context.Context, st *registry.Store, transcripts []session.Input) (*claims, error) {
	srcs := newSources(st, transcripts)
	cl := &claims{m: map[store.Digest]claim{}, goneAt: srcs.goneAt}
	index := 0
	err := st.RecordsAt(ctx, func(r registry.Record, pos registry.Pos) error {
		index++
		d, err := store.ParseDigest(r.Hash)
		if err != nil {
			return nil
		}
		c := cl.m[d]
		c.recorded = true
		switch src, status := srcs.note(r, pos, index); status {
		case examined:
			c.live = true
		case exists:
			c.elsewhere, c.live = src, true
		case missing:
			c.gone, c.goneSource = true, src
		}
		cl.m[d] = c
		return nil
	}, func(*registry.BadLineError) {})
	return cl, err
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
}

// newSources returns the sources of st's records, given transcripts.
func newSources(st *registry.Store, transcripts []session.Input) *sources {
	s := &sources{st: st, given: map[string]bool{}, givenFiles: map[session.FileKey]bool{},
		status: map[string]int{}, goneAt: map[string]recordAt{}}
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

// collectReferences adds the artifacts a transcript refers to.
func collectReferences(ctx context.Context, in session.Input, referenced map[store.Digest]bool) error {
	return session.Lines(in, func(l transcript.Line) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ids, err := externalizer.References(l.Text, transcript.JSONStart(l))
		if err != nil {
			return fmt.Errorf("cannot tell what this line refers to, so nothing is collected: %w", err)
		}
		for _, d := range ids {
			referenced[d] = true
		}
		return nil
	})
}
