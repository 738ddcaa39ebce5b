// Package fsck checks an artifact store against its registry and against
// the transcripts that refer to it, and collects the artifacts nothing
// refers to.
//
// # Guarantees
//
// Verify only reads: it re-hashes every object, parses every registry
// line and rebuilds every migrated line of the given transcripts into a
// hash (never into a file). What it cannot hold in a few MiB of memory it
// sorts in a temporary file, unlinked as soon as it is made. Objects are never followed through symbolic
// links. A problem is reported with the path, and for transcripts the line
// and byte offset, and checking goes on. Verify also says what GC, given
// the same transcripts, would delete (grace aside) and what it would
// delete only with PruneMissing.
//
// # Collection
//
// GC deletes an artifact only when every transcript that might use it has
// been examined and none does; whatever the timing of migrations running
// at the same time. The argument:
//
//   - What may use an artifact: a given transcript, read by GC; a
//     transcript the registry names as a source, which GC reads only if it
//     was given; a transcript whose record is gone (the registry's tail
//     lost, a run killed between writing the artifact and appending its
//     record); and a transcript being migrated now, whose placeholders are
//     not in place yet.
//   - Sources that were not given are not examined: an artifact recorded
//     for one that exists is kept. One recorded for a source that no longer
//     exists is kept too, as is one with no record at all, unless
//     PruneMissing: the tree may have been moved (the registry names
//     absolute paths) or the registry may have lost records, and nothing
//     but the user can say that the transcripts are really gone. A record
//     is matched to a given transcript by path or as the same file.
//   - Migrations running now: a writer (registry.Store) holds the store's
//     lock file shared from before it first looks for an object (to write
//     it, or to deduplicate onto it) until migrate.Run ends, after the
//     last transcript referring to the objects is renamed into place. GC
//     with Remove holds it exclusively from before it reads the first
//     transcript until its last deletion and the registry's compaction.
//     So either GC ends before the writer looks for an object, and the
//     writer finds deleted objects missing and writes them again; or it
//     starts after the writer's transcript is in place, and reads its
//     references. Nothing in between is possible. A local store's lock
//     is flock(2), per open file, so it also orders goroutines of one
//     process; it is held by the kernel, so a writer killed with SIGKILL
//     releases it. An S3 store's is made of leases (see package
//     store/s3), which expire once their holder stops renewing them; one
//     that could not renew its lease in time stops writing, and GC stops
//     deleting (store.ErrLockLost), before another may take it as
//     expired.
//   - Writers that do not take the lock (an older version; a machine
//     whose file system does not share flock with this one) are met by
//     the grace period, as in git: a writer sets a deduplicated object's
//     modification time to now (registry's freshen) before appending its
//     record, and finds an object deleted before that as missing; GC
//     deletes only objects older than the grace period, looking at the
//     time again just before each deletion. This holds while no writer takes longer than the grace
//     period from freshening or writing an object to renaming the
//     transcript, hence MinGrace, which commands refuse to go below
//     unless forced. It leaves an instant between that last look and the
//     deletion, which the lock closes, and so does a deletion on the
//     condition that the object's time is still the one looked at,
//     where the backend can ask for one (store.UnchangedRemover).
//
// GC takes no lock for a dry run, which deletes nothing, and never
// creates a store that does not exist. Like Verify it sorts the
// transcripts' references, the registry's records and the store's
// objects by artifact in a temporary file and joins them; what it holds
// in memory in proportion to its input is the status of each transcript
// the registry names, and the list of what it collects, for its report,
// unless GCOptions.Collected takes them.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Severity says whether a finding is an error (the store or a transcript
// is damaged) or information.
type Severity string

// Severities.
const (
	Error Severity = "error"
	Info  Severity = "info"
)

// Finding is one thing Verify noticed.
type Finding struct {
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"`
	Offset   int64    `json:"offset,omitempty"`
	Message  string   `json:"message"`
}

func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s: %s:%d: byte %d: %s", f.Severity, f.Path, f.Line, f.Offset, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s", f.Severity, f.Path, f.Message)
}

// Report is the result of Verify over one store.
type Report struct {
	Store       string `json:"store"`
	Objects     int    `json:"objects"`
	Bytes       int64  `json:"bytes"`
	Records     int    `json:"records"`
	Transcripts int    `json:"transcripts"`
	References  int    `json:"references"`
	Errors      int    `json:"errors"`
	// Missing says the store does not exist (set by the caller, which
	// knows where stores are).
	Missing  bool      `json:"missing,omitempty"`
	Findings []Finding `json:"findings"`

	found func(Finding) // see VerifyTo
}

func (r *Report) add(f Finding) {
	if f.Severity == Error {
		r.Errors++
	}
	if r.found != nil {
		r.found(f)
		return
	}
	r.Findings = append(r.Findings, f)
}

// Verify checks store and, when transcripts are given, that every
// reference in them resolves to an intact artifact. Objects without a
// registry record, and objects no given transcript refers to, are
// information. It returns an error only when it could not read something
// it had to (the store's directories, a transcript file).
func Verify(ctx context.Context, st *registry.Store, transcripts []session.Input) (Report, error) {
	return VerifyTo(ctx, st, transcripts, nil)
}

// VerifyTo is Verify passing each finding to found, in the order Verify
// lists them, as it is made, rather than keeping it in the report: a
// store of millions of damaged records is reported in the memory of a
// few. With found nil it is Verify.
func VerifyTo(ctx context.Context, st *registry.Store, transcripts []session.Input, found func(Finding)) (Report, error) {
	rep := Report{Store: st.Dir(), Findings: []Finding{}, found: found}
	err := verify(ctx, st, transcripts, &rep)
	rep.found = nil
	return rep, err
}

// verify is VerifyTo, its findings passed to rep.add. It holds neither
// the store's objects, nor the registry's records, nor the transcripts'
// references in memory, but sorts them by artifact in bounded memory and
// joins them (see join.go).
func verify(ctx context.Context, st *registry.Store, transcripts []session.Input, rep *Report) error {
	var sp extsort.Spill
	defer sp.Close()
	objects := extsort.NewSorter(len(store.Digest{}), maxHeld, &sp)
	err := st.Each(ctx, func(d store.Digest, fi store.FileInfo) error {
		rep.Objects++
		rep.Bytes += fi.Size
		objects.Add(d[:])
		if err := st.Verify(ctx, d); err != nil {
			rep.add(Finding{Severity: Error, Path: st.Name(d), Message: reason(err)})
		}
		return nil
	}, func(name string, why error) {
		rep.add(Finding{Severity: Error, Path: filepath.Join(st.Dir(), name), Message: why.Error()})
	})
	if err != nil {
		return err
	}

	// What gc given the same transcripts would delete, grace aside, is
	// told from the claims of the registry, read with its records.
	srcs := newSources(st, transcripts)
	claimed, err := verifyRecords(ctx, st, srcs, objects, &sp, rep)
	if err != nil {
		return err
	}

	// The artifacts the transcripts refer to, as many times as they do,
	// told apart when joined with the objects.
	referenced := extsort.NewSorter(digestSize, maxHeld, &sp)
	for _, in := range transcripts {
		rep.Transcripts++
		if err := verifyTranscript(ctx, in, st, referenced, rep); err != nil {
			return err
		}
	}

	gone := slices.SortedFunc(maps.Keys(srcs.goneAt), func(a, b string) int { return srcs.goneAt[a].index - srcs.goneAt[b].index })
	for _, src := range gone {
		at := srcs.goneAt[src]
		msg := fmt.Sprintf("%d records name %s, which no longer exists", at.records, src)
		if src == "" {
			msg = fmt.Sprintf("%d records name no transcript", at.records)
		}
		rep.add(Finding{Severity: Info, Path: at.Path, Line: at.Line, Offset: at.Offset,
			Message: msg + " (moved?): gc keeps the artifacts only they name unless --prune-missing"})
	}
	rep.References, err = eachObject(claimed, referenced, func(d store.Digest, c byte, referenced bool) {
		msg := ""
		switch {
		case referenced:
			if c&claimRecorded == 0 {
				msg = "no registry record"
			}
		case c&claimRecorded == 0:
			msg = "no registry record and no given transcript refers to it: gc --prune-missing would delete it"
		case c&claimElsewhere != 0:
			if len(transcripts) > 0 {
				msg = "no given transcript refers to it"
			}
		case c&claimGone != 0:
			msg = "recorded only for transcripts that no longer exist: gc --prune-missing would delete it"
		default:
			msg = "no given transcript refers to it and the registry names no other: gc would delete it"
		}
		if msg != "" {
			rep.add(Finding{Severity: Info, Path: st.Name(d), Message: msg})
		}
	})
	return err
}

// verifyTranscript rebuilds every migrated line of a transcript into a
// hash, which checks its artifacts and the rebuilt line.
func verifyTranscript(ctx context.Context, in session.Input, st *registry.Store, referenced *extsort.Sorter, rep *Report) error {
	path := in.Name()
	return session.Lines(in, func(l transcript.Line) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := transcript.JSONStart(l)
		ids, err := externalizer.References(l.Text, start)
		if err == nil && len(ids) == 0 {
			return nil
		}
		for _, d := range ids {
			referenced.Add(d[:])
		}
		if err == nil {
			_, err = externalizer.RestoreTo(io.Discard, l.Text, start, st.Opener(ctx))
		}
		if err != nil {
			rep.add(Finding{Severity: Error, Path: path, Line: l.Num, Offset: l.Offset, Message: reason(err)})
		}
		return nil
	})
}

// reason words an error for a finding.
func reason(err error) string {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "missing artifact: " + err.Error()
	case errors.Is(err, store.ErrCorrupt):
		return "corrupt artifact: " + err.Error()
	}
	return err.Error()
}
