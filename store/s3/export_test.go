package s3

import (
	"testing"
	"time"
)

// For the tests: the size of a part, the part buffers of a Backend, how
// far a Save fills a buffer of its own before it takes one of them, and
// the tries of a request.
const (
	PartSize    = partSize
	MaxBuffers  = maxBuffers
	SmallBuffer = smallBuffer
	MaxAttempts = maxAttempts
)

// SetLeaseTTL makes leases count for ttl, and waits for them poll at
// most, for the rest of the test.
func SetLeaseTTL(t *testing.T, ttl, poll time.Duration) {
	oldTTL, oldPoll := leaseTTL, leasePoll
	leaseTTL, leasePoll = ttl, poll
	t.Cleanup(func() { leaseTTL, leasePoll = oldTTL, oldPoll })
}

// Die stops renewing the shared lease b holds, and forgets it, leaving it
// in the bucket: what a writer killed leaves behind.
func (b *Backend) Die() {
	b.lockMu.Lock()
	l := b.shared
	b.shared = nil
	b.lockMu.Unlock()
	close(l.stop)
	<-l.done
}
