package agentstate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
)

// TestCodexStateDeclared: the state Codex's declaration names is this
// package's thread history: through the declaration, a rollout's thread
// is locked and its rows reset, and any other file has no state.
func TestCodexStateDeclared(t *testing.T) {
	var state *format.State
	for _, a := range format.Agents() {
		if a.Format == format.Codex {
			state = a.State
		}
	}
	require.NotNil(t, state, "Codex declares its state")

	home, rollout := codexHome(t)
	h, err := state.Lock(rollout)
	require.NoError(t, err)
	require.NotNil(t, h)
	_, err = state.Lock(rollout)
	require.ErrorIs(t, err, ErrThreadInUse, "held")
	require.NoError(t, h.Reset(context.Background()))
	require.NoError(t, h.Release())
	db := openDB(t, home)
	for table, n := range rowCounts(t, db, threadA) {
		assert.Zero(t, n, "the thread's rows of %s are gone", table)
	}
	for table, n := range rowCounts(t, db, threadB) {
		assert.Equal(t, 1, n, "another thread's rows of %s are kept", table)
	}

	h, err = state.Lock(filepath.Join(home, "sessions", "notes.jsonl"))
	require.NoError(t, err)
	assert.Nil(t, h, "no rollout, no state")
}
