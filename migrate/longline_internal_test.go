package migrate

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// shrinking reads data until it has served limit bytes, and from then on
// only its first cut bytes: a file truncated while it is read.
type shrinking struct {
	data       []byte
	served     int
	limit, cut int
}

func (s *shrinking) ReadAt(p []byte, off int64) (int, error) {
	data := s.data
	if s.served >= s.limit {
		data = data[:s.cut]
	}
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	s.served += n
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestRestoreLongLineShrunk: a long line copied from the file that is
// shorter when read again fails the restore with ErrSourceChanged; its
// bytes so far are never passed off as the line.
func TestRestoreLongLineShrunk(t *testing.T) {
	line := bytes.Repeat([]byte("x"), session.LongLine+100)
	data := append(append([]byte{}, line...), "\n{}\n"...)
	store := registry.New(local.New(t.TempDir()))
	for _, tt := range []struct {
		name  string
		limit int
	}{
		{"before the search for a marker", 0},
		{"before the copy", len(line)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			at := &shrinking{data: data, limit: tt.limit, cut: session.LongLine / 2}
			_, err := restoreFile(&out, bytes.NewReader(data), at, "s.jsonl", store.Opener(context.Background()))
			require.ErrorIs(t, err, session.ErrSourceChanged)
			assert.NotContains(t, out.String(), "{}", "lines after the short one were written")
		})
	}
	var out bytes.Buffer
	copied, err := restoreFile(&out, bytes.NewReader(data), bytes.NewReader(data), "s.jsonl", store.Opener(context.Background()))
	require.NoError(t, err)
	assert.True(t, copied)
	assert.Equal(t, data, out.Bytes())
}
