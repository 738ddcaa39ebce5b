package summary

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/store"
)

// TestCacheOncePerArtifact: a run's Cache describes an artifact once per
// context, however many times it is referenced, and forgets everything
// rather than grow past its bound.
func TestCacheOncePerArtifact(t *testing.T) {
	var c Cache
	calls := 0
	describe := func() (Kind, string) { calls++; return KindText, "a description" }
	d := store.Sum([]byte("a file read again and again"))
	for range 5 {
		k, s := c.Describe(d, Context{Tool: "Read", Input: "a.go"}, describe)
		assert.Equal(t, KindText, k)
		assert.Equal(t, "a description", s)
	}
	assert.Equal(t, 1, calls)
	c.Describe(d, Context{Tool: "Read", Input: "b.go"}, describe)
	assert.Equal(t, 2, calls, "another context, another description")

	for i := range maxCached {
		c.Describe(store.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)}), Context{}, describe)
	}
	assert.LessOrEqual(t, len(c.m), maxCached)

	var none *Cache
	none.Describe(d, Context{}, describe)
	none.Describe(d, Context{}, describe)
	assert.Equal(t, 2+maxCached+2, calls, "without a cache, every call describes")
}
