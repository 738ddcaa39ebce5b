package summary

import (
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Cache remembers the descriptions of the artifacts a run has described,
// by digest and context, so that an artifact referenced many times (the
// same file read again and again) is described once: the description
// depends only on the bytes, which the digest names, and the context. It
// holds at most maxCached entries, and starts afresh when full. The zero
// value is ready; it is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[cacheKey]cached
}

type cacheKey struct {
	d   store.Digest
	ctx Context
}

type cached struct {
	kind Kind
	text string
}

// maxCached bounds a Cache: some 1 MB of summaries at most, so that a
// run's memory does not grow with the distinct artifacts it meets (the
// payload cache, externalizer.Payloads, spares the most repeated ones
// their summary).
const maxCached = 1 << 12

// Describe returns the kind and description of artifact d in context
// ctx: remembered, or made by describe. A nil Cache remembers nothing.
func (c *Cache) Describe(d store.Digest, ctx Context, describe func() (Kind, string)) (Kind, string) {
	if c == nil {
		return describe()
	}
	k := cacheKey{d, ctx}
	c.mu.Lock()
	s, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return s.kind, s.text
	}
	s.kind, s.text = describe()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[cacheKey]cached{}
	}
	c.m[k] = s
	c.mu.Unlock()
	return s.kind, s.text
}
