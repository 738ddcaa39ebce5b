package fsck

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestGCJoin: on random stores (objects old and young, listed in the
// store's order; records naming given, other, gone, no and s3://
// transcripts and the given one under another name, several per
// artifact, of objects present and missing, bad hashes and bad lines, in
// the single-file registry and a segment; transcripts referring,
// repeatedly, to objects and missing artifacts), GC, which sorts and
// joins, decides as the model with maps (modelGC) does, on two copies of
// the store: the same report, the same objects left and the same
// registry, dry or removing, with and without PruneMissing, on a backend
// with a lock and on one without, collected artifacts kept in the
// report or passed on (GCOptions.Collected). With a limit of a few records the
// sorters spill runs and merge them; with the default they do not.
func TestGCJoin(t *testing.T) {
	ctx := context.Background()
	eachRandom(t, 16, 11, 3*claimSize, func(t *testing.T, r *rand.Rand) {
		dir := t.TempDir()
		given, other := filepath.Join(dir, "given.jsonl"), filepath.Join(dir, "other.jsonl")
		alias := filepath.Join(dir, "alias.jsonl")
		sources := []string{given, alias, other, filepath.Join(dir, "gone1.jsonl"), filepath.Join(dir, "gone2.jsonl"), "", "s3://bucket/t.jsonl"}
		base := filepath.Join(dir, "base")
		st := registry.New(local.New(base))
		var present, absent []store.Digest
		now := time.Now()
		for i := range r.IntN(40) {
			d, _, err := st.Put(ctx, fmt.Appendf(nil, "object %d of %d", i, r.Uint64()))
			require.NoError(t, err)
			at := now.Add(-2 * time.Hour)
			if r.IntN(5) == 0 {
				at = now.Add(-time.Minute)
			}
			require.NoError(t, os.Chtimes(st.Path(d), at, at))
			present = append(present, d)
		}
		require.NoError(t, st.Release())
		for i := range 1 + r.IntN(20) {
			absent = append(absent, store.Sum(fmt.Appendf(nil, "absent %d", i)))
		}
		pick := func() store.Digest {
			if len(present) > 0 && r.IntN(3) > 0 {
				return present[r.IntN(len(present))]
			}
			return absent[r.IntN(len(absent))]
		}

		// The transcripts: given refers to some artifacts.
		var lines []byte
		for range r.IntN(30) {
			mk := fmt.Sprintf(`{"v":1,"sha256":"%s","edits":[{"at":"/content","parts":[{"id":"%s"},{"id":"%s"}]}]}`,
				strings.Repeat("0", 64), pick(), pick())
			lines = append(lines, `{"content":"x","transcriptTool":`+mk+"}\n"...)
		}
		require.NoError(t, os.WriteFile(given, append(lines, "{}\n"...), 0o600))
		require.NoError(t, os.WriteFile(other, []byte("{}\n"), 0o600))
		require.NoError(t, os.Link(given, alias))
		n := 0 // the references given holds, all read
		require.NoError(t, session.Lines(session.Input{Path: given}, func(l transcript.Line) error {
			ids, err := externalizer.References(l.Text, transcript.JSONStart(l))
			n += len(ids)
			return err
		}))
		require.Equal(t, 2*strings.Count(string(lines), "\n"), n, "references read")

		// The registry.
		record := func() registry.Record {
			rec := registry.Record{Size: 1, Source: sources[r.IntN(len(sources))], CreatedAt: "x"}
			if r.IntN(20) == 0 {
				rec.Hash = "not a hash"
			} else {
				rec.Hash = pick().String()
			}
			return rec
		}
		writeRandomRegistry(t, st, r, 100, record)

		transcripts := []session.Input{{Path: given}}
		if r.IntN(4) == 0 {
			transcripts = append(transcripts, session.Input{Path: other})
		}
		for _, remove := range []bool{false, true} {
			for _, prune := range []bool{false, true} {
				for _, locked := range []bool{true, false} {
					name := fmt.Sprintf("remove=%v/prune=%v/locked=%v", remove, prune, locked)
					opts := GCOptions{Grace: time.Hour, Remove: remove, PruneMissing: prune, Now: now}
					want := gcOn(t, base, filepath.Join(dir, "model"), locked, func(st *registry.Store) (GCReport, error) {
						return modelGC(ctx, st, transcripts, opts)
					})
					// Half of them pass what they collect on.
					streamed := r.IntN(2) == 0
					got := gcOn(t, base, filepath.Join(dir, "joined"), locked, func(st *registry.Store) (GCReport, error) {
						if !streamed {
							return GC(ctx, st, transcripts, opts)
						}
						var collected []Collected
						opts.Collected = func(c Collected) error { collected = append(collected, c); return nil }
						rep, err := GC(ctx, st, transcripts, opts)
						assert.Empty(t, rep.Collected, "passed on")
						rep.Collected = append(rep.Collected, collected...)
						return rep, err
					})
					assert.Equal(t, want, got, name)
				}
			}
		}
	})
}

// gcOutcome is what a collection said and left.
type gcOutcome struct {
	Report  GCReport
	Objects []string
	Records []string
}

// gcOn runs gc on a copy of the store at base, at dir, with a backend
// that locks or not, and returns what it said and left, with dir made
// "STORE".
func gcOn(t *testing.T, base, dir string, locked bool, gc func(*registry.Store) (GCReport, error)) gcOutcome {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, os.RemoveAll(dir))
	copyTree(t, base, dir)
	var b store.Backend = local.New(dir)
	if !locked {
		b = noLockBackend{b}
	}
	st := registry.New(b)
	rep, err := gc(st)
	require.NoError(t, err)
	require.NoError(t, st.Release())
	var out gcOutcome
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(string(js), dir, "STORE")), &out.Report))
	require.NoError(t, st.Each(ctx, func(d store.Digest, _ store.FileInfo) error {
		out.Objects = append(out.Objects, d.String())
		return nil
	}, func(string, error) {}))
	require.NoError(t, st.RecordsAt(ctx, func(r registry.Record, _ registry.Pos) error {
		out.Records = append(out.Records, r.Hash+" "+r.Source)
		return nil
	}, func(e *registry.BadLineError) { out.Records = append(out.Records, "bad: "+e.Err.Error()) }))
	return out
}

// noLockBackend is a backend without a lock (nor any other optional
// interface).
type noLockBackend struct{ store.Backend }

// copyTree copies the files under from to to, with their modification
// times.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	}))
}
