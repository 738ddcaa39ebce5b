package externalizer

import (
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Summaries remembers the descriptions of the artifacts a run has
// described, by digest and context, so that an artifact referenced many
// times (the same file read again and again) is described once: the
// description depends only on the bytes, which the digest names, and the
// context. It holds at most maxSummaries entries, and starts afresh when
// full. The zero value is ready; it is safe for concurrent use.
type Summaries struct {
	mu sync.Mutex
	m  map[summaryKey]summary
}

type summaryKey struct {
	d   store.Digest
	ctx Context
}

type summary struct {
	kind kind
	text string
}

// maxSummaries bounds a Summaries: some 1 MB of summaries at most, so that
// a run's memory does not grow with the distinct artifacts it meets (the
// payload cache, Payloads, spares the most repeated ones their summary).
const maxSummaries = 1 << 12

// describe returns the kind and description of artifact d in context
// ctx: remembered, or made by describe.
func (c *Summaries) describe(d store.Digest, ctx Context, describe func() (kind, string)) (kind, string) {
	if c == nil {
		return describe()
	}
	k := summaryKey{d, ctx}
	c.mu.Lock()
	s, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return s.kind, s.text
	}
	s.kind, s.text = describe()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxSummaries {
		c.m = map[summaryKey]summary{}
	}
	c.m[k] = s
	c.mu.Unlock()
	return s.kind, s.text
}
