// Package fsck checks an artifact store against its registry and against
// the transcripts that refer to it, and collects the artifacts nothing
// refers to.
//
// # Guarantees
//
// Verify only reads: it re-hashes every object, parses every registry
// line and rebuilds every migrated line of the given transcripts into a
// hash (never into a file). Objects are never followed through symbolic
// links. A problem is reported with the path, and for transcripts the line
// and byte offset, and checking goes on.
package fsck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
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
	Store       string    `json:"store"`
	Objects     int       `json:"objects"`
	Bytes       int64     `json:"bytes"`
	Records     int       `json:"records"`
	Transcripts int       `json:"transcripts"`
	References  int       `json:"references"`
	Errors      int       `json:"errors"`
	Findings    []Finding `json:"findings"`
}

func (r *Report) add(f Finding) {
	if f.Severity == Error {
		r.Errors++
	}
	r.Findings = append(r.Findings, f)
}

// Verify checks store and, when transcripts are given, that every
// reference in them resolves to an intact artifact. Objects without a
// registry record, and objects no given transcript refers to, are
// information. It returns an error only when it could not read something
// it had to (the store's directories, a transcript file).
func Verify(ctx context.Context, store *registry.Store, transcripts []string) (Report, error) {
	rep := Report{Store: store.Dir()}
	objects := map[registry.Digest]string{}
	err := store.Objects(func(o registry.Object) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Objects++
		rep.Bytes += o.Info.Size()
		objects[o.Digest] = o.Path
		if err := store.Verify(o.Digest); err != nil {
			rep.add(Finding{Severity: Error, Path: o.Path, Message: reason(err)})
		}
		return nil
	}, func(path string, why error) {
		rep.add(Finding{Severity: Error, Path: path, Message: why.Error()})
	})
	if err != nil {
		return rep, err
	}

	recorded := map[registry.Digest]bool{}
	missing := map[registry.Digest]bool{}
	err = store.RecordsAt(func(r registry.Record, line int, offset int64) error {
		rep.Records++
		d, err := registry.ParseDigest(r.Hash)
		if err != nil {
			rep.add(Finding{Severity: Error, Path: store.RegistryPath(), Line: line, Offset: offset, Message: "bad registry record: " + err.Error()})
			return nil
		}
		recorded[d] = true
		if _, ok := objects[d]; !ok && !missing[d] {
			missing[d] = true
			rep.add(Finding{Severity: Error, Path: store.RegistryPath(), Line: line, Offset: offset,
				Message: fmt.Sprintf("records artifact %s, which is not in the store", d)})
		}
		return nil
	}, func(e *registry.BadLineError) {
		rep.add(Finding{Severity: Error, Path: e.Path, Line: e.Line, Offset: e.Offset, Message: "bad registry record: " + e.Err.Error()})
	})
	if err != nil {
		return rep, err
	}

	referenced := map[registry.Digest]bool{}
	for _, path := range transcripts {
		rep.Transcripts++
		if err := verifyTranscript(ctx, path, store, referenced, &rep); err != nil {
			return rep, err
		}
	}
	rep.References = len(referenced)

	for _, d := range sortedDigests(objects) {
		switch {
		case !recorded[d]:
			rep.add(Finding{Severity: Info, Path: objects[d], Message: "no registry record"})
		case len(transcripts) > 0 && !referenced[d]:
			rep.add(Finding{Severity: Info, Path: objects[d], Message: "no given transcript refers to it"})
		}
	}
	return rep, nil
}

// verifyTranscript rebuilds every migrated line of a transcript into a
// hash, which checks its artifacts and the rebuilt line.
func verifyTranscript(ctx context.Context, path string, store *registry.Store, referenced map[registry.Digest]bool, rep *Report) error {
	return migrate.Lines(path, func(l transcript.Line) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := transcript.JSONStart(l)
		ids, err := externalizer.References(l.Text, start)
		if err == nil && len(ids) == 0 {
			return nil
		}
		for _, d := range ids {
			referenced[d] = true
		}
		if err == nil {
			_, err = externalizer.RestoreTo(io.Discard, l.Text, start, store.Open)
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
	case errors.Is(err, registry.ErrNotFound):
		return "missing artifact: " + err.Error()
	case errors.Is(err, registry.ErrCorrupt):
		return "corrupt artifact: " + err.Error()
	}
	return err.Error()
}

func sortedDigests(m map[registry.Digest]string) []registry.Digest {
	ds := make([]registry.Digest, 0, len(m))
	for d := range m {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].String() < ds[j].String() })
	return ds
}
