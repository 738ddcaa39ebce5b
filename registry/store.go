package registry

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/location"
)

// RegistryFile is the name of the single-file registry of versions before
// segments (see SegmentsDir): still read, never appended to.
const RegistryFile = "registry.jsonl"

const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// folder is a Backend kept in a local folder: the registry's segments are
// files of it, appended to in place (see Append).
type folder interface {
	store.Backend
	Dir() string
}

// Store is an artifact store, its objects (the embedded store.Store) and
// its registry of where each came from. A Store is one writer of the
// registry: it appends to a segment of its own (see Append).
type Store struct {
	*store.Store
	b   store.Backend
	dir string // the store's folder, where its registry's files are
	// folder is set when the backend is a local folder, whose registry
	// files are appended to in place (see objects.go for the others).
	folder bool

	// appendMu guards known, the keys of the registry's records, and
	// marks, how much of each registry file they were read from (see
	// readKnown); and this Store's segment: its path, its name relative
	// to the store, its length as this Store wrote it, and the shard of
	// the segments it starts.
	appendMu     sync.Mutex
	known        map[recordKey]bool
	marks        map[string]mark
	seg, segName string
	segEnd       int64
	shard        Shard
	// gen numbers the writes of Appends; written holds, for each segment,
	// the last generation written to it.
	gen     uint64
	written map[string]uint64
	// syncMu is held by the fsync of a segment's appended lines, shared
	// by the Appends that wrote them; synced and failed hold, for each
	// segment, the last generation it made durable, or failed to.
	syncMu         sync.Mutex
	synced, failed map[string]uint64
	// segDirSynced is set once this Store has fsynced the store's
	// directory after creating a segment: the segments directory's entry
	// is durable.
	segDirSynced bool
}

// New returns the Store kept by b, whose registry is in b's local folder.
func New(b store.Backend) *Store {
	s := &Store{Store: store.New(b), b: b, written: map[string]uint64{}, synced: map[string]uint64{}, failed: map[string]uint64{}}
	if f, ok := store.As[folder](b); ok {
		s.dir, s.folder = f.Dir(), true
	} else {
		s.dir = b.Location()
	}
	return s
}

// Dir returns where the store is, for messages: its folder, or its URL.
func (s *Store) Dir() string { return s.b.Location() }

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

// notLinked refuses a path that is a symbolic link.
func notLinked(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, store.ErrLinked)
	}
	return nil
}

// isTemp reports whether name is a writer's temporary file.
func isTemp(name string) bool { return len(name) > 0 && name[0] == '.' }

// segmentsDir returns the path of the folder of segments.
func (s *Store) segmentsDir() string { return filepath.Join(s.dir, SegmentsDir) }

// Open returns the Store at spec, a folder or a URL (see location.Open).
func Open(spec string) (*Store, error) {
	b, err := location.Open(spec)
	if err != nil {
		return nil, err
	}
	return New(b), nil
}
