package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestVerifyJSONSpilled: verify --json, whose findings wait in the
// temporary file until printed, writes what JSON of the report holding
// them gives (fsck.Verify keeps them in it).
func TestVerifyJSONSpilled(t *testing.T) {
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	st := registry.New(local.New(storeDir))
	_, _, err := st.Put(context.Background(), []byte("an artifact no record names"))
	require.NoError(t, err)
	var recs []registry.Record
	for i := range 300 {
		recs = append(recs, registry.Record{Hash: storepkg.Sum([]byte(fmt.Sprint(i))).String(), Size: 3, Source: fmt.Sprintf("/t/\"%d\".jsonl", i), CreatedAt: "2025-01-01T00:00:00Z"})
	}
	require.NoError(t, st.Append(context.Background(), recs))
	require.NoError(t, st.Release())
	rep, err := fsck.Verify(context.Background(), registry.New(local.New(storeDir)), nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rep.Findings), 300)
	var want bytes.Buffer
	require.NoError(t, writeJSON(&want, []fsck.Report{rep}))
	r := runCLI(t, "verify", "--json", "--store", storeDir)
	assert.Equal(t, exitProblems, r.code)
	assert.Equal(t, want.String(), r.stdout)
}
