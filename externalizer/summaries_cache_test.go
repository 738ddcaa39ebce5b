package externalizer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/store"
)

// TestSummariesOncePerArtifact: a run's Summaries describes an artifact
// once per context, however many times it is referenced, and forgets
// everything rather than grow past its bound.
func TestSummariesOncePerArtifact(t *testing.T) {
	var c Summaries
	calls := 0
	describe := func() (kind, string) { calls++; return kindText, "a description" }
	d := store.Sum([]byte("a file read again and again"))
	for range 5 {
		k, s := c.describe(d, Context{Tool: "Read", Input: "a.go"}, describe)
		assert.Equal(t, kindText, k)
		assert.Equal(t, "a description", s)
	}
	assert.Equal(t, 1, calls)
	c.describe(d, Context{Tool: "Read", Input: "b.go"}, describe)
	assert.Equal(t, 2, calls, "another context, another description")

	for i := range maxSummaries {
		c.describe(store.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)}), Context{}, describe)
	}
	assert.LessOrEqual(t, len(c.m), maxSummaries)

	var none *Summaries
	none.describe(d, Context{}, describe)
	none.describe(d, Context{}, describe)
	assert.Equal(t, 2+maxSummaries+2, calls, "without a cache, every call describes")
}
