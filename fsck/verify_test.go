package fsck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/mem"
)

// TestVerifyTo: VerifyTo passes each finding as it is made, the ones
// Verify keeps in its report and in the same order, and keeps none.
func TestVerifyTo(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	w := registry.New(b)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, os.WriteFile(tr, []byte("{}\n"), 0o600))
	var (
		recs []registry.Record
		lost []store.Digest
	)
	for i := range 5 {
		// Objects no transcript refers to, and records of objects the
		// store then lost: information and errors, in several passes.
		d, _, err := w.Put(ctx, fmt.Appendf(nil, "payload %d", i))
		require.NoError(t, err)
		gone, _, err := w.Put(ctx, fmt.Appendf(nil, "lost %d", i))
		require.NoError(t, err)
		lost = append(lost, gone)
		recs = append(recs, registry.Record{Hash: d.String(), Size: 9, Source: "/gone/a.jsonl", CreatedAt: "x"},
			registry.Record{Hash: gone.String(), Size: 6, Source: tr, CreatedAt: "x"})
	}
	require.NoError(t, w.Append(ctx, recs))
	for _, d := range lost {
		require.NoError(t, b.Remove(ctx, store.ObjectHandle(d)))
	}

	want, err := fsck.Verify(ctx, registry.New(b), inputs(tr))
	require.NoError(t, err)
	require.GreaterOrEqual(t, want.Errors, 5)
	var got []fsck.Finding
	rep, err := fsck.VerifyTo(ctx, registry.New(b), inputs(tr), func(f fsck.Finding) { got = append(got, f) })
	require.NoError(t, err)
	assert.Equal(t, want.Findings, got)
	assert.Empty(t, rep.Findings, "passed on, not kept")
	rep.Findings = want.Findings
	assert.Equal(t, want, rep)
}
