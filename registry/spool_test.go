package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store/mem"
)

// TestSpool checks that the registry of a backend that cannot open files
// in place is read the same when its files are put in the spool's
// temporary file past a few KiB held, and that the temporary file goes
// with the last of them.
func TestSpool(t *testing.T) {
	s := New(objectStorage{mem.New()})
	for i := range 20 {
		// Each Append its own segment, as over object storage.
		require.NoError(t, s.Append(t.Context(), putAll(t, s, 3*i, 3*i+1, 3*i+2)))
	}
	read := func() []Record {
		var got []Record
		require.NoError(t, s.Records(t.Context(), func(r Record) error {
			got = append(got, r)
			return nil
		}, nil))
		return got
	}
	want := read()
	require.Len(t, want, 60)

	old := spoolHeld
	spoolHeld = 2000
	t.Cleanup(func() { spoolHeld = old })
	assert.Equal(t, want, read())

	files, err := s.openRegistry(t.Context())
	require.NoError(t, err)
	require.Len(t, files, 20)
	var p *spool
	held := 0
	for _, rf := range files {
		if f, ok := rf.f.(*spooled); ok {
			p = f.p
		} else {
			held++
		}
	}
	require.NotNil(t, p, "no file spooled")
	assert.Positive(t, held, "no file held in memory")
	assert.Equal(t, len(files)-held, p.open)
	closeAll(files)
	assert.Zero(t, p.open)
}
