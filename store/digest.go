package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Digest is the SHA-256 of an artifact's bytes, its identity in the store.
type Digest [sha256.Size]byte

// Sum returns the Digest of data.
func Sum(data []byte) Digest { return sha256.Sum256(data) }

// ParseDigest parses 64 lower-case hex characters. Anything else (upper
// case, other lengths, path separators) is refused, so a parsed Digest is
// always safe to use in a file name.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("invalid artifact id %q: want 64 lower-case hex characters", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return d, fmt.Errorf("invalid artifact id %q: want 64 lower-case hex characters", s)
		}
	}
	_, _ = hex.Decode(d[:], []byte(s))
	return d, nil
}

// String returns the lower-case hex form of d.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return d == Digest{} }
