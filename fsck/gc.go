package fsck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// GCOptions configure a collection.
type GCOptions struct {
	// Grace keeps artifacts younger than this, so that a migration running
	// at the same time, whose transcript is not renamed into place yet,
	// keeps its fresh artifacts.
	Grace time.Duration
	// Remove deletes; without it GC only reports what it would delete.
	Remove bool
	// Now is the time the grace period counts back from.
	Now time.Time
}

// DefaultGrace is the grace period of gc.
const DefaultGrace = time.Hour

// Collected is an artifact GC removed, or would remove.
type Collected struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// GCReport is the result of GC over one store.
type GCReport struct {
	Store       string      `json:"store"`
	Transcripts int         `json:"transcripts"`
	Objects     int         `json:"objects"`
	Referenced  int         `json:"referenced"`
	Young       int         `json:"young"`       // unreferenced, kept for the grace period
	ElsewhereIn []string    `json:"elsewhereIn"` // transcripts not given that the registry says use unreferenced artifacts
	Collected   []Collected `json:"collected"`
	Bytes       int64       `json:"bytes"`
	Removed     bool        `json:"removed"`
	// RecordsDropped counts the registry records removed with their
	// artifacts, or naming artifacts already missing.
	RecordsDropped int `json:"recordsDropped"`
}

// GC removes the artifacts of store that none of the given transcripts
// refers to. It keeps, besides those: artifacts younger than the grace
// period, and artifacts the registry records for a transcript that was not
// given and still exists, so that naming too few transcripts cannot lose
// another session's payloads. Every transcript is read before anything is
// removed; one that cannot be read, or whose references cannot be, stops
// GC with nothing removed.
func GC(ctx context.Context, store *registry.Store, transcripts []string, opts GCOptions) (GCReport, error) {
	rep := GCReport{Store: store.Dir(), Transcripts: len(transcripts), Removed: opts.Remove}
	referenced := map[registry.Digest]bool{}
	given := map[string]bool{}
	for _, path := range transcripts {
		given[absPath(path)] = true
		if err := collectReferences(ctx, path, referenced); err != nil {
			return rep, err
		}
	}
	usedElsewhere := map[registry.Digest]bool{}
	elsewhere := map[string]bool{}
	err := store.Records(func(r registry.Record) error {
		d, err := registry.ParseDigest(r.Hash)
		if err != nil || referenced[d] || r.Source == "" || given[r.Source] {
			return nil
		}
		if _, err := os.Stat(r.Source); err == nil {
			usedElsewhere[d] = true
			elsewhere[r.Source] = true
		}
		return nil
	}, func(e *registry.BadLineError) {})
	if err != nil {
		return rep, err
	}
	for p := range elsewhere {
		rep.ElsewhereIn = append(rep.ElsewhereIn, p)
	}
	sort.Strings(rep.ElsewhereIn)

	var doomed []registry.Object
	err = store.Objects(func(o registry.Object) error {
		rep.Objects++
		switch {
		case referenced[o.Digest]:
			rep.Referenced++
		case usedElsewhere[o.Digest]:
		case opts.Now.Sub(o.Info.ModTime()) < opts.Grace:
			rep.Young++
		default:
			doomed = append(doomed, o)
		}
		return nil
	}, func(string, error) {})
	if err != nil {
		return rep, err
	}
	dirs := map[string]bool{}
	for _, o := range doomed {
		if opts.Remove {
			if err := os.Remove(o.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return rep, err
			}
			dirs[filepath.Dir(o.Path)] = true
		}
		rep.Collected = append(rep.Collected, Collected{Path: o.Path, Size: o.Info.Size()})
		rep.Bytes += o.Info.Size()
	}
	for dir := range dirs {
		if err := safefile.SyncDir(dir); err != nil {
			return rep, err
		}
	}
	if opts.Remove {
		// The registry keeps records of what the store still holds.
		gone := map[registry.Digest]bool{}
		for _, o := range doomed {
			gone[o.Digest] = true
		}
		present := map[registry.Digest]bool{}
		if err := store.Objects(func(o registry.Object) error {
			present[o.Digest] = true
			return nil
		}, func(string, error) {}); err != nil {
			return rep, err
		}
		n, err := store.Compact(func(r registry.Record) bool {
			d, err := registry.ParseDigest(r.Hash)
			return err != nil || (present[d] && !gone[d])
		})
		if err != nil {
			return rep, fmt.Errorf("compact the registry: %w", err)
		}
		rep.RecordsDropped = n
	}
	return rep, nil
}

// collectReferences adds the artifacts a transcript refers to.
func collectReferences(ctx context.Context, path string, referenced map[registry.Digest]bool) error {
	return migrate.Lines(path, func(l transcript.Line) error {
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

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
