package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestGCCollectedSpilled: reports whose collected artifacts wait in the
// temporary file (none, one, thousands, over several of its chunks;
// paths that JSON escapes) are written as JSON as the reports holding
// them are (writeJSON).
func TestGCCollectedSpilled(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		var held, passed []fsck.GCReport
		spill := collectedList{listSpill: listSpill{what: "collected artifacts"}}
		defer spill.close()
		for i := range r.IntN(4) {
			rep := fsck.GCReport{Store: fmt.Sprintf("/s/<store & %d>", i), Objects: r.IntN(9), Removed: r.IntN(2) == 0,
				ElsewhereIn: []string{}, GoneIn: []string{"", "/gone\u2028"}, Collected: []fsck.Collected{}, RecordsDropped: r.IntN(3)}
			spill.begin()
			n := []int{0, 1, 3000}[r.IntN(3)]
			for j := range n {
				c := fsck.Collected{Path: fmt.Sprintf("/s/objects/\"%d\"/<%d>é", i, j), Size: r.Int64N(1 << 40)}
				rep.Collected = append(rep.Collected, c)
				rep.Bytes += c.Size
				require.NoError(t, spill.add(c))
			}
			held = append(held, rep)
			rep.Collected = []fsck.Collected{}
			passed = append(passed, rep)
		}
		var want, got bytes.Buffer
		require.NoError(t, writeJSON(&want, held))
		require.NoError(t, writeListsJSON(&got, passed, "collected", func(i int, put func(any) error) error {
			return spill.each(i, func(c fsck.Collected) error { return put(c) })
		}))
		assert.Equal(t, want.String(), got.String(), "seed %d", seed)
	}
}

// TestGCStoppedHint: a gc that fails says what it deleted before: with
// --yes each artifact collected was deleted as it was (fsck's
// TestGCStopsMidway), and the stores before the failing one in full.
func TestGCStoppedHint(t *testing.T) {
	for _, tt := range []struct {
		removing         bool
		deleted, earlier int
		want             string
	}{
		{false, 0, 0, "nothing was deleted from /s"},
		{false, 3, 2, "nothing was deleted from /s"},
		{true, 0, 0, "nothing was deleted from /s"},
		{true, 0, 1, "nothing was deleted from /s (1 store before it collected in full)"},
		{true, 1, 0, "1 artifact of /s deleted before the error, none that a given transcript refers to; the store's registry names them until gc --yes runs again"},
		{true, 7, 2, "7 artifacts of /s deleted before the error, none that a given transcript refers to; the store's registry names them until gc --yes runs again (2 stores before it collected in full)"},
	} {
		assert.Equal(t, tt.want, gcStopped("/s", tt.removing, tt.deleted, tt.earlier))
	}
}

// TestGCNeedsTemporaryFile: gc keeps what it collects, and with --yes the
// registry's compaction, in a temporary file: where none can be made
// ($TMPDIR gone), it stops before it deletes anything, and says so.
func TestGCNeedsTemporaryFile(t *testing.T) {
	for _, yes := range []bool{false, true} {
		dir := t.TempDir()
		storeDir := filepath.Join(dir, "store")
		st := registry.New(local.New(storeDir))
		d, _, err := st.Put(context.Background(), []byte("unreferenced, unrecorded"))
		require.NoError(t, err)
		require.NoError(t, st.Release())
		then := time.Now().Add(-2 * time.Hour)
		require.NoError(t, os.Chtimes(st.Path(d), then, then))
		tr := filepath.Join(dir, "t.jsonl")
		require.NoError(t, os.WriteFile(tr, []byte("{}\n"), 0o600))
		t.Setenv("TMPDIR", filepath.Join(dir, "no-such-dir"))
		args := []string{"gc", "--store", storeDir, "--prune-missing", tr}
		if yes {
			args = append(args, "--yes")
		}
		r := runCLI(t, args...)
		assert.Equal(t, exitUsage, r.code, "--yes=%v", yes)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, "temporary file")
		assert.Contains(t, r.stderr, "hint: nothing was deleted")
		assert.FileExists(t, st.Path(d))
	}
}
