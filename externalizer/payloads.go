package externalizer

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Payloads remembers, for a run, the artifacts made of the payloads it has
// met, by the payload's JSON bytes as they stand in the line: a payload met
// again (the same file read in many sessions, Claude Code's toolUseResult
// beside its tool_result) is not decoded, hashed or described again.
//
// An entry is found by a 64-bit hash of those bytes but served only when
// the bytes, and every other input of the artifact's form (see
// payloadKey), are equal to the entry's: a hash collision costs a
// comparison, never a wrong artifact. What a payload becomes is a pure
// function of those inputs, so an entry serves exactly what encoding the
// payload again would make.
//
// It holds at most Budget bytes of payloads, evicting the entries not
// met since the clock hand last passed them (second chance), and keeps no
// payload larger than a quarter of Budget. The zero value is ready, with
// DefaultPayloadBudget; it is safe for concurrent use.
type Payloads struct {
	// Budget bounds the bytes the entries hold; 0 is DefaultPayloadBudget.
	Budget int

	mu    sync.Mutex
	seed  maphash.Seed
	m     map[uint64][]*payloadEntry
	clock []*payloadEntry // every entry, in the order the hand visits them
	hand  int
	used  int // bytes held: see cost
	// hash is maphash.Bytes under seed; tests make it collide.
	hash func(seed maphash.Seed, key payloadKey) uint64
}

// DefaultPayloadBudget is the bytes of payloads a Payloads holds by
// default: the 128 distinct payloads of 16 KB behind the bench's
// real-shaped project fit with room (at 2 MiB they thrash: migrate's
// ratio to sha256sum fell from 0.41 to 0.37). At 8 MiB a run over the
// bench's 1 GB corpus peaked some 20 MiB higher, the cache's bytes and
// their garbage; at 4 MiB, 2 MiB higher than at 2.
const DefaultPayloadBudget = 4 << 20

// payloadKey is everything encodePiece reads: the hole's JSON bytes and
// how the site sees them.
type payloadKey struct {
	raw               []byte
	body, bare, image bool
	mime              string
}

func keyOf(h hole) payloadKey {
	return payloadKey{raw: h.v.Raw(), body: h.body, bare: h.bare, image: h.image, mime: h.mime}
}

func (k payloadKey) equal(o payloadKey) bool {
	return k.body == o.body && k.bare == o.bare && k.image == o.image && k.mime == o.mime && bytes.Equal(k.raw, o.raw)
}

// payloadEntry is what a payload became: its artifact's digest, size,
// media type and form.
type payloadEntry struct {
	key    payloadKey // raw is a copy the entry owns
	sum    uint64
	digest store.Digest
	size   int
	media  string
	form   Form
	met    bool // met again since the hand last passed; guarded by mu
}

// cost is what an entry counts against the budget: its bytes and, for
// the map, the clock and the entry itself, an estimate of 128 bytes.
func (e *payloadEntry) cost() int { return len(e.key.raw) + len(e.key.mime) + 128 }

func defaultHash(seed maphash.Seed, k payloadKey) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	_, _ = h.Write(k.raw)
	flags := byte(0)
	for i, f := range []bool{k.body, k.bare, k.image} {
		if f {
			flags |= 1 << i
		}
	}
	_ = h.WriteByte(flags)
	_, _ = h.WriteString(k.mime)
	return h.Sum64()
}

// find returns the entry of hole h, or nil, and the hash to add it under.
func (c *Payloads) find(h hole) (*payloadEntry, uint64) {
	if c == nil {
		return nil, 0
	}
	k := keyOf(h)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[uint64][]*payloadEntry{}
		c.seed = maphash.MakeSeed()
		if c.hash == nil {
			c.hash = defaultHash
		}
	}
	seed, hash := c.seed, c.hash
	c.mu.Unlock()
	// Hashed outside the lock, the one step whose cost grows with the
	// payload but a hit's comparison.
	sum := hash(seed, k)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.m[sum] {
		if e.key.equal(k) {
			e.met = true
			return e, sum
		}
	}
	return nil, sum
}

// add remembers that hole h, whose key hashes to sum, became the artifact
// of digest d in piece p, evicting what the budget requires.
func (c *Payloads) add(h hole, sum uint64, d store.Digest, p piece) {
	if c == nil {
		return
	}
	k := keyOf(h)
	budget := c.Budget
	if budget <= 0 {
		budget = DefaultPayloadBudget
	}
	e := &payloadEntry{sum: sum, digest: d, size: len(p.data), media: p.media, form: p.form}
	e.key = k
	if e.cost() > budget/4 {
		return
	}
	e.key.raw = bytes.Clone(k.raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.m[sum] {
		if o.key.equal(k) {
			return // added meanwhile by another worker
		}
	}
	for c.used+e.cost() > budget {
		c.evict()
	}
	c.m[sum] = append(c.m[sum], e)
	c.clock = append(c.clock, e)
	c.used += e.cost()
}

// evict removes the first entry at or after the hand that was not met
// since the hand last passed it, clearing the mark of those that were.
func (c *Payloads) evict() {
	for {
		if c.hand >= len(c.clock) {
			c.hand = 0
		}
		e := c.clock[c.hand]
		if e.met {
			e.met = false
			c.hand++
			continue
		}
		last := len(c.clock) - 1
		c.clock[c.hand] = c.clock[last]
		c.clock[last] = nil
		c.clock = c.clock[:last]
		c.used -= e.cost()
		bucket := c.m[e.sum]
		for i, o := range bucket {
			if o == e {
				bucket = append(bucket[:i], bucket[i+1:]...)
				break
			}
		}
		if len(bucket) == 0 {
			delete(c.m, e.sum)
		} else {
			c.m[e.sum] = bucket
		}
		return
	}
}
