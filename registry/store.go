package registry

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
)

// Store is an artifact store, its objects (the embedded store.Store) and
// its registry of where each came from. A Store is one writer of the
// registry: it appends to a segment of its own (see Append).
type Store struct {
	*store.Store
	b store.Backend
	// app appends to this Store's segment in place, where the backend
	// can; without it each Append is a whole new segment (see
	// appendWhole).
	app store.Appender

	// appendMu guards known, the keys of the registry's records (nil
	// until read), and marks, how much of each registry file they were
	// read from (see readKnown); and this Store's segment, its length as
	// this Store wrote it, and the shard of the segments it starts.
	appendMu sync.Mutex
	known    *keySet
	marks    map[string]mark
	seg      store.Handle
	segEnd   int64
	shard    Shard
	// gen numbers the writes of Appends; written holds, for each segment,
	// the last generation written to it.
	gen     uint64
	written map[string]uint64
	// syncMu is held by the fsync of a segment's appended lines, shared
	// by the Appends that wrote them; synced and failed hold, for each
	// segment, the last generation it made durable, or failed to.
	syncMu         sync.Mutex
	synced, failed map[string]uint64
}

// New returns the Store kept by b.
func New(b store.Backend) *Store {
	s := &Store{Store: store.New(b), b: b, written: map[string]uint64{}, synced: map[string]uint64{}, failed: map[string]uint64{}}
	s.app, _ = store.As[store.Appender](b)
	return s
}

// Open returns the Store at spec, whose backend open opens.
func Open(open store.OpenFunc, spec string) (*Store, error) {
	b, err := open.Open(spec)
	if err != nil {
		return nil, err
	}
	return New(b), nil
}

// Dir returns where the store is, for messages: its folder, or its URL.
func (s *Store) Dir() string { return s.b.Location() }

// where names h in messages: a local file by its path below the store's
// folder as the folder was given (Path would make it absolute), any other
// by its Path (a URL).
func (s *Store) where(h store.Handle) string {
	if p := s.b.Path(h); !filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.b.Location(), filepath.FromSlash(store.Key(h)))
}

// Release gives up the store's lock that this Store's writes have held
// since the first, where its backend has one (see store.Locker). Call it
// once every transcript that refers to what was stored or found through
// this Store is in place, or has failed.
func (s *Store) Release() error {
	if l, ok := store.As[store.Locker](s.b); ok {
		return l.Release()
	}
	return nil
}

// holdShared takes the store's lock shared, where its backend has one.
func (s *Store) holdShared(ctx context.Context) error {
	if l, ok := store.As[store.Locker](s.b); ok {
		return l.HoldShared(ctx)
	}
	return nil
}

// LockExclusive takes the store's lock exclusively, for a collector (see
// store.Locker). A backend with no lock gives a no-op lock: its collector
// relies on the grace period alone.
func (s *Store) LockExclusive(ctx context.Context, waiting func()) (store.Lock, error) {
	if l, ok := store.As[store.Locker](s.b); ok {
		return l.LockExclusive(ctx, waiting)
	}
	return noLock{}, nil
}

// noLock is the lock of a backend that has none.
type noLock struct{}

func (noLock) Held() error  { return nil }
func (noLock) Close() error { return nil }
