package registry_test

import (
	"bytes"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

func TestPutConcurrentSamePayloadCreatedOnce(t *testing.T) {
	s := registry.Open(t.TempDir())
	data := []byte("the same payload from eight workers")
	var wg sync.WaitGroup
	var created atomic.Int32
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, c, err := s.Put(data)
			assert.NoError(t, err)
			if c {
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(1), created.Load(), "exactly one Put writes the object")
}

func TestOpenVerifiesWhileReading(t *testing.T) {
	s := registry.Open(t.TempDir())
	data := bytes.Repeat([]byte("artifact bytes "), 10000)
	d, _, err := s.Put(data)
	require.NoError(t, err)
	require.NoError(t, s.Sync())

	r, err := s.Open(d)
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, r.Close())
	require.NoError(t, err)
	assert.Equal(t, data, got)

	// Flip one bit: reading to the end must fail with ErrCorrupt.
	path := s.Path(d)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 1
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	r, err = s.Open(d)
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	r.Close()
	assert.ErrorIs(t, err, registry.ErrCorrupt)

	_, err = s.Open(registry.Sum([]byte("never stored")))
	assert.ErrorIs(t, err, registry.ErrNotFound)
	_, err = s.Resolve(registry.Sum([]byte("never stored")).String())
	assert.ErrorIs(t, err, registry.ErrNotFound, "a full id that is not stored is not found, like a prefix")
}
