package count

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failAfter accepts at most n bytes in all, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, io.ErrShortWrite
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriter(t *testing.T) {
	var discard Writer
	n, err := io.WriteString(&discard, "hello, ")
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	_, _ = io.WriteString(&discard, "world")
	assert.Equal(t, int64(12), discard.N)

	var buf bytes.Buffer
	through := Writer{W: &buf}
	_, err = io.WriteString(&through, "abc")
	require.NoError(t, err)
	assert.Equal(t, "abc", buf.String())
	assert.Equal(t, int64(3), through.N)

	// Only what the writer beneath accepted is counted.
	short := Writer{W: &failAfter{n: 4}}
	_, err = io.WriteString(&short, "abc")
	require.NoError(t, err)
	n, err = io.WriteString(&short, "defg")
	assert.True(t, errors.Is(err, io.ErrShortWrite))
	assert.Equal(t, 1, n)
	assert.Equal(t, int64(4), short.N)
}
