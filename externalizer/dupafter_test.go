package externalizer

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddedDuplicateAfterMarker: a marker's edits are found among the
// members the entry had before its marker: a member an agent added after
// it, named like an edited one (a chat tool message's "content"), is
// neither taken for the edited member nor counted among its duplicates,
// and the line restores.
func TestAddedDuplicateAfterMarker(t *testing.T) {
	big := jsonString(t, payloadText)
	for _, tc := range []struct{ name, line string }{
		{"dup 0", `{"role":"tool","tool_call_id":"c1","content":` + big + `}`},
		{"dup 1", `{"role":"tool","tool_call_id":"c1","content":` + big + `,"content":"ok"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memStore{}
			x := &Externalizer{Format: chatFormat, Threshold: 4096, PathFor: testPath, Put: store.put, Open: store.open}
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
