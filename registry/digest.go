package registry

import "github.com/transcript-tool/transcript-tool/store"

// Digest, Sum and ParseDigest are store's, named here too while callers
// move to package store.
type Digest = store.Digest

// Sum returns the Digest of data.
func Sum(data []byte) Digest { return store.Sum(data) }

// ParseDigest parses 64 lower-case hex characters (see store.ParseDigest).
func ParseDigest(s string) (Digest, error) { return store.ParseDigest(s) }
