package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/transcript-tool/transcript-tool/store"
)

// S3 has no locks: the store's lock (see store.Locker) is made of leases,
// small objects below PREFIX/locks/ that their holders rewrite while they
// hold them and remove when they let go. A lease is honoured until
// leaseTTL after it was last written, by the server's clock (its
// LastModified against the others' of one listing), so that the lease of
// a holder that died stops counting by itself.
//
// A writer writes locks/shared-<id>, then lists locks/: if it sees a
// live exclusive lease it removes its own and tries again later, with a
// new id. A collector writes locks/exclusive-<id> and lists: if it sees
// another live exclusive lease it removes its own and tries again later;
// else it waits until each live shared lease of that first listing is
// gone or expired. S3 lists what was written before the listing began
// (strong list-after-write consistency, as AWS S3, MinIO and versitygw
// give; a server whose listings lag behind its writes defeats the
// leases), so of a writer and a collector that both write and then
// list, at least one sees the other; and a shared lease written after
// the collector's first listing belongs to a writer whose own listing
// sees the collector's lease, and which backs off.
//
// A holder rewrites its lease every leaseTTL/6 and relies on it only
// until leaseTTL/2 after the last rewrite that succeeded began: past
// that, Held and HoldShared report store.ErrLockLost, half a TTL before
// anyone else may take the lease as expired.

var (
	// leaseTTL is how long a lease counts after it was last written.
	// Tests shorten it.
	leaseTTL = time.Minute
	// leasePoll bounds the wait between two looks of one that waits
	// for a lease to go.
	leasePoll = time.Second
)

const (
	locksDir       = "locks/"
	sharedLease    = "shared-"
	exclusiveLease = "exclusive-"
	// clockStep is the precision of LastModified: whole seconds, so two
	// of them may differ by up to a second more than the writes did.
	clockStep = time.Second
)

// A lease is one lock object this Backend holds, rewritten by a goroutine
// of its own until it is let go.
type lease struct {
	b   *Backend
	key string
	ttl time.Duration // leaseTTL when it was taken

	mu sync.Mutex
	// renewed is when the last write of the lease that succeeded began.
	renewed time.Time
	// failed is the error of the last write that failed, if any since.
	failed error
	// lost is set once the lease may have expired, for good.
	lost error

	stop, done chan struct{}
}

var _ store.Locker = (*Backend)(nil)

// HoldShared takes a shared lease for this Backend's writes, once: it is
// held, and renewed, from the first write until Release. It waits while a
// collector holds an exclusive lease, until ctx is done. Once held, it
// returns the lease's Held.
func (b *Backend) HoldShared(ctx context.Context) error {
	b.lockMu.Lock()
	defer b.lockMu.Unlock()
	if b.shared != nil {
		return b.shared.Held()
	}
	l, err := b.acquire(ctx, sharedLease, nil)
	if err != nil {
		return err
	}
	b.shared = l
	return nil
}

// Release removes the shared lease this Backend's writes have held since
// the first. It takes no context: a run that was cancelled still lets go
// of its lease, rather than keep collectors waiting until it expires.
func (b *Backend) Release() error {
	b.lockMu.Lock()
	l := b.shared
	b.shared = nil
	b.lockMu.Unlock()
	if l == nil {
		return nil
	}
	return l.Close()
}

// LockExclusive takes an exclusive lease, for a collector: it waits while
// writers hold shared leases, or another collector an exclusive one
// (calling waiting once, if not nil, when it starts to), until ctx is
// done.
func (b *Backend) LockExclusive(ctx context.Context, waiting func()) (store.Lock, error) {
	return b.acquire(ctx, exclusiveLease, waiting)
}

// acquire writes a lease of kind, and lists the others, until they let
// it hold it (see the comment at the top of this file).
func (b *Backend) acquire(ctx context.Context, kind string, waiting func()) (*lease, error) {
	var (
		key string
		// incumbents are the live shared leases of the collector's
		// first listing that it still waits for.
		incumbents map[string]bool
	)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, leasePoll) {
		if key == "" {
			key = b.base + locksDir + kind + newLeaseID()
		}
		start := time.Now()
		err := b.writeLeaseOnce(ctx, key)
		var live map[string][]string
		if err == nil {
			live, err = b.liveLeases(ctx, key)
		}
		if err != nil {
			// The write may have been done, its answer lost: a lease
			// left behind would keep others waiting until it expires.
			b.removeLease(key)
			return nil, err
		}
		if incumbents == nil {
			if live[exclusiveLease] != nil {
				b.removeLease(key)
				key = ""
				if err := store.LockWait(ctx, &waiting, delay); err != nil {
					return nil, err
				}
				continue
			}
			incumbents = map[string]bool{}
			if kind == exclusiveLease {
				for _, k := range live[sharedLease] {
					incumbents[k] = true
				}
			}
		} else {
			still := map[string]bool{}
			for _, k := range live[sharedLease] {
				if incumbents[k] {
					still[k] = true
				}
			}
			incumbents = still
		}
		if len(incumbents) == 0 {
			return b.hold(key, start), nil
		}
		if err := store.LockWait(ctx, &waiting, delay); err != nil {
			b.removeLease(key)
			return nil, err
		}
	}
}

// liveLeases lists the leases of the store other than own, by kind, but
// those expired: older than leaseTTL (and a clock step) by the newest
// LastModified of the listing, at least own's, which was just written.
// Expired leases, left by holders that died, are removed.
func (b *Backend) liveLeases(ctx context.Context, own string) (map[string][]string, error) {
	type listed struct {
		key string
		at  time.Time
	}
	var all []listed
	var now time.Time
	dir := b.base + locksDir
	p := awss3.NewListObjectsV2Paginator(b.client, &awss3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &dir})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, b.fail("list", dir, err)
		}
		for _, o := range page.Contents {
			at := aws.ToTime(o.LastModified)
			if at.After(now) {
				now = at
			}
			all = append(all, listed{aws.ToString(o.Key), at})
		}
	}
	live := map[string][]string{}
	for _, o := range all {
		name := strings.TrimPrefix(o.key, dir)
		kind := ""
		for _, k := range []string{sharedLease, exclusiveLease} {
			if strings.HasPrefix(name, k) {
				kind = k
			}
		}
		switch {
		case o.key == own || kind == "":
		case now.Sub(o.at) >= leaseTTL+clockStep:
			b.removeLease(o.key)
		default:
			live[kind] = append(live[kind], o.key)
		}
	}
	return live, nil
}

// hold starts renewing the lease at key, written when start began.
func (b *Backend) hold(key string, start time.Time) *lease {
	l := &lease{b: b, key: key, ttl: leaseTTL, renewed: start, stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew()
	return l
}

// renew rewrites the lease every leaseTTL/6 until Close, or until it is
// lost. It waits a period for each write; one not answered by then counts
// as failed, but is not abandoned: a request its client gave up on may
// still be done by the server, after Close's removal, and leave a lease
// that keeps others out until it expires. So each write goes on, bounded
// by the lease's TTL as an acquirer's is (writeLeaseOnce), and renew
// returns, letting Close remove the lease, only once every write is
// answered. A write that succeeds late renews the lease all the same.
func (l *lease) renew() {
	var writes sync.WaitGroup
	defer close(l.done)
	defer writes.Wait()
	every := l.ttl / 6
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		start := time.Now()
		answer := make(chan error, 1)
		writes.Add(1)
		go func() {
			defer writes.Done()
			ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
			defer cancel()
			err := l.b.writeLease(ctx, l.key)
			if err == nil {
				l.mu.Lock()
				if start.After(l.renewed) {
					l.renewed = start
				}
				l.mu.Unlock()
			}
			answer <- err
		}()
		wait := time.NewTimer(every)
		var err error
		select {
		case err = <-answer:
		case <-wait.C:
			err = l.b.fail("write lease", l.key, fmt.Errorf("no answer in %v", every))
		case <-l.stop:
			wait.Stop()
			return
		}
		wait.Stop()
		l.mu.Lock()
		l.failed = err
		l.mu.Unlock()
		if l.Held() != nil {
			return
		}
	}
}

// Held returns nil while the lease was renewed less than leaseTTL/2 ago,
// and an error wrapping store.ErrLockLost from then on.
func (l *lease) Held() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		// By the wall clock too: the monotonic one stands still while
		// the machine sleeps, and the lease expires all the same.
		since := max(time.Since(l.renewed), time.Now().Round(0).Sub(l.renewed.Round(0)))
		if since >= l.ttl/2 {
			why := ""
			if l.failed != nil {
				why = ": " + l.failed.Error()
			}
			l.lost = fmt.Errorf("%w: its lease %s was last renewed %v ago%s", store.ErrLockLost, l.b.url(l.key), since.Round(time.Second), why)
		}
	}
	return l.lost
}

// Close stops renewing the lease and removes it.
func (l *lease) Close() error {
	close(l.stop)
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
	defer cancel()
	if _, err := l.b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &l.b.bucket, Key: &l.key}); err != nil && !notExist(err) {
		return l.b.fail("remove lease", l.key, err)
	}
	return nil
}

// writeLease writes the lease at key anew: its LastModified is now. It
// says who holds it, for a person looking at the bucket.
func (b *Backend) writeLease(ctx context.Context, key string) error {
	host, pid := store.Process()
	body := fmt.Sprintf("transcript-tool on %s, pid %d, %s\n", host, pid, time.Now().UTC().Format(time.RFC3339))
	_, err := b.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: &b.bucket, Key: &key, Body: bytes.NewReader([]byte(body)), ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String("text/plain"),
	})
	if err != nil {
		return b.fail("write lease", key, err)
	}
	return nil
}

// writeLeaseOnce is writeLease for an acquirer, whose lease must not
// outlive it: the write is not cut short when ctx ends, but answered, so
// that the removal that follows cannot reach the server before the write
// it would undo (a request abandoned by its client may still be done by
// the server, later). It is bounded by leaseTTL: a lease written later
// than that, if ever, expires like one whose holder died. When ctx has
// ended meanwhile, its error is returned, and the lease is to be removed.
func (b *Backend) writeLeaseOnce(ctx context.Context, key string) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseTTL)
	defer cancel()
	if err := b.writeLease(wctx, key); err != nil {
		return err
	}
	return ctx.Err()
}

// removeLease removes a lease that counts no more, as well as it can: one
// left behind expires.
func (b *Backend) removeLease(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseTTL)
	defer cancel()
	_, _ = b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b.bucket, Key: &key})
}

// newLeaseID returns a fresh random id for a lease's key.
func newLeaseID() string {
	var r [12]byte
	_, _ = rand.Read(r[:]) // never fails
	return hex.EncodeToString(r[:])
}
