package externalizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodexHeadTinyBody: a function_call_output over the threshold only
// because of Codex's header, with a few bytes of output after "Output:",
// keeps no head inline: a five-byte artifact and the head copied into the
// marker would make the line longer than it was.
func TestCodexHeadTinyBody(t *testing.T) {
	const threshold = 1000
	header := strings.Repeat(strings.Repeat("A", 150)+"\n", 7) + "Output:\n"
	line := `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` +
		jsonString(t, header+"xxxxx") + `}}`
	require.GreaterOrEqual(t, len(line), threshold)

	store := memStore{}
	x := &Externalizer{Format: codexFormat, Threshold: threshold, PathFor: testPath, Put: store.put, Open: store.open}
	res, err := x.Rewrite([]byte(line), 0)
	require.NoError(t, err)
	for _, a := range res.Artifacts {
		assert.GreaterOrEqual(t, a.Size, holeMin(threshold), "an artifact of %d bytes, from a payload under the threshold", a.Size)
	}
	if res.Line != nil {
		assert.LessOrEqual(t, len(res.Line), len(line), "migrate made the line longer")
	}
}
