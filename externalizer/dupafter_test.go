package externalizer

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddedDuplicateAfterMarker: members an agent adds after the
// marker "stay; the line still restores" (962550a). But the edits are
// still resolved over the whole entry, the added members included: when
// an added member repeats the key of an edited top-level member (a chat
// tool message's "content"), Resolve (Dup 0) lands on the added member and
// restore refuses it as "after the marker", and resolveDup (Dup 1) counts
// the added member and lands on the wrong earlier one (the hash then
// fails). Either way the migrated line no longer restores, and a later
// migrate takes its marker for foreign content and wraps it, so that the
// artifacts the inner marker needs are referenced by no marker gc reads.
// No wrong bytes come out (the hash holds), but the line is lost to
// rehydrate. Fix: resolve the marker's edits among the members before the
// marker (the root's members up to at.mem), which is what the original
// had.
func TestAddedDuplicateAfterMarker(t *testing.T) {
	big := jsonString(t, payloadText)
	for _, tc := range []struct{ name, line string }{
		{"dup 0", `{"role":"tool","tool_call_id":"c1","content":` + big + `}`},
		{"dup 1", `{"role":"tool","tool_call_id":"c1","content":` + big + `,"content":"ok"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memStore{}
			x := &Externalizer{Format: chat{}, Threshold: 4096, PathFor: testPath, Put: store.put, Open: store.open}
			line := []byte(tc.line)
			res, err := x.Rewrite(line, 0)
			require.NoError(t, err)
			require.NotNil(t, res.Line)

			added := `,"content":"appended by the agent"}`
			upgraded := append(bytes.TrimSuffix(bytes.Clone(res.Line), []byte("}")), added...)
			got, changed, err := Restore(upgraded, 0, store.open)
			require.NoError(t, err, "the line with a member added after its marker restores")
			require.True(t, changed)
			assert.Equal(t, tc.line[:len(tc.line)-1]+added, string(got))
		})
	}
}
