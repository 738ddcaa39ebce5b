package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Errors reported by Get, Open and Verify.
var (
	ErrNotFound = errors.New("artifact not found")
	ErrCorrupt  = errors.New("artifact corrupt")
)

// Locker is a Backend that keeps a lock for its store: writers hold it
// shared from their first write until Release, a collector exclusively
// (see docs/registry-index.md, # Locking). A local store's lock is a
// file's flock(2), which the kernel drops with its holder; an S3 store's
// is a set of leases, which expire (see package store/s3). A Backend that
// is no Locker relies on the collector's grace alone.
type Locker interface {
	// HoldShared takes the lock shared, once, until Release, waiting while
	// a collector holds it, until ctx is done. Once it is held, HoldShared
	// returns at once: nil while it surely still is, an error wrapping
	// ErrLockLost once it may not be (a lease that could not be renewed
	// in time), and that error until Release.
	HoldShared(ctx context.Context) error
	// Release gives up the shared lock; a later HoldShared takes it again.
	Release() error
	// LockExclusive takes the lock exclusively, waiting (calling waiting
	// once when it starts to) while writers or another collector hold
	// it, until ctx is done.
	LockExclusive(ctx context.Context, waiting func()) (Lock, error)
}

// Lock is a lock LockExclusive took.
type Lock interface {
	// Held returns nil while the lock is surely held, and an error
	// wrapping ErrLockLost once it may not be: a collector checks it
	// before each deletion.
	Held() error
	// Close gives the lock up.
	Close() error
}

// LockWait is how a Locker waits before its next try: it calls *waiting,
// if not nil, and sets it to nil, so that its caller is told once that it
// waits; then it sleeps about delay (between half and all of it, so that
// two that backed off from each other do not meet again), or until ctx is
// done, and returns ctx's error.
func LockWait(ctx context.Context, waiting *func(), delay time.Duration) error {
	if *waiting != nil {
		(*waiting)()
		*waiting = nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(delay/2 + rand.N(delay/2+1)):
		return nil
	}
}

// ErrLockLost is the error of a lock whose holder can no longer be sure
// it holds it: a lease that could not be renewed in time, which others
// may take as expired.
var ErrLockLost = errors.New("lost the store's lock")

// UnchangedRemover is a Backend that can delete a file on the condition
// that it is still as a Stat described it: a collector's deletion then
// spares an object a writer touched after the collector looked.
type UnchangedRemover interface {
	// RemoveUnchanged deletes h unless its modification time is no
	// longer seen's (a Stat's of h), and reports whether it deleted it
	// (a file already gone counts as deleted). Where the server cannot
	// tell, it deletes h.
	RemoveUnchanged(ctx context.Context, h Handle, seen FileInfo) (bool, error)
}

// Sweeper is a Backend that can hold temporary files of writers that
// died: RemoveStale deletes those old enough to be surely dead, and
// returns how many.
type Sweeper interface {
	RemoveStale() int
}

// Store is a content-addressed store of artifacts over a Backend: an
// object's name is the SHA-256 of its bytes. It writes an object only
// when no intact one is there, which it does not look for in a folder
// its Backend made (see Newcomer), re-hashes on every read that serves bytes,
// and remembers for a while (see recheckAfter) the objects it wrote or
// found intact, so that a run reads each distinct artifact of the store
// at most once. A Store may be used from several goroutines at once.
type Store struct {
	b Backend

	// puts serialises Puts of digests that share a first byte, so that
	// two workers storing the same payload write it once.
	puts [256]sync.Mutex

	mu sync.Mutex
	// checked holds the objects this Store wrote, or found intact and
	// touched, with when (since start): a Put of one of them within
	// recheckAfter reads nothing (work once per distinct artifact, not
	// per reference). It holds at most maxChecked.
	checked map[Digest]time.Duration
	// forgot is set once checked has lost an object it held: until then
	// an object not in it is one this Store never wrote nor found.
	forgot bool
	// isNew is the Backend's knowledge of objects new to it (see
	// Newcomer), when this Store claimed it.
	isNew func(Handle) bool
	start time.Time
	// planned holds the objects Plan was asked about.
	planned map[Digest]bool
}

// New returns the Store of the objects of b.
func New(b Backend) *Store {
	s := &Store{b: b, checked: map[Digest]time.Duration{}, start: time.Now(), planned: map[Digest]bool{}}
	if n, ok := As[Newcomer](b); ok {
		s.isNew = n.Claim()
	}
	return s
}

// maxChecked bounds what a Store remembers of the objects it checked, some
// 1.5 MB: a run over millions of distinct artifacts does not grow with
// them. An object forgotten early is read and re-hashed once more.
const maxChecked = 1 << 15

// check remembers that object d is there, intact, as of now. The caller
// holds mu.
func (s *Store) check(d Digest) {
	if len(s.checked) >= maxChecked {
		now := time.Since(s.start)
		for k, at := range s.checked {
			if now-at >= recheckAfter {
				delete(s.checked, k)
			}
		}
		if len(s.checked) >= maxChecked {
			clear(s.checked)
		}
		s.forgot = true
	}
	s.checked[d] = time.Since(s.start)
}

// recent reports whether object d was checked within recheckAfter. The
// caller holds mu.
func (s *Store) recent(d Digest) bool {
	at, ok := s.checked[d]
	return ok && time.Since(s.start)-at < recheckAfter
}

// Backend returns the Backend the Store keeps its objects in.
func (s *Store) Backend() Backend { return s.b }

// Location names the store for messages.
func (s *Store) Location() string { return s.b.Location() }

// Path returns where a program outside this one finds object d: the
// placeholder's path.
func (s *Store) Path(d Digest) string { return s.b.Path(ObjectHandle(d)) }

// Name returns how messages name object d: its key below the store's
// Location, as the user spelled the Location.
func (s *Store) Name(d Digest) string {
	loc, key := s.Location(), Key(ObjectHandle(d))
	if strings.Contains(loc, "://") || strings.HasSuffix(loc, ":") {
		return strings.TrimSuffix(loc, "/") + "/" + key
	}
	return filepath.Join(loc, filepath.FromSlash(key))
}

// recheckAfter is how long an object this Store checked (or wrote) is
// taken to be there, intact, without reading it again: while this Store
// holds the store's lock no collector that locks deletes it, and one that
// does not keeps what is younger than its grace (at least 10 minutes),
// which a check, touching the object, renews.
const recheckAfter = time.Minute

// Put stores data and returns its Digest, once the object is durable.
// created is false when an intact object with these bytes was already
// there.
func (s *Store) Put(ctx context.Context, data []byte) (d Digest, created bool, err error) {
	d, created, err = s.PutSum(ctx, Sum(data), data)
	if err == nil {
		err = s.Flush(ctx, d)
	}
	return d, created, err
}

// PutSum is Put for a caller that has just computed d = Sum(data) itself,
// and saves hashing the bytes a second time; a d that is not the sum of
// data would store a corrupt artifact, so pass only a digest computed from
// these very bytes. Unlike Put, it returns before the object is durable:
// Flush makes many at once.
func (s *Store) PutSum(ctx context.Context, d Digest, data []byte) (_ Digest, created bool, err error) {
	created, err = s.put(ctx, d, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, false)
	return d, created, err
}

// PutStream is PutSum for an object too large to hold: write writes its
// bytes, which must hash to d (they are checked as they are written).
func (s *Store) PutStream(ctx context.Context, d Digest, write func(io.Writer) error) (_ Digest, created bool, err error) {
	created, err = s.put(ctx, d, write, true)
	return d, created, err
}

func (s *Store) put(ctx context.Context, d Digest, write func(io.Writer) error, check bool) (created bool, err error) {
	// Before the object is looked for: a collector must not delete it
	// between this Store's finding it and the transcript that refers to it
	// being in place.
	if l, ok := As[Locker](s.b); ok {
		if err := l.HoldShared(ctx); err != nil {
			return false, err
		}
	}
	s.puts[d[0]].Lock()
	defer s.puts[d[0]].Unlock()
	found, err := s.found(ctx, d)
	if found || err != nil {
		return false, err
	}
	h := ObjectHandle(d)
	if check {
		inner := write
		write = func(w io.Writer) error {
			sum := sha256.New()
			bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 256<<10)
			if err := inner(bw); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			if got := Digest(sum.Sum(nil)); got != d {
				return fmt.Errorf("%w: the bytes written hash to %s", ErrCorrupt, got)
			}
			return nil
		}
	}
	if err := s.b.Save(ctx, h, write); err != nil {
		return false, fmt.Errorf("store artifact %s: %w", s.b.Path(h), err)
	}
	s.mu.Lock()
	s.check(d)
	s.mu.Unlock()
	return true, nil
}

// found reports whether object d is already there, intact: written or
// checked by this Store lately, or read and re-hashed now, then touched
// (a collector's grace counts from now, and its name is made durable by
// the next Flush). A damaged object is removed and not found: the caller
// writes it again.
func (s *Store) found(ctx context.Context, d Digest) (bool, error) {
	h := ObjectHandle(d)
	s.mu.Lock()
	seen := s.recent(d)
	_, met := s.checked[d]
	forgot := s.forgot
	s.mu.Unlock()
	if seen {
		return true, nil
	}
	if !met && !forgot {
		// Never written nor found by this Store: in a folder its
		// Backend made, only another writer can have put it since, and
		// Save replaces that with the same bytes.
		if s.isNew != nil && s.isNew(h) {
			return false, nil
		}
	}
	err := s.verify(ctx, d)
	if err == nil {
		err = s.b.Touch(ctx, h)
		if errors.Is(err, ErrNotExist) {
			return false, nil // collected meanwhile by a collector that does not lock
		}
	}
	switch {
	case err == nil:
		s.mu.Lock()
		s.check(d)
		s.mu.Unlock()
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	case errors.Is(err, ErrNotFile):
		// Not a file (a directory, a link): nothing renames over it, so
		// it goes first.
		if err := s.b.Remove(ctx, h); err != nil {
			return false, fmt.Errorf("remove damaged artifact %s: %w", s.b.Path(h), err)
		}
		return false, nil
	case errors.Is(err, ErrCorrupt):
		// Damaged bytes are replaced by Save, in one step: removing them
		// first could remove the sound copy another writer has just put
		// in their place, and leave nothing if this one then fails.
		return false, nil
	default:
		return false, err
	}
}

// Plan is Put for a run that writes nothing (a dry run, stats): first is
// true the first time this Store is asked about d, and write when, then,
// a Put would write it because the store lacks an intact copy. Like Put,
// it reads an object at most once.
func (s *Store) Plan(ctx context.Context, d Digest) (first, write bool) {
	s.mu.Lock()
	first = !s.planned[d]
	s.planned[d] = true
	seen := s.recent(d)
	s.mu.Unlock()
	if !first || seen {
		return first, false
	}
	return true, s.verify(ctx, d) != nil
}

// Flush makes every object written or touched through this Store durable.
// It returns an error if any of must, stored or found through this Store,
// is not durable.
func (s *Store) Flush(ctx context.Context, must ...Digest) error {
	hs := make([]Handle, len(must))
	for i, d := range must {
		hs[i] = ObjectHandle(d)
	}
	err := s.b.Flush(ctx, hs...)
	if err != nil {
		// What was to be durable may not be there: look again next time.
		s.mu.Lock()
		for _, d := range must {
			delete(s.checked, d)
		}
		s.forgot = true
		s.mu.Unlock()
	}
	return err
}

// Discard drops the objects written since the last Flush that are not yet
// under their names: a run whose transcripts failed leaves no temporary
// files behind. They must be Put again.
func (s *Store) Discard() {
	s.b.Discard()
	s.mu.Lock()
	clear(s.checked)
	s.forgot = true
	s.mu.Unlock()
}

// RemoveStaleTemps deletes what writers that died left half-written in
// the store, where its Backend can tell (see Sweeper), and returns how
// many files it removed.
func (s *Store) RemoveStaleTemps() int {
	if sw, ok := As[Sweeper](s.b); ok {
		return sw.RemoveStale()
	}
	return 0
}

// load opens object d, mapping the Backend's errors to ErrNotFound and
// ErrCorrupt.
func (s *Store) load(ctx context.Context, d Digest, offset, length int64) (io.ReadCloser, error) {
	rc, err := s.b.Load(ctx, ObjectHandle(d), offset, length)
	return rc, s.objectError(d, err)
}

func (s *Store) objectError(d Digest, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotExist):
		return s.forgetOn(d, fmt.Errorf("%s: %w", d, ErrNotFound))
	case errors.Is(err, ErrNotFile):
		var nf *NotFileError
		if errors.As(err, &nf) {
			return s.forgetOn(d, &notFileCorrupt{nf})
		}
		return s.forgetOn(d, fmt.Errorf("%w: %w", ErrCorrupt, err))
	}
	return s.forgetOn(d, err)
}

// forgetOn returns err, and when it is not nil forgets that object d was
// checked: a read that finds it missing or damaged makes the next Put
// look again, and write it anew.
func (s *Store) forgetOn(d Digest, err error) error {
	if err != nil {
		s.forget(d)
	}
	return err
}

// forget drops what this Store knows of object d being there.
func (s *Store) forget(d Digest) {
	s.mu.Lock()
	if _, ok := s.checked[d]; ok {
		delete(s.checked, d)
		s.forgot = true
	}
	s.mu.Unlock()
}

// verify re-hashes object d.
func (s *Store) verify(ctx context.Context, d Digest) error {
	rc, err := s.load(ctx, d, 0, 0)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return s.forgetOn(d, fmt.Errorf("read artifact %s: %w", s.Path(d), err))
	}
	if !bytes.Equal(h.Sum(nil), d[:]) {
		return s.forgetOn(d, fmt.Errorf("%s: %w: its bytes do not hash to its name", s.Path(d), ErrCorrupt))
	}
	return nil
}

// Verify re-hashes the object d and reports ErrNotFound or ErrCorrupt.
func (s *Store) Verify(ctx context.Context, d Digest) error { return s.verify(ctx, d) }

// Get returns the bytes of object d after checking that they hash to d.
func (s *Store) Get(ctx context.Context, d Digest) ([]byte, error) {
	rc, err := s.load(ctx, d, 0, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, s.forgetOn(d, fmt.Errorf("read artifact %s: %w", s.Path(d), err))
	}
	if Sum(data) != d {
		return nil, s.forgetOn(d, fmt.Errorf("%s: %w: its bytes do not hash to its name", s.Path(d), ErrCorrupt))
	}
	return data, nil
}

// Open returns a reader of object d that checks the bytes against d as
// they are read: at the end of a corrupt object Read returns an error
// wrapping ErrCorrupt instead of io.EOF. A caller that must not act on
// wrong bytes reads to the end before it uses them.
func (s *Store) Open(ctx context.Context, d Digest) (io.ReadCloser, error) {
	rc, err := s.load(ctx, d, 0, 0)
	if err != nil {
		return nil, err
	}
	return &verifyingReader{s: s, rc: rc, want: d, h: sha256.New()}, nil
}

// OpenRange returns a reader of length bytes of object d from offset (to
// its end when length is 0). A part cannot be checked against the name
// alone: the caller that serves it to a user verifies the object first
// (Verify), as cat does.
func (s *Store) OpenRange(ctx context.Context, d Digest, offset, length int64) (io.ReadCloser, error) {
	return s.load(ctx, d, offset, length)
}

type verifyingReader struct {
	s    *Store
	rc   io.ReadCloser
	want Digest
	h    hash.Hash
}

func (r *verifyingReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.h.Write(p[:n])
	if err == io.EOF && !bytes.Equal(r.h.Sum(nil), r.want[:]) {
		return n, r.s.forgetOn(r.want, fmt.Errorf("%s: %w: its bytes do not hash to its name", r.s.Path(r.want), ErrCorrupt))
	}
	return n, err
}

func (r *verifyingReader) Close() error { return r.rc.Close() }

// Size returns the size of object d without reading it; a missing object
// gives ErrNotFound.
func (s *Store) Size(ctx context.Context, d Digest) (int64, error) {
	fi, err := s.Stat(ctx, d)
	return fi.Size, err
}

// Remove deletes object d; it is gone for good once Flush returns.
func (s *Store) Remove(ctx context.Context, d Digest) error {
	s.forget(d)
	return s.b.Remove(ctx, ObjectHandle(d))
}

// RemoveUnchanged deletes object d unless it was touched or written since
// seen, its Stat, where the Backend can tell (see UnchangedRemover), and
// reports whether it deleted it.
func (s *Store) RemoveUnchanged(ctx context.Context, d Digest, seen FileInfo) (bool, error) {
	r, ok := As[UnchangedRemover](s.b)
	if !ok {
		return true, s.Remove(ctx, d)
	}
	s.forget(d)
	return r.RemoveUnchanged(ctx, ObjectHandle(d), seen)
}

// Each calls fn for every object of the store, in no set order, and bad
// for what stands where objects are kept and cannot be one (see
// FileInfo.Bad), with its name relative to the store and why.
func (s *Store) Each(ctx context.Context, fn func(d Digest, fi FileInfo) error, bad func(name string, why error)) error {
	return s.b.List(ctx, Object, "", func(fi FileInfo) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := ParseDigest(fi.Name)
		switch {
		case fi.Bad != nil:
			bad(fi.Name, fi.Bad)
			return nil
		case err != nil:
			bad(fi.Name, err)
			return nil
		}
		return fn(d, fi)
	})
}

// Stat describes object d without reading it; a missing object gives
// ErrNotFound.
func (s *Store) Stat(ctx context.Context, d Digest) (FileInfo, error) {
	fi, err := s.b.Stat(ctx, ObjectHandle(d))
	return fi, s.objectError(d, err)
}

// AmbiguousError is returned by Resolve for a prefix shared by several
// artifacts.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("artifact id prefix %q is ambiguous: %d artifacts match", e.Prefix, len(e.Candidates))
}

// MinPrefix is the shortest id prefix Resolve accepts.
const MinPrefix = 4

// Resolve finds the artifact whose id is id or starts with id.
func (s *Store) Resolve(ctx context.Context, id string) (Digest, error) {
	const full = 2 * len(Digest{})
	if len(id) == full {
		d, err := ParseDigest(id)
		if err != nil {
			return d, err
		}
		if _, err := s.b.Stat(ctx, ObjectHandle(d)); err != nil && !errors.Is(err, ErrNotFile) {
			if errors.Is(err, ErrNotExist) {
				return d, fmt.Errorf("%s: %w in %s", id, ErrNotFound, s.Location())
			}
			return d, err
		}
		return d, nil
	}
	if len(id) < MinPrefix || len(id) > full {
		return Digest{}, fmt.Errorf("artifact id %q: want a full SHA-256 or a prefix of at least %d hex characters", id, MinPrefix)
	}
	if _, err := ParseDigest(id + strings.Repeat("0", full-len(id))); err != nil {
		return Digest{}, fmt.Errorf("artifact id %q: want lower-case hex", id)
	}
	var matches, damaged []string
	err := s.b.List(ctx, Object, id, func(fi FileInfo) error {
		name := path.Base(filepath.ToSlash(fi.Name))
		if _, err := ParseDigest(name); err != nil || !strings.HasPrefix(name, id) {
			return nil
		}
		if fi.Bad != nil {
			damaged = append(damaged, name)
		} else {
			matches = append(matches, name)
		}
		return nil
	})
	if err != nil {
		return Digest{}, err
	}
	if len(matches) == 0 && len(damaged) == 1 {
		// The one object named so is not a file: reading it says so,
		// where "not found" would mislead.
		matches = damaged
	}
	sort.Strings(matches)
	switch len(matches) {
	case 0:
		return Digest{}, fmt.Errorf("%s: %w in %s", id, ErrNotFound, s.Location())
	case 1:
		return ParseDigest(matches[0])
	}
	return Digest{}, &AmbiguousError{Prefix: id, Candidates: matches}
}

// Opener returns Open bound to ctx, for code that opens artifacts as it
// restores a transcript.
func (s *Store) Opener(ctx context.Context) func(Digest) (io.ReadCloser, error) {
	return func(d Digest) (io.ReadCloser, error) { return s.Open(ctx, d) }
}

// notFileCorrupt is the error of an object that is not a file: corrupt,
// as a damaged object is, and not a file, so that Put removes it before
// it writes the object anew.
type notFileCorrupt struct{ nf *NotFileError }

func (e *notFileCorrupt) Error() string {
	return e.nf.Path + ": " + ErrCorrupt.Error() + ": it " + e.nf.Err.Error()
}

// Unwrap returns ErrCorrupt, ErrNotFile and what the object is instead.
func (e *notFileCorrupt) Unwrap() []error { return []error{ErrCorrupt, ErrNotFile, e.nf.Err} }
