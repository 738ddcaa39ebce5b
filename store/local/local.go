// Package local is the Backend of a store kept in a local folder:
//
//	<dir>/objects/<hh>/<64 hex>      objects, <hh> the first two hex characters
//	<dir>/registry/<writer>.jsonl    registry segments, appended to in place
//	<dir>/registry.jsonl             the single-file registry of earlier versions
//	<dir>/lock                       held shared by writers, exclusively by gc
//
// # Guarantees
//
// A file is written to a temporary file beside its final name (a hidden
// name that readers skip), then fsynced and renamed; Flush fsyncs the
// directories that gained or lost entries. Saves are batched: a Save
// returns once its bytes are written, and a batch of them is made durable
// at once (one syncfs where that stands in for fsyncs, else fsyncs in
// parallel) when the batch is full, when Flush is called, or when one of
// them is read. No file stands under its name before its bytes are
// durable. A file whose folder's fsync failed is never reported durable
// by the Local that wrote or touched it: a later fsync that succeeds need
// not have written the entry. Files are 0600, directories 0700.
//
// A Local has every optional interface of package store: a lock
// (flock(2) on its lock file), appending in place (one write(2) an
// append, fsync on Sync), reading in place (an open descriptor, which
// keeps a removed file readable), and each file's own flock lock.
//
// Nothing below the folder is followed through a symbolic link: a link
// where a directory or an object belongs is refused (store.ErrLinked), an object
// that is a link or another special file is reported as store.ErrNotFile,
// so that a planted link cannot make the store read or write outside it.
// Opening an object never blocks (a named pipe is refused, not waited on).
//
// A Local may be used from several goroutines at once; several processes
// may share the folder.
package local

import (
	"context"
	"errors"
	"fmt"
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

	"golang.org/x/sys/unix"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
)

const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// Local is the Backend of a store in a local folder.
type Local struct {
	dir string
	// abs is dir made absolute, for Path: an agent opens a placeholder's
	// path from its own working directory.
	abs string

	mu    sync.Mutex
	dirty map[string]bool // directories with entries not yet fsynced
	made  map[string]bool // directories known to exist
	// fresh holds the folders this Local made (see Claim).
	fresh   map[string]bool
	claimed atomic.Bool
	// waiting holds the files saved or touched whose names this Local
	// has not made durable yet; pending those it will have made durable
	// once the dirty directories are. A file made durable is forgotten:
	// what a run remembers does not grow with the objects it wrote.
	waiting map[store.Handle]bool
	pending []store.Handle
	// doubted holds the files whose names a failed directory fsync was
	// to make durable: they stay waiting for the rest of the run (see
	// flush).
	doubted map[store.Handle]bool
	// unsynced holds the files written but not yet fsynced and renamed.
	unsynced map[store.Handle]*safefile.File
	commitMu sync.Mutex // held by commitUnsynced
	syncMu   sync.Mutex // held by Flush, so that one waits for another's to end
	// noSyncFS is set once syncfs is known not to stand in for fsyncs on
	// the store's file system (see syncFS), or once a directory of the
	// store is on another file system than its root, dev.
	noSyncFS atomic.Bool
	dev      uint64

	// lockMu guards shared, the store's lock file held shared from the
	// first write until Release (see HoldShared).
	lockMu sync.Mutex
	shared *os.File
}

var (
	_ store.Backend    = (*Local)(nil)
	_ store.Locker     = (*Local)(nil)
	_ store.Sweeper    = (*Local)(nil)
	_ store.Appender   = (*Local)(nil)
	_ store.Opener     = (*Local)(nil)
	_ store.FileLocker = (*Local)(nil)
	_ store.Newcomer   = (*Local)(nil)
)

// New returns the Backend of the store in the folder dir. Nothing is
// created until the first write.
func New(dir string) *Local {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir // no working directory: dir is as good as it gets
	}
	return &Local{dir: dir, abs: abs, dirty: map[string]bool{}, made: map[string]bool{}, fresh: map[string]bool{},
		waiting: map[store.Handle]bool{}, doubted: map[store.Handle]bool{}, unsynced: map[store.Handle]*safefile.File{}}
}

// Open is New as a store.OpenFunc, for callers that open local stores
// only (tests).
func Open(dir string) (store.Backend, error) { return New(dir), nil }

// Dir returns the store's folder, as given to New.
func (l *Local) Dir() string { return l.dir }

// Location returns the store's folder.
func (l *Local) Location() string { return l.dir }

// rel returns the path of h relative to the store's folder.
func rel(h store.Handle) string { return filepath.FromSlash(store.Key(h)) }

// name returns the path of h below the store's folder as given.
func (l *Local) name(h store.Handle) string { return filepath.Join(l.dir, rel(h)) }

// Path returns the absolute path of h.
func (l *Local) Path(h store.Handle) string { return filepath.Join(l.abs, rel(h)) }

// Save writes h to a temporary file in its folder; the next commit of the
// batch (see commitUnsynced) fsyncs and renames it.
func (l *Local) Save(_ context.Context, h store.Handle, write func(io.Writer) error) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	path := l.name(h)
	l.mu.Lock()
	l.waiting[h] = true
	l.mu.Unlock()
	var f *safefile.File
	err := l.inFolders(path, func() (err error) {
		f, err = safefile.CreateNew(path, filePerm)
		return err
	})
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	l.mu.Lock()
	if old := l.unsynced[h]; old != nil {
		old.Abort()
	}
	l.unsynced[h] = f
	flush := len(l.unsynced) >= maxUnsynced()
	l.mu.Unlock()
	if flush {
		return l.commitUnsynced()
	}
	return nil
}

// maxUnsynced bounds the files written but not yet committed, each of
// which holds an open file: a batch as large as the limit on open files
// allows, shared by one writer per core, up to 1024 (a syncfs each time the
// bound is met), and at least 16.
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

// commitUnsynced makes the files written since the last call durable, all
// at once (one syncfs, or fsyncs in parallel), then renames each under its
// name. Only then are their names recorded as needing the directory fsync
// of Flush, so that no file stands under its name before its bytes are
// durable, and no directory is fsynced before the renames it must make
// durable.
func (l *Local) commitUnsynced() error {
	// The files stay in unsynced until they are renamed (or dropped);
	// commitMu keeps two calls from committing the same file.
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.Lock()
	files := make(map[store.Handle]*safefile.File, len(l.unsynced))
	hs := make([]store.Handle, 0, len(l.unsynced))
	for h, f := range l.unsynced {
		files[h] = f
		hs = append(hs, h)
	}
	l.mu.Unlock()
	if len(files) == 0 {
		return nil
	}
	sort.Slice(hs, func(i, j int) bool {
		return hs[i].Kind < hs[j].Kind || hs[i].Kind == hs[j].Kind && hs[i].Name < hs[j].Name
	})
	var errs []error
	if len(hs) > 1 && l.syncFS() == nil {
		errs = make([]error, len(hs))
		for i, h := range hs {
			errs[i] = files[h].Synced()
		}
	} else {
		errs = inParallel(len(hs), func(i int) error { return files[hs[i]].Sync() })
	}
	var first error
	for i, h := range hs {
		f, path := files[h], l.name(h)
		err := errs[i]
		if err == nil {
			err = f.CommitNoDirSync()
		}
		f.Abort()
		l.mu.Lock()
		if l.unsynced[h] == f {
			delete(l.unsynced, h)
		}
		if err == nil {
			l.dirty[filepath.Dir(path)] = true
			l.pending = append(l.pending, h)
		}
		l.mu.Unlock()
		if err != nil && first == nil {
			first = fmt.Errorf("store %s: %w", path, err)
		}
	}
	return first
}

// Discard removes the files saved since the last commit.
func (l *Local) Discard() {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.Lock()
	files := l.unsynced
	l.unsynced = map[store.Handle]*safefile.File{}
	l.mu.Unlock()
	for _, f := range files {
		f.Abort()
	}
}

// committed makes sure that h, if this Local has saved it, stands under
// its name, for readers.
func (l *Local) committed(h store.Handle) error {
	l.mu.Lock()
	_, ok := l.unsynced[h]
	l.mu.Unlock()
	if !ok {
		return nil
	}
	return l.commitUnsynced()
}

// mkdirs creates the store's folders down to dir (the objects folder, a
// shard, the segments folder) and remembers which exist. The parent of
// each folder it meets for the first time is to be fsynced, also when the
// folder was there already: a run killed before its fsync may have made
// it.
func (l *Local) mkdirs(dir string) error {
	chain := []string{l.dir}
	if parent := filepath.Dir(dir); parent != l.dir && dir != l.dir {
		chain = append(chain, parent)
	}
	if dir != l.dir {
		chain = append(chain, dir)
	}
	for _, dir := range chain {
		l.mu.Lock()
		made := l.made[dir]
		l.mu.Unlock()
		if made {
			continue
		}
		err := safefile.Mkdir(dir, dirPerm)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create store directory: %w", err)
		}
		created := err == nil
		if dir != l.dir {
			if err := notLinked(dir); err != nil {
				return err
			}
		}
		var st unix.Stat_t
		statErr := unix.Lstat(dir, &st)
		if dir == l.dir {
			statErr = unix.Stat(dir, &st) // the root may be a link
		}
		l.mu.Lock()
		l.dirty[filepath.Dir(dir)] = true
		l.made[dir] = true
		l.fresh[dir] = created
		// A syncfs of the store's file system covers a file only if its
		// directory is on it (not on a file system mounted below).
		switch {
		case statErr != nil:
			l.noSyncFS.Store(true)
		case dir == l.dir:
			l.dev = uint64(st.Dev)
		case uint64(st.Dev) != l.dev:
			l.noSyncFS.Store(true)
		}
		l.mu.Unlock()
	}
	return nil
}

// inFolders calls create, which creates the file at path, once mkdirs has
// made its folders; if create finds a folder gone (removed since mkdirs
// saw it, by another program), they are made again, and create called
// once more.
func (l *Local) inFolders(path string, create func() error) error {
	dir := filepath.Dir(path)
	if err := l.mkdirs(dir); err != nil {
		return err
	}
	err := create()
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, store.ErrNotExist) {
		return err
	}
	l.mu.Lock()
	delete(l.made, dir)
	delete(l.made, filepath.Dir(dir))
	delete(l.fresh, dir)
	l.mu.Unlock()
	if err := l.mkdirs(dir); err != nil {
		return err
	}
	return create()
}

// Claim returns, to its first caller, a function that reports whether h
// is an object in a folder this Local made: none stood there then.
func (l *Local) Claim() func(store.Handle) bool {
	if l.claimed.Swap(true) {
		return nil
	}
	return func(h store.Handle) bool {
		if h.Kind != store.Object {
			return false
		}
		dir := filepath.Dir(l.name(h))
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.fresh[dir]
	}
}

// Writable checks, writing nothing, that this process can write the
// store's folders that exist: a run finds out before it writes anything.
func (l *Local) Writable() error {
	for _, p := range []string{l.dir, filepath.Join(l.dir, store.ObjectsDir), filepath.Join(l.dir, store.SegmentsDir)} {
		if err := safefile.Writable(p); err != nil {
			return err
		}
	}
	return nil
}

// RemoveStale deletes the temporary files that writers killed before they
// renamed them left in the store's folder, its segments folder and its
// shards, when they are older than safefile.StaleAge (a younger one may
// belong to a live writer in another process), and returns how many it
// removed. It is best effort: a folder it cannot read is left for the next
// run.
func (l *Local) RemoveStale() int {
	n, _ := safefile.RemoveStale(l.dir)
	if _, err := l.readDir(store.SegmentsDir); err == nil { // not through a link
		m, _ := safefile.RemoveStale(filepath.Join(l.dir, store.SegmentsDir))
		n += m
	}
	root := filepath.Join(l.dir, store.ObjectsDir)
	shards, _ := l.readDir(store.ObjectsDir)
	for _, sh := range shards {
		// The entry's own type: a link to a directory is not a directory.
		if sh.IsDir() && isShardName(sh.Name()) {
			m, _ := safefile.RemoveStale(filepath.Join(root, sh.Name()))
			n += m
		}
	}
	return n
}

// Flush makes every file saved, touched or removed so far durable: their
// bytes (see commitUnsynced), then the directories that gained or lost
// entries, with one syncfs where that stands in for fsyncs (see syncFS),
// else by fsyncing each.
func (l *Local) Flush(_ context.Context, must ...store.Handle) error {
	return l.durable(must...)
}

// durable is Flush.
func (l *Local) durable(must ...store.Handle) error {
	if err := l.flush(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range must {
		if l.doubted[h] {
			return fmt.Errorf("%s was not made durable: an fsync of its folder failed in this run", h)
		}
		if l.waiting[h] {
			return fmt.Errorf("%s was not made durable: storing it failed", h)
		}
	}
	return nil
}

func (l *Local) flush() error {
	// A Flush that finds nothing left to do returns only once the Flush
	// that took it has made it durable.
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if err := l.commitUnsynced(); err != nil {
		return err
	}
	l.mu.Lock()
	dirs := make([]string, 0, len(l.dirty))
	for d := range l.dirty {
		dirs = append(dirs, d)
	}
	hs := l.pending
	l.dirty, l.pending = map[string]bool{}, nil
	l.mu.Unlock()
	if len(dirs) > 1 && l.syncFS() == nil {
		// One syncfs makes every entry durable at once.
		dirs = nil
	}
	// Deepest first, so that a shard's entries are durable before the
	// shard's own entry in objects/; the directories of one depth are
	// fsynced all at once, which the file system commits together.
	sort.SliceStable(dirs, func(i, j int) bool { return depth(dirs[i]) > depth(dirs[j]) })
	for from := 0; from < len(dirs); {
		to := from + 1
		for to < len(dirs) && depth(dirs[to]) == depth(dirs[from]) {
			to++
		}
		level := dirs[from:to]
		errs := inParallel(len(level), func(i int) error { return safefile.SyncDir(level[i]) })
		if err := errors.Join(errs...); err != nil {
			// Not durable, and never taken for durable in this run:
			// a directory fsync that failed may have dropped the
			// entries it was to write, and one that succeeds after
			// it, through another descriptor, need not write them
			// again (the error is reported once). So the files
			// renamed stay waiting, and a Flush that must have one
			// fails, even once it is found or touched again; the
			// folders stay dirty, for the entries made since.
			l.mu.Lock()
			for _, d := range dirs[from:] {
				l.dirty[d] = true
			}
			for _, h := range hs {
				l.doubted[h] = true
			}
			l.mu.Unlock()
			return firstError(errs)
		}
		from = to
	}
	l.mu.Lock()
	for _, h := range hs {
		if !l.doubted[h] {
			delete(l.waiting, h)
		}
	}
	l.mu.Unlock()
	return nil
}

// syncFS makes every file and directory of the store's file system
// durable with one syncfs, where that stands in for fsyncs (see
// safefile.OpenFS): for many files, one flush of the disk's cache instead
// of one or two per file. An error means that the callers must fsync what
// they wrote themselves: syncfs is not available here, or some write-back
// on the file system failed.
func (l *Local) syncFS() error {
	if l.noSyncFS.Load() {
		return errNoSyncFS
	}
	fs, err := safefile.OpenFS(l.dir)
	if err != nil {
		return err
	}
	if fs == nil {
		l.noSyncFS.Store(true)
		return errNoSyncFS
	}
	err = fs.Sync()
	_ = fs.Close()
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		// Not allowed here (a seccomp filter, say): no need to try again.
		l.noSyncFS.Store(true)
	}
	return err
}

var errNoSyncFS = errors.New("syncfs does not stand in for fsync here")

// depth is the number of names in a path: 0 for the root and for ".".
func depth(dir string) int {
	dir = filepath.Clean(dir)
	if dir == "." || dir == string(filepath.Separator) {
		return 0
	}
	sep := string(filepath.Separator)
	return strings.Count(strings.Trim(dir, sep), sep) + 1
}

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

// firstError returns the first error of errs that is not nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Load opens h without following a link (see open) and returns a reader
// of the part asked for.
func (l *Local) Load(_ context.Context, h store.Handle, offset, length int64) (io.ReadCloser, error) {
	f, err := l.open(h)
	if err != nil {
		return nil, err
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	if length > 0 {
		return limitedFile{Reader: io.LimitReader(f, length), Closer: f}, nil
	}
	return f, nil
}

type limitedFile struct {
	io.Reader
	io.Closer
}

// Stat describes h, opening it as Load does.
func (l *Local) Stat(_ context.Context, h store.Handle) (store.FileInfo, error) {
	f, err := l.open(h)
	if err != nil {
		return store.FileInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return store.FileInfo{}, err
	}
	return info(h.Name, fi), nil
}

// info describes the file fi, named name.
func info(name string, fi os.FileInfo) store.FileInfo {
	return store.FileInfo{Name: name, Size: fi.Size(), ModTime: fi.ModTime(), ID: inode(fi)}
}

// inode returns the inode number of the file fi describes, or 0.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// open opens h's file to read (see openFile).
func (l *Local) open(h store.Handle) (*os.File, error) {
	if err := l.committed(h); err != nil {
		return nil, err
	}
	return l.openFile(h, os.O_RDONLY, 0)
}

// openFile opens h's file with flag (and perm, if it creates it) without
// following a symbolic link at the file or at its folders below the
// store's root. A link or another special file where a file belongs gives
// store.ErrNotFile; a file that is not there store.ErrNotExist, one there
// that O_EXCL refuses store.ErrExist.
func (l *Local) openFile(h store.Handle, flag int, perm os.FileMode) (*os.File, error) {
	if err := store.CheckHandle(h); err != nil {
		return nil, err
	}
	path := l.name(h)
	dir := filepath.Dir(path)
	l.mu.Lock()
	checked := l.made[dir] // by mkdirs, with its parent
	l.mu.Unlock()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if checked || dir == l.dir {
			break
		}
		if d == l.dir {
			continue // the root may be a link
		}
		if err := notLinked(d); err != nil {
			return nil, err
		}
	}
	if flag != os.O_RDONLY {
		if err := safefile.Intercept(safefile.Op{Kind: safefile.KindOpen, Path: path}); err != nil {
			return nil, err
		}
	}
	// O_NONBLOCK: a file that is a named pipe would block the open until
	// something wrote to it; reads of a regular file ignore it.
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, &store.NotFileError{Path: path, Err: store.ErrLinked}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, store.ErrNotExist)
	case errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("%s: %w", path, store.ErrExist)
	case err != nil:
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &store.NotFileError{Path: path, Err: fmt.Errorf("is a %s, not a file", safefile.Describe(fi.Mode()))}
		}
		return nil, err
	}
	return f, nil
}

// Remove deletes h; its folder is fsynced by the next Flush.
func (l *Local) Remove(_ context.Context, h store.Handle) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	path := l.name(h)
	l.mu.Lock()
	if f := l.unsynced[h]; f != nil {
		f.Abort()
		delete(l.unsynced, h)
	}
	delete(l.waiting, h)
	l.mu.Unlock()
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.dirty[filepath.Dir(path)] = true
	l.mu.Unlock()
	return nil
}

// Touch sets h's modification time to now without following a link, and
// has the next Flush make its name durable.
func (l *Local) Touch(_ context.Context, h store.Handle) error {
	if err := store.CheckHandle(h); err != nil {
		return err
	}
	path := l.name(h)
	t := unix.NsecToTimespec(time.Now().UnixNano())
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{t, t}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		err = &os.PathError{Op: "touch", Path: path, Err: err}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %w", store.ErrNotExist, err)
		}
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting[h] = true
	dir := filepath.Dir(path)
	l.dirty[dir] = true
	for dir != l.dir && dir != "." && dir != string(filepath.Separator) {
		dir = filepath.Dir(dir)
		l.dirty[dir] = true
	}
	l.pending = append(l.pending, h)
	return nil
}

// List calls fn for the files of kind k (see store.Backend).
func (l *Local) List(_ context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	switch k {
	case store.Object:
		return l.listObjects(prefix, fn)
	case store.Segment:
		entries, err := l.readDir(store.SegmentsDir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if store.IsTemp(e.Name()) || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			if err := emit(e, e.Name(), filepath.Join(store.SegmentsDir, e.Name()), fn); err != nil {
				return err
			}
		}
		return nil
	case store.Legacy:
		entries, err := l.readDir()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if store.CheckHandle(store.Handle{Kind: k, Name: name}) != nil || !strings.HasPrefix(name, prefix) {
				continue
			}
			if err := emit(e, name, name, fn); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("list: invalid kind %d", k)
}

// emit passes entry e, named name, to fn: a plain file as it is, anything
// else as bad.
func emit(e fs.DirEntry, name, relPath string, fn func(store.FileInfo) error) error {
	if !e.Type().IsRegular() {
		return fn(store.FileInfo{Name: relPath, Bad: store.ErrNotFile})
	}
	fi, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	return fn(info(name, fi))
}

func (l *Local) listObjects(prefix string, fn func(store.FileInfo) error) error {
	var shards []fs.DirEntry
	if len(prefix) >= 2 {
		if !isShardName(prefix[:2]) {
			return nil
		}
		shards = []fs.DirEntry{fs.FileInfoToDirEntry(shardInfo(prefix[:2]))}
	} else {
		var err error
		shards, err = l.readDir(store.ObjectsDir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	for _, sh := range shards {
		shardRel := filepath.Join(store.ObjectsDir, sh.Name())
		if !sh.IsDir() || sh.Type()&fs.ModeSymlink != 0 || !isShardName(sh.Name()) || !strings.HasPrefix(sh.Name(), prefix[:min(2, len(prefix))]) {
			if prefix == "" {
				if err := fn(store.FileInfo{Name: shardRel, Bad: errors.New("not a shard directory")}); err != nil {
					return err
				}
			}
			continue
		}
		entries, err := l.readDir(store.ObjectsDir, sh.Name())
		if errors.Is(err, store.ErrLinked) {
			if err := fn(store.FileInfo{Name: shardRel, Bad: errors.New("not a shard directory")}); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			relPath := filepath.Join(shardRel, e.Name())
			if store.IsTemp(e.Name()) || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			var bad error
			if _, err := store.ParseDigest(e.Name()); err != nil {
				bad = errors.New("not an artifact name")
			} else if e.Name()[:2] != sh.Name() {
				bad = fmt.Errorf("artifact in shard %s, not %s", sh.Name(), e.Name()[:2])
			}
			if bad != nil {
				if err := fn(store.FileInfo{Name: relPath, Bad: bad}); err != nil {
					return err
				}
				continue
			}
			if err := emit(e, e.Name(), relPath, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// shardInfo stands for a shard directory named name, for listObjects to
// read only the one shard a prefix names.
type shardInfo string

func (s shardInfo) Name() string       { return string(s) }
func (s shardInfo) Size() int64        { return 0 }
func (s shardInfo) Mode() fs.FileMode  { return fs.ModeDir | dirPerm }
func (s shardInfo) ModTime() time.Time { return time.Time{} }
func (s shardInfo) IsDir() bool        { return true }
func (s shardInfo) Sys() any           { return nil }

// isShardName reports whether name is two lower-case hex characters.
func isShardName(name string) bool {
	const hex = "0123456789abcdef"
	return len(name) == 2 && strings.IndexByte(hex, name[0]) >= 0 && strings.IndexByte(hex, name[1]) >= 0
}

// readDir lists the directory at the path made of names below the store's
// root, opening each with O_NOFOLLOW from the one before: a symbolic link
// on the way is refused with store.ErrLinked, never listed through, even if it
// appears while the store is read. The entries are sorted by name.
func (l *Local) readDir(names ...string) ([]fs.DirEntry, error) {
	fd, err := unix.Open(l.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: l.dir, Err: err}
	}
	path := l.dir
	for _, name := range names {
		path = filepath.Join(path, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) && notLinked(path) != nil {
			return nil, fmt.Errorf("%s %w", path, store.ErrLinked)
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

// notLinked refuses a path that is a symbolic link.
func notLinked(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, store.ErrLinked)
	}
	return nil
}

// ObjectPath returns the path of object d relative to the store's folder.
func ObjectPath(d store.Digest) string { return rel(store.ObjectHandle(d)) }
