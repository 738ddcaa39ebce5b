package benchgen

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEachFile(t *testing.T) {
	var calls atomic.Int32
	sizes, err := EachFile(100, 3, func(i int, buf []byte) (int64, error) {
		calls.Add(1)
		require.Len(t, buf, 1<<20)
		return int64(i * 10), nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(100), calls.Load())
	for i, n := range sizes {
		assert.Equal(t, int64(i*10), n)
	}

	bad := errors.New("bad")
	_, err = EachFile(10, 2, func(i int, _ []byte) (int64, error) {
		if i%4 == 1 {
			return 0, fmt.Errorf("file %d: %w", i, bad)
		}
		return 1, nil
	})
	assert.ErrorIs(t, err, bad)
	assert.ErrorContains(t, err, "file 1")
	assert.ErrorContains(t, err, "file 9")
}
