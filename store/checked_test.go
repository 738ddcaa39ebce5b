package store

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckedBounded: what a Store remembers of the objects it checked
// stays under maxChecked however many it meets, and the newest is always
// remembered.
func TestCheckedBounded(t *testing.T) {
	s := New(nil)
	var d Digest
	for i := range maxChecked + 100 {
		binary.BigEndian.PutUint64(d[:], uint64(i))
		s.check(d)
		assert.LessOrEqual(t, len(s.checked), maxChecked)
		if !s.recent(d) {
			t.Fatalf("object %d, just checked, is not remembered", i)
		}
	}
	var never Digest
	never[31] = 1
	assert.False(t, s.recent(never))
}
