package fsck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestVerifyRecordsJoin: on random stores (objects, records of objects
// present and missing, several records of one artifact naming given,
// other, gone and no transcripts, bad hashes and bad lines, in the
// single-file registry and a segment; references, repeated, to objects
// and to missing artifacts), the join of sorted objects, records and
// references says what the maps say: the bad lines and the first record
// of each artifact not in the store, in the registry's order; for each
// object the claims readModelClaims (gc's model, with maps) reads and
// whether it is referenced; and how many artifacts are. With a limit of
// a few records the sorters spill runs and merge them; with the default
// they do not.
func TestVerifyRecordsJoin(t *testing.T) {
	ctx := context.Background()
	eachRandom(t, 12, 7, 3*recordSize, func(t *testing.T, r *rand.Rand) {
		dir := t.TempDir()
		given, other := filepath.Join(dir, "given.jsonl"), filepath.Join(dir, "other.jsonl")
		for _, p := range []string{given, other} {
			require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
		}
		sources := []string{given, other, filepath.Join(dir, "gone1.jsonl"), filepath.Join(dir, "gone2.jsonl"), "", "s3://bucket/t.jsonl"}
		st := registry.New(local.New(filepath.Join(dir, "artifacts")))
		var present, absent []store.Digest
		for i := range r.IntN(40) {
			d, _, err := st.Put(ctx, fmt.Appendf(nil, "object %d of %d", i, r.Uint64()))
			require.NoError(t, err)
			present = append(present, d)
		}
		require.NoError(t, st.Release())
		for i := range 1 + r.IntN(30) {
			absent = append(absent, store.Sum(fmt.Appendf(nil, "absent %d", i)))
		}
		record := func() registry.Record {
			rec := registry.Record{Size: 1, Source: sources[r.IntN(len(sources))], CreatedAt: "x"}
			switch k := r.IntN(20); {
			case k == 0:
				rec.Hash = "not a hash"
			case k < 9 || len(present) == 0:
				rec.Hash = absent[r.IntN(len(absent))].String()
			default:
				rec.Hash = present[r.IntN(len(present))].String()
			}
			return rec
		}
		writeRandomRegistry(t, st, r, 150, record)
		transcripts := []session.Input{{Path: given}}

		// What the maps say.
		var sp extsort.Spill
		defer sp.Close()
		objects := extsort.NewSorter(digestSize, maxHeld, &sp)
		listed := map[store.Digest]bool{}
		for _, d := range present {
			objects.Add(d[:])
			if r.IntN(5) == 0 {
				objects.Add(d[:]) // listed twice: one object
			}
			listed[d] = true
		}
		var want []Finding
		said := map[store.Digest]bool{}
		require.NoError(t, st.RecordsAt(ctx, func(rec registry.Record, at registry.Pos) error {
			d, err := store.ParseDigest(rec.Hash)
			switch {
			case err != nil:
				want = append(want, Finding{Severity: Error, Path: at.Path, Line: at.Line, Offset: at.Offset, Message: "bad registry record: " + err.Error()})
			case !listed[d] && !said[d]:
				said[d] = true
				want = append(want, Finding{Severity: Error, Path: at.Path, Line: at.Line, Offset: at.Offset,
					Message: fmt.Sprintf("records artifact %s, which is not in the store", d)})
			}
			return nil
		}, func(e *registry.BadLineError) {
			want = append(want, Finding{Severity: Error, Path: e.Path, Line: e.Line, Offset: e.Offset, Message: "bad registry record: " + e.Err.Error()})
		}))
		cl, err := readModelClaims(ctx, st, transcripts)
		require.NoError(t, err)
		type claimed struct {
			d          store.Digest
			claim      byte
			referenced bool
		}
		referenced := extsort.NewSorter(digestSize, maxHeld, &sp)
		refs := map[store.Digest]bool{}
		for range r.IntN(60) {
			d := absent[r.IntN(len(absent))]
			if len(present) > 0 && r.IntN(2) == 0 {
				d = present[r.IntN(len(present))]
			}
			referenced.Add(d[:])
			refs[d] = true
		}
		var wantClaims []claimed
		for _, d := range slices.SortedFunc(maps.Keys(listed), func(a, b store.Digest) int { return bytes.Compare(a[:], b[:]) }) {
			c, bits := cl.m[d], byte(0)
			if c.recorded {
				bits |= claimRecorded
			}
			if c.elsewhere != "" {
				bits |= claimElsewhere
			}
			if c.gone {
				bits |= claimGone
			}
			wantClaims = append(wantClaims, claimed{d, bits, refs[d]})
		}

		// What the join says.
		rep := &Report{Findings: []Finding{}}
		srcs := newSources(st, transcripts)
		got, err := verifyRecords(ctx, st, srcs, objects, &sp, rep)
		require.NoError(t, err)
		var gotClaims []claimed
		n, err := eachObject(got, referenced, func(d store.Digest, c byte, ref bool) { gotClaims = append(gotClaims, claimed{d, c, ref}) })
		require.NoError(t, err)

		assert.Equal(t, append([]Finding{}, want...), rep.Findings)
		assert.Equal(t, wantClaims, gotClaims)
		assert.Equal(t, cl.goneAt, srcs.goneAt)
		assert.Equal(t, len(want), rep.Errors)
		assert.Equal(t, len(refs), n, "artifacts referenced")
	})
}

// eachRandom runs fn on n seeds of stream as subtests, each with the
// sorters' limit few bytes, so that they spill runs and merge them, and
// with the default, so that they do not.
func eachRandom(t *testing.T, n, stream uint64, few int, fn func(t *testing.T, r *rand.Rand)) {
	old := maxHeld
	t.Cleanup(func() { maxHeld = old })
	for seed := range n {
		for _, limit := range []int{few, old} {
			t.Run(fmt.Sprintf("seed=%d/limit=%d", seed, limit), func(t *testing.T) {
				maxHeld = limit
				fn(t, rand.New(rand.NewPCG(seed, stream)))
			})
		}
	}
}

// writeRandomRegistry writes st's registry: up to n lines of record()
// and garbage in the single-file registry, and up to n records appended
// in a segment.
func writeRandomRegistry(t *testing.T, st *registry.Store, r *rand.Rand, n int, record func() registry.Record) {
	t.Helper()
	var legacy []byte
	for range r.IntN(n) {
		if r.IntN(15) == 0 {
			legacy = append(legacy, "garbage\n"...)
			continue
		}
		b, err := json.Marshal(record())
		require.NoError(t, err)
		legacy = append(append(legacy, b...), '\n')
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(st.RegistryPath()), 0o700))
	require.NoError(t, os.WriteFile(st.RegistryPath(), legacy, 0o600))
	var recs []registry.Record
	for range r.IntN(n) {
		recs = append(recs, record())
	}
	require.NoError(t, st.Append(context.Background(), recs))
	require.NoError(t, st.Release())
}
