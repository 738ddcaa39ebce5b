package fsck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
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
				store := registry.Open(filepath.Join(dir, "artifacts"))
				d, _, err := store.Put([]byte("the artifact"))
				require.NoError(t, err)
				require.NoError(t, store.Release())
				if tt.recorded {
					src := map[string]string{"": "", "given": given, "other": other, "alias": alias, "gone": filepath.Join(dir, "gone.jsonl")}[tt.source]
					require.NoError(t, store.Append([]registry.Record{{Hash: d.String(), Source: src, CreatedAt: "2025-01-01T00:00:00Z"}}))
					require.NoError(t, store.Release())
				}
				then := time.Now().Add(-tt.age)
				require.NoError(t, os.Chtimes(store.Path(d), then, then))

				rep, err := fsck.GC(context.Background(), registry.Open(store.Dir()), []string{given},
					fsck.GCOptions{Grace: time.Hour, Remove: true, PruneMissing: prune, Now: time.Now()})
				require.NoError(t, err)
				deleted := !tt.kept
				if prune {
					deleted = tt.pruned
				}
				if deleted {
					assert.Len(t, rep.Collected, 1)
					assert.ErrorIs(t, store.Verify(d), registry.ErrNotFound)
				} else {
					assert.Empty(t, rep.Collected)
					assert.NoError(t, store.Verify(d))
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
	writer := registry.Open(filepath.Join(dir, "artifacts"))
	_, _, err := writer.Put([]byte("being migrated"))
	require.NoError(t, err)

	_, err = fsck.GC(context.Background(), registry.Open(writer.Dir()), []string{given}, fsck.GCOptions{Now: time.Now()})
	require.NoError(t, err, "a dry run does not wait")

	waited := make(chan string, 1)
	done := make(chan error)
	go func() {
		_, err := fsck.GC(context.Background(), registry.Open(writer.Dir()), []string{given},
			fsck.GCOptions{Remove: true, PruneMissing: true, Now: time.Now(), Waiting: func(s string) { waited <- s }})
		done <- err
	}()
	assert.Equal(t, writer.Dir(), <-waited)
	require.NoError(t, writer.Release())
	require.NoError(t, <-done)

	missing := filepath.Join(dir, "none")
	rep, err := fsck.GC(context.Background(), registry.Open(missing), []string{given}, fsck.GCOptions{Remove: true, Now: time.Now()})
	require.NoError(t, err)
	assert.Zero(t, rep.Objects)
	assert.NoDirExists(t, missing)
}
