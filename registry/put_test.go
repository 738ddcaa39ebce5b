package registry_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

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
