package fsck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestGCKeeps: which unreferenced artifacts GC keeps, by what the registry
// says of them, with and without PruneMissing. Each case has one artifact
// that the given transcript (which refers to nothing) does not use.
func TestGCKeeps(t *testing.T) {
	tests := []struct {
		name string
		// source is the record's source: "" none, "given", "other" (a
		// transcript that exists, not given), "gone", "alias" (the given
		// transcript under another name); no record at all if !recorded.
		source   string
		recorded bool
		age      time.Duration
		kept     bool // without PruneMissing
		pruned   bool // with PruneMissing: deleted
	}{
		{name: "recorded for the given transcript", source: "given", recorded: true, age: 2 * time.Hour, pruned: true},
		{name: "recorded for it under another name", source: "alias", recorded: true, age: 2 * time.Hour, pruned: true},
		{name: "recorded for one not given", source: "other", recorded: true, age: 2 * time.Hour, kept: true},
		{name: "recorded for one gone", source: "gone", recorded: true, age: 2 * time.Hour, kept: true, pruned: true},
		{name: "recorded for none", source: "", recorded: true, age: 2 * time.Hour, kept: true, pruned: true},
		{name: "no record", age: 2 * time.Hour, kept: true, pruned: true},
		{name: "young", source: "given", recorded: true, age: time.Minute, kept: true},
		{name: "young, no record", age: time.Minute, kept: true},
	}
	for _, tt := range tests {
		for _, prune := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/prune=%v", tt.name, prune), func(t *testing.T) {
				dir := t.TempDir()
				given := filepath.Join(dir, "given.jsonl")
				other := filepath.Join(dir, "other.jsonl")
				for _, p := range []string{given, other} {
					require.NoError(t, os.WriteFile(p, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600))
				}
				alias := filepath.Join(dir, "alias.jsonl")
				require.NoError(t, os.Link(given, alias))
				store := registry.New(local.New(filepath.Join(dir, "artifacts")))
				d, _, err := store.Put(context.Background(), []byte("the artifact"))
				require.NoError(t, err)
				require.NoError(t, store.Release())
				if tt.recorded {
					src := map[string]string{"": "", "given": given, "other": other, "alias": alias, "gone": filepath.Join(dir, "gone.jsonl")}[tt.source]
					require.NoError(t, store.Append(context.Background(), []registry.Record{{Hash: d.String(), Source: src, CreatedAt: "2025-01-01T00:00:00Z"}}))
					require.NoError(t, store.Release())
				}
				then := time.Now().Add(-tt.age)
				require.NoError(t, os.Chtimes(store.Path(d), then, then))

				rep, err := fsck.GC(context.Background(), registry.New(local.New(store.Dir())), inputs(given),
					fsck.GCOptions{Grace: time.Hour, Remove: true, PruneMissing: prune, Now: time.Now()})
				require.NoError(t, err)
				deleted := !tt.kept
				if prune {
					deleted = tt.pruned
				}
				if deleted {
					assert.Len(t, rep.Collected, 1)
					assert.ErrorIs(t, store.Verify(context.Background(), d), storepkg.ErrNotFound)
				} else {
					assert.Empty(t, rep.Collected)
					assert.NoError(t, store.Verify(context.Background(), d))
				}
			})
		}
	}
}

// TestGCLock: gc --yes waits for writers that hold the store's lock, and
// says so; a dry run neither waits nor writes; a store that does not exist
// is not created.
func TestGCLock(t *testing.T) {
	dir := t.TempDir()
	given := filepath.Join(dir, "t.jsonl")
	require.NoError(t, os.WriteFile(given, []byte("{}\n"), 0o600))
	writer := registry.New(local.New(filepath.Join(dir, "artifacts")))
	_, _, err := writer.Put(context.Background(), []byte("being migrated"))
	require.NoError(t, err)

	_, err = fsck.GC(context.Background(), registry.New(local.New(writer.Dir())), inputs(given), fsck.GCOptions{Now: time.Now()})
	require.NoError(t, err, "a dry run does not wait")

	waited := make(chan string, 1)
	done := make(chan error)
	go func() {
		_, err := fsck.GC(context.Background(), registry.New(local.New(writer.Dir())), inputs(given),
			fsck.GCOptions{Remove: true, PruneMissing: true, Now: time.Now(), Waiting: func(s string) { waited <- s }})
		done <- err
	}()
	assert.Equal(t, writer.Dir(), <-waited)
	require.NoError(t, writer.Release())
	require.NoError(t, <-done)

	missing := filepath.Join(dir, "none")
	rep, err := fsck.GC(context.Background(), registry.New(local.New(missing)), inputs(given), fsck.GCOptions{Remove: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Zero(t, rep.Objects)
	assert.NoDirExists(t, missing)
}

// TestGCCompactsSegments: the registry of two writers and of an earlier
// version, three files, is one segment after gc --yes, holding the
// records of what the store still holds; a dry run leaves it as it is.
// Verify reports a record of a missing artifact at its segment's line.
func TestGCCompactsSegments(t *testing.T) {
	dir := t.TempDir()
	given := filepath.Join(dir, "given.jsonl")
	other := filepath.Join(dir, "other.jsonl")
	for _, p := range []string{given, other} {
		require.NoError(t, os.WriteFile(p, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600))
	}
	storeDir := filepath.Join(dir, "artifacts")
	old := time.Now().Add(-2 * time.Hour)
	var digests []storepkg.Digest
	for i, src := range []string{given, other, other} {
		w := registry.New(local.New(storeDir))
		d, _, err := w.Put(context.Background(), []byte(fmt.Sprintf("artifact %d", i)))
		require.NoError(t, err)
		require.NoError(t, os.Chtimes(w.Path(d), old, old))
		rec := registry.Record{Hash: d.String(), Source: src, CreatedAt: "2025-01-01T00:00:00Z"}
		if i == 2 {
			// The earlier version's registry.jsonl.
			line, err := json.Marshal(rec)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(storeDir, storepkg.RegistryFile), append(line, '\n'), 0o600))
		} else {
			require.NoError(t, w.Append(context.Background(), []registry.Record{rec}))
		}
		require.NoError(t, w.Release())
		digests = append(digests, d)
	}
	files := func() []string {
		segs, err := filepath.Glob(filepath.Join(storeDir, storepkg.SegmentsDir, "*.jsonl"))
		require.NoError(t, err)
		if _, err := os.Stat(filepath.Join(storeDir, storepkg.RegistryFile)); err == nil {
			segs = append(segs, filepath.Join(storeDir, storepkg.RegistryFile))
		}
		return segs
	}
	require.Len(t, files(), 3)

	_, err := fsck.GC(context.Background(), registry.New(local.New(storeDir)), inputs(given), fsck.GCOptions{Grace: time.Hour, Now: time.Now()})
	require.NoError(t, err)
	assert.Len(t, files(), 3, "a dry run compacted")

	rep, err := fsck.GC(context.Background(), registry.New(local.New(storeDir)), inputs(given),
		fsck.GCOptions{Grace: time.Hour, Remove: true, Now: time.Now()})
	require.NoError(t, err)
	require.Len(t, rep.Collected, 1)
	assert.Equal(t, 1, rep.RecordsDropped)
	require.Len(t, files(), 1, "one segment")
	var hashes []string
	require.NoError(t, registry.New(local.New(storeDir)).Records(context.Background(), func(r registry.Record) error {
		hashes = append(hashes, r.Hash)
		return nil
	}, func(e *registry.BadLineError) { t.Error(e) }))
	assert.Equal(t, []string{digests[2].String(), digests[1].String()}, hashes, "the earlier version's record first")

	// A record of an artifact the store lacks, reported where it is.
	w := registry.New(local.New(storeDir))
	require.NoError(t, w.Append(context.Background(), []registry.Record{{Hash: digests[0].String(), Source: other, CreatedAt: "2025-01-01T00:00:00Z"}}))
	require.NoError(t, w.Release())
	v, err := fsck.Verify(context.Background(), registry.New(local.New(storeDir)), nil)
	require.NoError(t, err)
	var found []fsck.Finding
	for _, f := range v.Findings {
		if f.Severity == fsck.Error {
			found = append(found, f)
		}
	}
	require.Len(t, found, 1, "%v", v.Findings)
	assert.Equal(t, w.SegmentPath(), found[0].Path)
	assert.Equal(t, 1, found[0].Line)
	assert.Contains(t, found[0].Message, "which is not in the store")
}

// inputs names local transcripts as the commands give them.
func inputs(paths ...string) []session.Input {
	var in []session.Input
	for _, p := range paths {
		in = append(in, session.Input{Path: p})
	}
	return in
}

// TestGCStopsMidway: a --yes collection whose removal of an object fails
// stops there, with the error, having passed on (Collected) each object
// it removed before, and only those: what the command says it deleted.
// In a folder and in each S3 server's bucket, whose conditional removal
// (store.UnchangedRemover) the fault injector fails too.
func TestGCStopsMidway(t *testing.T) {
	for _, rs := range raceStores(t) {
		t.Run(rs.name(), func(t *testing.T) {
			dir := t.TempDir()
			given := filepath.Join(dir, "given.jsonl")
			require.NoError(t, os.WriteFile(given, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600))
			spec := rs.new(dir)
			store := rs.registry(t, spec)
			for i := range 5 {
				_, _, err := store.Put(context.Background(), []byte(fmt.Sprintf("artifact %d", i)))
				require.NoError(t, err)
			}
			require.NoError(t, store.Release())
			broken := errors.New("injected")
			removes := 0
			inner, err := rs.open(spec)
			require.NoError(t, err)
			b := faulty.New(inner, func(c faulty.Call) error {
				if c.Method == faulty.Remove {
					if removes++; removes == 3 {
						return broken
					}
				}
				return nil
			})
			collected := 0
			// Every object is past the grace period two hours from now.
			_, err = fsck.GC(context.Background(), registry.New(b), inputs(given),
				fsck.GCOptions{Grace: time.Hour, Remove: true, PruneMissing: true, Now: time.Now().Add(2 * time.Hour),
					Collected: func(fsck.Collected) error { collected++; return nil }})
			require.ErrorIs(t, err, broken)
			assert.Equal(t, 2, collected)
			left := 0
			require.NoError(t, store.Each(context.Background(), func(storepkg.Digest, storepkg.FileInfo) error { left++; return nil }, nil))
			assert.Equal(t, 3, left)
		})
	}
}

// TestGCRemoveNeedsTemporaryFile: a collection that removes spills the
// registry's compaction, whatever the store's size: where no temporary
// file can be made, it fails before its first deletion.
func TestGCRemoveNeedsTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	given := filepath.Join(dir, "given.jsonl")
	require.NoError(t, os.WriteFile(given, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600))
	store := registry.New(local.New(filepath.Join(dir, "artifacts")))
	d, _, err := store.Put(context.Background(), []byte("an artifact"))
	require.NoError(t, err)
	require.NoError(t, store.Release())
	t.Setenv("TMPDIR", filepath.Join(dir, "no-such-dir"))
	_, err = fsck.GC(context.Background(), registry.New(local.New(store.Dir())), inputs(given),
		fsck.GCOptions{Grace: time.Hour, Remove: true, PruneMissing: true, Now: time.Now().Add(2 * time.Hour)})
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.NoError(t, store.Verify(context.Background(), d), "deleted")
}

// TestGCStopsWhenUnrecorded: a collection whose Collected fails (the
// command could not keep its list) stops there: it deletes no more than
// it could record.
func TestGCStopsWhenUnrecorded(t *testing.T) {
	dir := t.TempDir()
	given := filepath.Join(dir, "given.jsonl")
	require.NoError(t, os.WriteFile(given, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600))
	store := registry.New(local.New(filepath.Join(dir, "artifacts")))
	for i := range 5 {
		_, _, err := store.Put(context.Background(), []byte(fmt.Sprintf("artifact %d", i)))
		require.NoError(t, err)
	}
	require.NoError(t, store.Release())
	full := errors.New("no space left")
	calls := 0
	_, err := fsck.GC(context.Background(), registry.New(local.New(store.Dir())), inputs(given),
		fsck.GCOptions{Grace: time.Hour, Remove: true, PruneMissing: true, Now: time.Now().Add(2 * time.Hour),
			Collected: func(fsck.Collected) error {
				if calls++; calls == 2 {
					return full
				}
				return nil
			}})
	require.ErrorIs(t, err, full)
	left := 0
	require.NoError(t, store.Each(context.Background(), func(storepkg.Digest, storepkg.FileInfo) error { left++; return nil }, nil))
	assert.Equal(t, 3, left, "deleted past the artifact it could not record")
}
