package fsck

import (
	"context"
	"maps"
	"slices"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// The model of GC that the sorted joins are held to: GC as it was before
// them, with maps of every artifact.

// modelClaim is what the registry says about who may need one artifact.
type modelClaim struct {
	recorded bool
	// elsewhere is the last transcript that a record names, that exists
	// and that was not given.
	elsewhere string
	// gone says that a record names a transcript that no longer exists,
	// goneSource the last ("" for a record that names none).
	gone       bool
	goneSource string
	// live says that a record names a transcript that exists.
	live bool
}

// modelClaims are the claims of every artifact the registry records, and
// where it names each transcript that no longer exists first.
type modelClaims struct {
	m      map[store.Digest]modelClaim
	goneAt map[string]recordAt
}

// readModelClaims reads the registry's claims on its artifacts into maps.
func readModelClaims(ctx context.Context, st *registry.Store, transcripts []session.Input) (*modelClaims, error) {
	srcs := newSources(st, transcripts)
	cl := &modelClaims{m: map[store.Digest]modelClaim{}, goneAt: srcs.goneAt}
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

// modelGC is GC with maps.
func modelGC(ctx context.Context, st *registry.Store, transcripts []session.Input, opts GCOptions) (GCReport, error) {
	rep := GCReport{Store: st.Dir(), Transcripts: len(transcripts), Removed: opts.Remove,
		ElsewhereIn: []string{}, GoneIn: []string{}, Collected: []Collected{}}
	referenced := map[store.Digest]bool{}
	for _, in := range transcripts {
		err := session.Lines(in, func(l transcript.Line) error {
			ids, err := externalizer.References(l.Text, transcript.JSONStart(l))
			for _, d := range ids {
				referenced[d] = true
			}
			return err
		})
		if err != nil {
			return rep, err
		}
	}
	cl, err := readModelClaims(ctx, st, transcripts)
	if err != nil {
		return rep, err
	}
	type object struct {
		d  store.Digest
		fi store.FileInfo
	}
	var doomed []object
	elsewhere, gone := map[string]bool{}, map[string]bool{}
	err = st.Each(ctx, func(d store.Digest, fi store.FileInfo) error {
		rep.Objects++
		if referenced[d] {
			rep.Referenced++
			return nil
		}
		switch c := cl.m[d]; {
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
	deleted := map[store.Digest]bool{}
	for _, o := range doomed {
		if opts.Remove {
			ok, err := remove(ctx, st, o.d, opts)
			if err != nil {
				return rep, err
			}
			if !ok {
				rep.Young++
				continue
			}
			deleted[o.d] = true
		}
		rep.Collected = append(rep.Collected, Collected{Path: st.Name(o.d), Size: o.fi.Size})
		rep.Bytes += o.fi.Size
	}
	if !opts.Remove {
		return rep, nil
	}
	if err := st.Flush(ctx); err != nil {
		return rep, err
	}
	stale := func(r registry.Record) bool {
		src := st.SourceOf(r)
		if _, gone := cl.goneAt[src]; !opts.PruneMissing || !gone || src == "" {
			return false
		}
		d, err := store.ParseDigest(r.Hash)
		return err == nil && cl.m[d].live
	}
	_, locked := store.As[store.Locker](st.Backend())
	present := map[store.Digest]bool{}
	if err := st.Each(ctx, func(d store.Digest, _ store.FileInfo) error {
		present[d] = true
		return nil
	}, func(string, error) {}); err != nil {
		return rep, err
	}
	rep.RecordsDropped, err = st.Compact(ctx, func(r registry.Record) bool {
		d, err := store.ParseDigest(r.Hash)
		return err != nil || (present[d] || !locked) && !deleted[d] && !stale(r)
	})
	if err != nil {
		return rep, err
	}
	return rep, nil
}
