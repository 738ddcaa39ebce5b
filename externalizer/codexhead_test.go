package externalizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodexHeadTinyBody: a function_call_output over the threshold
// because of its header (up to 8 lines of 160 bytes stay inline) but whose
// output after "Output:\n" is a few bytes. cutSite keeps the head whatever
// the body's size, so a 5-byte artifact is stored and the line grows (the
// head is kept inline and copied again into the marker's lit, plus the
// hint and the marker): 1.4 KB becomes 3 KB at --threshold 1000. A payload
// below the threshold becomes an artifact, and migrate makes the
// transcript bigger. Fix: keep the head only when the body is itself
// large (at least holeMin(threshold)), else store the string whole (or
// leave it).
func TestCodexHeadTinyBody(t *testing.T) {
	const threshold = 1000
	header := strings.Repeat(strings.Repeat("A", 150)+"\n", 7) + "Output:\n"
	line := `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` +
		jsonString(t, header+"xxxxx") + `}}`
	require.GreaterOrEqual(t, len(line), threshold)

	store := memStore{}
	x := &Externalizer{Format: codex{}, Threshold: threshold, PathFor: testPath, Put: store.put, Open: store.open}
	res, err := x.Rewrite([]byte(line), 0)
	require.NoError(t, err)
	for _, a := range res.Artifacts {
		assert.GreaterOrEqual(t, a.Size, holeMin(threshold), "an artifact of %d bytes, from a payload under the threshold", a.Size)
	}
	if res.Line != nil {
		assert.LessOrEqual(t, len(res.Line), len(line), "migrate made the line longer")
	}
}
