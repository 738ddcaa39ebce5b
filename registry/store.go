package registry

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"golang.org/x/sys/unix"
)

// Errors reported by Get and Open.
var (
	ErrNotFound = errors.New("artifact not found")
	ErrCorrupt  = errors.New("artifact corrupt")
)

const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// ObjectsDir is the directory of the objects inside a store.
const ObjectsDir = "objects"

// RegistryFile is the name of the single-file registry of versions before
// segments (see SegmentsDir): still read, never appended to.
const RegistryFile = "registry.jsonl"

// ObjectPath returns the path of an object relative to the store root.
func ObjectPath(d Digest) string {
	hex := d.String()
	return filepath.Join(ObjectsDir, hex[:2], hex)
}

// Store is an artifact store rooted at a directory.
type Store struct {
	dir string
	// abs is dir made absolute, for the paths of objects: an agent opens
	// a placeholder's path from its own working directory.
	abs string

	mu    sync.Mutex
	dirty map[string]bool // directories with entries not yet fsynced
	made  map[string]bool // directories known to exist
	// durable holds the objects whose directory entries this Store has
	// made durable, as true, and the others it has stored or found, as
	// false; pending those it will have made durable once the dirty
	// directories are.
	durable map[Digest]bool
	pending []Digest
	// unsynced holds the objects written but not yet fsynced and renamed.
	unsynced map[Digest]*safefile.File
	// checked holds the objects this Store wrote (once renamed into
	// place), or found intact and freshened, with when: a Put of one of them within recheckAfter
	// reads nothing (work once per distinct artifact, not per reference).
	checked  map[Digest]time.Time
	commitMu sync.Mutex // held by commitUnsynced
	syncMu   sync.Mutex // held by Sync, so that one waits for another's to end
	// noSyncFS is set once syncfs is known not to stand in for fsyncs on
	// the store's file system (see syncFS), or once a directory of the
	// store is on another file system than its root, dev.
	noSyncFS atomic.Bool
	dev      uint64

	// puts serialises Puts of digests that share a first byte, so that
	// two workers storing the same payload write it once.
	puts [256]sync.Mutex

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
	// segDirSynced is set once this Store has fsynced the store's
	// directory after creating a segment: the segments directory's entry
	// is durable.
	segDirSynced bool

	// lockMu guards shared, the store's lock file held shared from the
	// first write until Release (see holdShared).
	lockMu sync.Mutex
	shared *os.File
}

// Open returns the store rooted at dir. Nothing is created until the first
// write.
func Open(dir string) *Store {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir // no working directory: dir is as good as it gets
	}
	return &Store{dir: dir, abs: abs, dirty: map[string]bool{}, made: map[string]bool{}, durable: map[Digest]bool{}, unsynced: map[Digest]*safefile.File{},
		checked: map[Digest]time.Time{}}
}

// Dir returns the store's root directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the absolute file path of the object d.
func (s *Store) Path(d Digest) string { return filepath.Join(s.abs, ObjectPath(d)) }

// Put stores data and returns its Digest. created is false when an intact
// object with these bytes was already there. The object is durable once
// Sync returns. Like every write, the first takes the store's lock shared
// until Release (see the package doc, # Locking).
func (s *Store) Put(data []byte) (d Digest, created bool, err error) {
	d, created, err = s.PutSum(Sum(data), data)
	if err == nil {
		err = s.committed(d)
	}
	return d, created, err
}

// PutSum is Put for a caller that has just computed d = Sum(data) itself,
// and saves hashing the bytes a second time; a d that is not the sum of
// data would store a corrupt artifact, so pass only a digest computed from
// these very bytes. Unlike Put, it leaves a new object's fsync and rename
// to the next Sync (or to a read of the object through this Store), which
// fsyncs many objects at once: until then the object is not under its
// name for other readers.
func (s *Store) PutSum(d Digest, data []byte) (_ Digest, created bool, err error) {
	created, err = s.put(d, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, false)
	return d, created, err
}

// PutStream is PutSum for an object too large to hold: write writes its
// bytes, which must hash to d, into the object's temporary file. Like
// PutSum it leaves the fsync and rename to Sync.
func (s *Store) PutStream(d Digest, write func(io.Writer) error) (_ Digest, created bool, err error) {
	created, err = s.put(d, write, true)
	return d, created, err
}

// put writes object d, unless it is there, with write into its temporary
// file, checking with check that the bytes hash to d, and leaves it for
// Sync to commit (see commitUnsynced).
func (s *Store) put(d Digest, write func(io.Writer) error, check bool) (created bool, err error) {
	// Before the object is looked for: a collector must not delete it
	// between this Store's finding it and the transcript that refers to it
	// being in place.
	if err := s.holdShared(); err != nil {
		return false, err
	}
	path := s.Path(d)
	s.puts[d[0]].Lock()
	defer s.puts[d[0]].Unlock()
	s.mu.Lock()
	if _, ok := s.durable[d]; !ok {
		s.durable[d] = false
	}
	s.mu.Unlock()
	// The directories first: once made (or found, and checked not to be
	// links), openObject need not check them again for each object.
	if err := s.mkdirs(filepath.Dir(path)); err != nil {
		return false, err
	}
	if found, err := s.found(d, path); found || err != nil {
		return false, err
	}
	f, err := safefile.CreateNew(path, filePerm)
	if err != nil {
		return false, fmt.Errorf("store artifact %s: %w", path, err)
	}
	var w io.Writer = f
	var h hash.Hash
	var bw *bufio.Writer
	if check {
		h = sha256.New()
		bw = bufio.NewWriterSize(io.MultiWriter(f, h), 256<<10)
		w = bw
	}
	err = write(w)
	if err == nil && bw != nil {
		err = bw.Flush()
	}
	if err == nil && check {
		if got := Digest(h.Sum(nil)); got != d {
			err = fmt.Errorf("%w: the bytes written hash to %s", ErrCorrupt, got)
		}
	}
	if err != nil {
		f.Abort()
		return false, fmt.Errorf("store artifact %s: %w", path, err)
	}
	s.mu.Lock()
	s.unsynced[d] = f
	flush := len(s.unsynced) >= maxUnsynced()
	s.mu.Unlock()
	if flush {
		if err := s.commitUnsynced(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// found reports whether object d is already there: written by this Store
// and waiting for Sync, or intact under its name. An object found intact,
// perhaps written by a run that died before syncing its directories, has
// them synced too before anything refers to it, unless this Store did
// already. A corrupt object is not found: the caller writes it again. An
// object found is freshened (see freshen) before any record or transcript
// names it; one that vanishes before it is freshened is not found.
func (s *Store) found(d Digest, path string) (bool, error) {
	s.mu.Lock()
	_, written := s.unsynced[d]
	at, seen := s.checked[d]
	s.mu.Unlock()
	if written || seen && time.Since(at) < recheckAfter {
		return true, nil
	}
	err := s.verify(path, d)
	if err == nil {
		err = freshen(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // collected meanwhile by a collector that does not lock
		}
	}
	switch {
	case err == nil:
		s.mu.Lock()
		s.checked[d] = time.Now()
		if !s.durable[d] {
			s.dirty[filepath.Dir(path)] = true
			s.dirty[filepath.Join(s.dir, ObjectsDir)] = true
			s.dirty[s.dir] = true
			s.pending = append(s.pending, d)
		}
		s.mu.Unlock()
		return true, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
		return false, nil
	default:
		return false, err
	}
}

// recheckAfter is how long an object this Store checked (or wrote) is
// taken to be there, intact, without reading it again: while this Store
// holds the store's lock no collector that locks deletes it, and one that
// does not keeps what is younger than its grace (at least 10 minutes),
// which a check, freshening the object, renews.
const recheckAfter = time.Minute

// maxUnsynced bounds the objects written but not yet committed, each of
// which holds an open file: a batch as large as the limit on open files
// allows, shared by one Store per core, up to 1024 (a syncfs each time the
// bound is met; at 1024 that is about once per transcript of the bench
// corpus), and at least 16.
var maxUnsynced = sync.OnceValue(func() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 16
	}
	return int(max(16, min(1024, uint64(lim.Cur)/uint64(8*runtime.GOMAXPROCS(0)))))
})

// syncWorkers is how many fsyncs commitUnsynced has in flight: the file
// system commits concurrent fsyncs together, where one after the other
// each waits for a commit of its own.
const syncWorkers = 16

// commitUnsynced makes the objects written since the last call durable,
// all at once (one syncfs, or fsyncs in parallel), then renames each under
// its name. Only then are their names recorded as needing the directory
// fsync of Sync, so that no object stands under its name before its bytes
// are durable, and no directory is fsynced before the renames it must make
// durable.
func (s *Store) commitUnsynced() error {
	// The objects stay in unsynced until they are renamed (or dropped), so
	// that a PutSum meanwhile finds them; commitMu keeps two calls from
	// committing the same file.
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	files := make(map[Digest]*safefile.File, len(s.unsynced))
	digests := make([]Digest, 0, len(s.unsynced))
	for d, f := range s.unsynced {
		files[d] = f
		digests = append(digests, d)
	}
	s.mu.Unlock()
	if len(files) == 0 {
		return nil
	}
	sort.Slice(digests, func(i, j int) bool { return bytes.Compare(digests[i][:], digests[j][:]) < 0 })
	var errs []error
	if len(digests) > 1 && s.syncFS() == nil {
		errs = make([]error, len(digests))
		for i, d := range digests {
			errs[i] = files[d].Synced()
		}
	} else {
		errs = inParallel(len(digests), func(i int) error { return files[digests[i]].Sync() })
	}
	var first error
	for i, d := range digests {
		f, path := files[d], s.Path(d)
		err := errs[i]
		if err == nil {
			err = f.CommitNoDirSync()
		}
		f.Abort()
		s.mu.Lock()
		delete(s.unsynced, d)
		if err == nil {
			s.dirty[filepath.Dir(path)] = true
			s.pending = append(s.pending, d)
			s.checked[d] = time.Now()
		}
		s.mu.Unlock()
		if err != nil && first == nil {
			first = fmt.Errorf("store artifact %s: %w", path, err)
		}
	}
	return first
}

// Discard removes the objects stored with PutSum since the last Sync: a
// run whose transcripts failed leaves no temporary files behind. Objects
// that a later Sync was to commit are gone; their PutSum must be repeated.
func (s *Store) Discard() {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.mu.Lock()
	files := s.unsynced
	s.unsynced = map[Digest]*safefile.File{}
	s.mu.Unlock()
	for _, f := range files {
		f.Abort()
	}
}

// committed makes sure that object d, if this Store has written it, stands
// under its name, for readers.
func (s *Store) committed(d Digest) error {
	s.mu.Lock()
	_, ok := s.unsynced[d]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s.commitUnsynced()
}

// mkdirs creates the store's directories down to shard and remembers
// which exist. The parent of each directory it meets for the first time is
// to be fsynced, also when the directory was there already: a run killed
// before its fsync may have made it.
func (s *Store) mkdirs(shard string) error {
	for _, dir := range []string{s.dir, filepath.Join(s.dir, ObjectsDir), shard} {
		s.mu.Lock()
		made := s.made[dir]
		s.mu.Unlock()
		if made {
			continue
		}
		err := safefile.Mkdir(dir, dirPerm)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create store directory: %w", err)
		}
		if dir != s.dir {
			if err := notLinked(dir); err != nil {
				return err
			}
		}
		var st unix.Stat_t
		statErr := unix.Lstat(dir, &st)
		if dir == s.dir {
			statErr = unix.Stat(dir, &st) // the root may be a link
		}
		s.mu.Lock()
		s.dirty[filepath.Dir(dir)] = true
		s.made[dir] = true
		// A syncfs of the store's file system covers an object only if
		// its directory is on it (not on a file system mounted below).
		switch {
		case statErr != nil:
			s.noSyncFS.Store(true)
		case dir == s.dir:
			s.dev = uint64(st.Dev)
		case uint64(st.Dev) != s.dev:
			s.noSyncFS.Store(true)
		}
		s.mu.Unlock()
	}
	return nil
}

// RemoveStaleTemps deletes the temporary files that writers killed before
// they renamed them left in the store's directory and its shards, when they
// are older than safefile.StaleAge (a younger one may belong to a live
// writer in another process), and returns how many it removed. It is best
// effort: a shard it cannot read is left for the next run.
func (s *Store) RemoveStaleTemps() int {
	n, _ := safefile.RemoveStale(s.dir)
	if _, err := s.readDir(SegmentsDir); err == nil { // not through a link
		m, _ := safefile.RemoveStale(filepath.Join(s.dir, SegmentsDir))
		n += m
	}
	root := filepath.Join(s.dir, ObjectsDir)
	shards, _ := s.readDir(ObjectsDir)
	for _, sh := range shards {
		// The entry's own type: a link to a directory is not a directory.
		if sh.IsDir() && isShardName(sh.Name()) {
			m, _ := safefile.RemoveStale(filepath.Join(root, sh.Name()))
			n += m
		}
	}
	return n
}

// Sync makes every object written since the last Sync durable: their
// bytes (see commitUnsynced), then the directories that gained entries,
// with one syncfs where that stands in for fsyncs (see syncFS), else by
// fsyncing each.
func (s *Store) Sync() error {
	// A Sync that finds nothing left to do returns only once the Sync
	// that took it has made it durable.
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if err := s.commitUnsynced(); err != nil {
		return err
	}
	s.mu.Lock()
	dirs := make([]string, 0, len(s.dirty))
	for d := range s.dirty {
		dirs = append(dirs, d)
	}
	objs := s.pending
	s.dirty, s.pending = map[string]bool{}, nil
	s.mu.Unlock()
	if len(dirs) > 1 && s.syncFS() == nil {
		// One syncfs makes every entry durable at once.
		dirs = nil
	}
	// Deepest first, so that a shard's entries are durable before the
	// shard's own entry in objects/; the directories of one depth are
	// fsynced all at once, which the file system commits together.
	sortDeepestFirst(dirs)
	for from := 0; from < len(dirs); {
		to := from + 1
		for to < len(dirs) && depth(dirs[to]) == depth(dirs[from]) {
			to++
		}
		level := dirs[from:to]
		errs := inParallel(len(level), func(i int) error { return safefile.SyncDir(level[i]) })
		if err := errors.Join(errs...); err != nil {
			// Still not durable: the next Sync tries them again.
			s.mu.Lock()
			for _, d := range dirs[from:] {
				s.dirty[d] = true
			}
			s.pending = append(s.pending, objs...)
			s.mu.Unlock()
			return firstError(errs)
		}
		from = to
	}
	s.mu.Lock()
	for _, d := range objs {
		s.durable[d] = true
	}
	s.mu.Unlock()
	return nil
}

// syncFS makes every file and directory of the store's file system
// durable with one syncfs, where that stands in for fsyncs (see
// safefile.OpenFS): for many objects, one flush of the disk's cache
// instead of one or two per object. An error means that the callers must
// fsync what they wrote themselves: syncfs is not available here, or some
// write-back on the file system failed.
func (s *Store) syncFS() error {
	if s.noSyncFS.Load() {
		return errNoSyncFS
	}
	fs, err := safefile.OpenFS(s.dir)
	if err != nil {
		return err
	}
	if fs == nil {
		s.noSyncFS.Store(true)
		return errNoSyncFS
	}
	err = fs.Sync()
	_ = fs.Close()
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// Not allowed here (a seccomp filter, say): no need to try again.
		s.noSyncFS.Store(true)
	}
	return err
}

var errNoSyncFS = errors.New("syncfs does not stand in for fsync here")

// checkDurable returns an error for the first record whose object this
// Store has stored or found but not made durable: one that another
// transcript wrote and this one found waiting for its commit, which then
// failed. Call it after Sync.
func (s *Store) checkDurable(recs []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		d, err := ParseDigest(r.Hash)
		if err != nil {
			continue
		}
		if durable, ok := s.durable[d]; ok && !durable {
			return fmt.Errorf("artifact %s was not made durable: storing it failed", d)
		}
	}
	return nil
}

func sortDeepestFirst(dirs []string) {
	sort.SliceStable(dirs, func(i, j int) bool { return depth(dirs[i]) > depth(dirs[j]) })
}

// depth is the number of names in a clean path.
func depth(dir string) int { return strings.Count(filepath.Clean(dir), string(filepath.Separator)) }

// inParallel calls fn(0) to fn(n-1) with up to syncWorkers calls at once
// and returns their errors by index.
func inParallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(syncWorkers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// verify re-hashes the object at path.
func (s *Store) verify(path string, d Digest) error {
	f, err := s.openObject(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", d, ErrNotFound)
		}
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read artifact %s: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), d[:]) {
		return fmt.Errorf("%s: %w: its bytes do not hash to its name", path, ErrCorrupt)
	}
	return nil
}

// Verify re-hashes the object d and reports ErrNotFound or ErrCorrupt.
func (s *Store) Verify(d Digest) error {
	if err := s.committed(d); err != nil {
		return err
	}
	return s.forgetOn(d, s.verify(s.Path(d), d))
}

// forgetOn returns err, and when it is not nil forgets that object d was
// checked: a read that finds it missing or damaged makes the next Put
// look again, and write it anew.
func (s *Store) forgetOn(d Digest, err error) error {
	if err != nil {
		s.mu.Lock()
		delete(s.checked, d)
		s.mu.Unlock()
	}
	return err
}

// Get returns the bytes of object d after checking that they hash to d.
func (s *Store) Get(d Digest) ([]byte, error) {
	if err := s.committed(d); err != nil {
		return nil, err
	}
	path := s.Path(d)
	data, err := s.readObject(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%s: %w", d, ErrNotFound)
		}
		return nil, s.forgetOn(d, err)
	}
	if Sum(data) != d {
		return nil, s.forgetOn(d, fmt.Errorf("%s: %w: its bytes do not hash to its name", path, ErrCorrupt))
	}
	return data, nil
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

// Resolve finds the artifact whose id is s or starts with s.
func (s *Store) Resolve(id string) (Digest, error) {
	if len(id) == 2*len(Digest{}) {
		d, err := ParseDigest(id)
		if err != nil {
			return d, err
		}
		f, err := s.openObject(s.Path(d))
		if errors.Is(err, fs.ErrNotExist) {
			return d, fmt.Errorf("%s: %w in %s", id, ErrNotFound, s.dir)
		}
		if err != nil {
			return d, err
		}
		f.Close()
		return d, nil
	}
	if len(id) < MinPrefix || len(id) > 2*len(Digest{}) {
		return Digest{}, fmt.Errorf("artifact id %q: want a full SHA-256 or a prefix of at least %d hex characters", id, MinPrefix)
	}
	if _, err := ParseDigest(id + strings.Repeat("0", 2*len(Digest{})-len(id))); err != nil {
		return Digest{}, fmt.Errorf("artifact id %q: want lower-case hex", id)
	}
	entries, err := s.readDir(ObjectsDir, id[:2])
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Digest{}, err
	}
	var matches, damaged []string
	for _, e := range entries {
		if _, err := ParseDigest(e.Name()); err != nil || !strings.HasPrefix(e.Name(), id) {
			continue
		}
		if e.Type().IsRegular() {
			matches = append(matches, e.Name())
		} else {
			damaged = append(damaged, e.Name())
		}
	}
	if len(matches) == 0 && len(damaged) == 1 {
		// The one object named so is not a file: opening it says so,
		// where "not found" would mislead.
		matches = damaged
	}
	switch len(matches) {
	case 0:
		return Digest{}, fmt.Errorf("%s: %w in %s", id, ErrNotFound, s.dir)
	case 1:
		return ParseDigest(matches[0])
	}
	return Digest{}, &AmbiguousError{Prefix: id, Candidates: matches}
}

// Size returns the size of object d's file without reading it, refusing
// links as Open does; a missing object gives ErrNotFound.
func (s *Store) Size(d Digest) (int64, error) {
	if err := s.committed(d); err != nil {
		return 0, err
	}
	f, err := s.openObject(s.Path(d))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", d, ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Open returns a reader of object d that checks the bytes against d as
// they are read: at the end of a corrupt object Read returns an error
// wrapping ErrCorrupt instead of io.EOF. A caller that must not act on
// wrong bytes reads to the end before it uses them.
func (s *Store) Open(d Digest) (io.ReadCloser, error) {
	if err := s.committed(d); err != nil {
		return nil, err
	}
	path := s.Path(d)
	f, err := s.openObject(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%s: %w", d, ErrNotFound)
		}
		return nil, s.forgetOn(d, err)
	}
	return &verifyingReader{s: s, f: f, path: path, want: d, h: sha256.New()}, nil
}

type verifyingReader struct {
	s    *Store
	f    *os.File
	path string
	want Digest
	h    hash.Hash
}

func (r *verifyingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	if err == io.EOF && !bytes.Equal(r.h.Sum(nil), r.want[:]) {
		return n, r.s.forgetOn(r.want, fmt.Errorf("%s: %w: its bytes do not hash to its name", r.path, ErrCorrupt))
	}
	return n, err
}

func (r *verifyingReader) Close() error { return r.f.Close() }

// readDir lists the directory at the path made of names below the store's
// root, opening each with O_NOFOLLOW from the one before: a symbolic link
// on the way is refused with ErrLinked, never listed through, even if it
// appears while the store is read.
func (s *Store) readDir(names ...string) ([]fs.DirEntry, error) {
	fd, err := unix.Open(s.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: s.dir, Err: err}
	}
	path := s.dir
	for _, name := range names {
		path = filepath.Join(path, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) && notLinked(path) != nil {
			return nil, fmt.Errorf("%s %w", path, ErrLinked)
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		fd = next
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, err
}

// ErrLinked is the error of a store entry that is a symbolic link: the
// store never follows one below its root, so that a planted link cannot
// make it read or write outside the store.
var ErrLinked = errors.New("is a symbolic link, which the store does not follow")

// notLinked refuses a path that is a symbolic link.
func notLinked(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, ErrLinked)
	}
	return nil
}

// openObject opens an object file without following a symbolic link at
// the object or at its directories below the store's root. A linked
// object reads as corrupt, so that Put replaces the link itself.
func (s *Store) openObject(path string) (*os.File, error) {
	shard := filepath.Dir(path)
	s.mu.Lock()
	checked := s.made[shard] // by mkdirs, with its parent
	s.mu.Unlock()
	for _, dir := range []string{filepath.Dir(shard), shard} {
		if checked {
			break
		}
		if err := notLinked(dir); err != nil {
			return nil, err
		}
	}
	// O_NONBLOCK: an object that is a named pipe would block the open
	// until something wrote to it; reads of a regular file ignore it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: %w: it %w", path, ErrCorrupt, ErrLinked)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s: %w: it is a %s, not a file", path, ErrCorrupt, kind(fi.Mode()))
		}
		return nil, err
	}
	return f, nil
}

// kind names what a file of mode m is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// readObject reads a whole object file as openObject opens it.
func (s *Store) readObject(path string) ([]byte, error) {
	f, err := s.openObject(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
