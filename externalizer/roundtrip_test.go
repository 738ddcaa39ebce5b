package externalizer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// memStore is an in-memory artifact store for round-trip tests.
type memStore map[registry.Digest][]byte

func (m memStore) open(d registry.Digest) (io.ReadCloser, error) {
	data, ok := m[d]
	if !ok {
		return nil, fmt.Errorf("%s: %w", d, registry.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (m memStore) put(a Artifact) error {
	m[a.Digest] = bytes.Clone(a.Data)
	return nil
}

func testPath(d registry.Digest) string { return "artifacts/" + registry.ObjectPath(d) }

// roundTrip rewrites every line of input with f and restores it, checking
// that the restored bytes equal the input. It returns the rewritten bytes.
func roundTrip(t testing.TB, f Format, threshold int, input []byte) []byte {
	t.Helper()
	store := memStore{}
	x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: store.put}
	var migrated, restored bytes.Buffer
	r := transcript.NewReader(bytes.NewReader(input))
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		start := transcript.JSONStart(l)
		res, err := x.Rewrite(l.Text, start)
		require.NoError(t, err)
		out := l.Text
		if res.Line != nil {
			out = res.Line
		}
		migrated.Write(out)
		migrated.Write(l.EOL)
	}
	r = transcript.NewReader(bytes.NewReader(migrated.Bytes()))
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		out, changed, err := Restore(l.Text, transcript.JSONStart(l), store.open)
		require.NoError(t, err, "line %d", l.Num)
		if !changed {
			out = l.Text
		}
		restored.Write(out)
		restored.Write(l.EOL)
	}
	require.True(t, bytes.Equal(input, restored.Bytes()), "round trip changed the bytes")
	return migrated.Bytes()
}

func TestRoundTripCorpusPi(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/pi/*.jsonl")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus/pi")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			input, err := os.ReadFile(name)
			require.NoError(t, err)
			out := roundTrip(t, pi{}, 4096, input)
			t.Logf("%d -> %d bytes (%.1f%%)", len(input), len(out), 100*float64(len(out))/float64(len(input)))
			assert.Less(t, len(out), len(input))
		})
	}
}
