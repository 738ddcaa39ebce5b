// Package safefile writes files so that no half-written file ever stands
// under its final name: a temporary file beside the target is written,
// fsynced, closed and renamed, and then the directory is fsynced so that the
// rename itself survives a crash.
//
// # Fault injection
//
// Every operation that changes the file system on the write path of the
// tool (create, chmod, write, fsync, syncfs, rename, mkdir, link, truncate,
// and the opening of a file to append to) goes through this package and is
// first reported to Hook. Packages registry and migrate make their writes through
// it (Write, Sync, Truncate, Mkdir, Link, Intercept), so that a test can fail
// the k-th operation with an errno, or kill the process there, and check
// what a crash at that instant leaves behind. Hook is nil in production and
// then costs one comparison per operation.
//
// # Temporary files
//
// A temporary file of name is called ".<name>.tmp-<digits>", in name's
// directory: hidden, so that walks skip it. A base name over 100 bytes is
// cut to 83 and followed by "~" and 16 hex digits of its SHA-256, so that
// the temporary files of one name are never another's. IsTemp recognises
// such names and RemoveTemps deletes those a crash left.
package safefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Kind is a kind of file system operation reported to Hook.
type Kind string

// The kinds of operation.
const (
	KindCreate   Kind = "create"   // a temporary file; Path is its pattern
	KindChmod    Kind = "chmod"    // a file or directory just created
	KindWrite    Kind = "write"    // bytes to a file
	KindSync     Kind = "fsync"    // a file's bytes made durable
	KindRename   Kind = "rename"   // a temporary file to its final name, Path
	KindSyncDir  Kind = "fsyncdir" // a directory's entries made durable
	KindSyncFS   Kind = "syncfs"   // every file and directory of a file system made durable; Path is the directory opened
	KindMkdir    Kind = "mkdir"    // a directory
	KindLink     Kind = "link"     // a hard link; Path is the new name
	KindTruncate Kind = "truncate" // a file cut short
	KindOpen     Kind = "open"     // an existing file opened (or created) to append to
	KindProbe    Kind = "probe"    // a check that a path is writable; changes nothing
)

// Op is one operation about to be made.
type Op struct {
	Kind Kind
	Path string
	// File and Data are set for KindWrite: the file and the bytes about to
	// be written to it, so that a test can tear the write.
	File *os.File
	Data []byte
}

// Hook, when not nil, is called before every operation on the write path.
// An error it returns fails the operation as if the system call had
// returned it; the operation is then not made. It may be called from
// several goroutines at once. Tests set it (restic-style fault injection)
// before the code under test runs and reset it after; production code never
// sets it.
var Hook func(Op) error

// Intercept reports an operation made outside this package, such as
// opening a file with lockedfile, to Hook, and returns Hook's error.
func Intercept(op Op) error {
	if Hook == nil {
		return nil
	}
	return Hook(op)
}

// File is a temporary file that becomes the file named to Create on
// Commit. Writes go through Write; OS gives the file itself for reading
// back and for metadata.
type File struct {
	f      *os.File
	name   string
	done   bool
	synced bool // fsynced by Sync, with nothing written since
	// anon marks a file made by CreateNew with O_TMPFILE: it has no name
	// until Commit links it under its final one.
	anon bool
}

// tempPattern returns the directory and the os.CreateTemp pattern of the
// temporary files of name.
func tempPattern(name string) (dir, pattern string) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	// A long name plus the suffix could pass the file system's limit. A
	// cut one ends in a hash of the whole, so that its temporary files
	// are still its own alone: its owner removes them, as any other's.
	if len(base) > maxBase {
		sum := sha256.Sum256([]byte(base))
		base = base[:maxBase-1-2*cutHash] + "~" + hex.EncodeToString(sum[:cutHash])
	}
	return dir, "." + base + tempSuffix + "*"
}

const (
	tempSuffix = ".tmp-"
	maxBase    = 100
	// cutHash is the bytes of SHA-256 that end a name cut to maxBase.
	cutHash = 8
)

// Create starts writing the file name with permissions perm, whatever the
// umask. The temporary file lives in name's directory, so that the final
// rename stays on one file system.
func Create(name string, perm os.FileMode) (*File, error) {
	dir, pattern := tempPattern(name)
	if err := Intercept(Op{Kind: KindCreate, Path: filepath.Join(dir, pattern)}); err != nil {
		return nil, err
	}
	return createTemp(dir, pattern, name, perm)
}

// createTemp makes the named temporary file of name in dir.
func createTemp(dir, pattern, name string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := setMode(f.Name(), f.Stat, f.Chmod, perm); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return &File{f: f, name: name}, nil
}

// CreateNew is Create for a file whose final name usually does not exist
// yet, such as an artifact: where the system allows, the temporary file is
// an unnamed one (O_TMPFILE) that Commit links under its final name, one
// change to the directory instead of a create and a rename, and that a
// crash leaves nowhere. Where the final name exists after all, Commit
// replaces it as Create's would.
func CreateNew(name string, perm os.FileMode) (*File, error) {
	dir, pattern := tempPattern(name)
	if err := Intercept(Op{Kind: KindCreate, Path: filepath.Join(dir, pattern)}); err != nil {
		return nil, err
	}
	if procFD() {
		fd, ok, err := openUnnamed(dir, perm)
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, pattern), Err: err}
		}
		if ok {
			f := os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed temporary file for "+filepath.Base(name)+")"))
			if err := setMode(f.Name(), f.Stat, f.Chmod, perm); err != nil {
				_ = f.Close()
				return nil, err
			}
			return &File{f: f, name: name, anon: true}, nil
		}
	}
	return createTemp(dir, pattern, name, perm)
}

// procFD reports whether /proc/self/fd is there, through which an unnamed
// file is linked.
var procFD = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

// link gives the unnamed file f its final name, or replaces what stands
// under it through a temporary name.
func (f *File) link() error {
	from := "/proc/self/fd/" + strconv.Itoa(int(f.f.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, from, unix.AT_FDCWD, f.name, unix.AT_SYMLINK_FOLLOW)
	if !errors.Is(err, unix.EEXIST) {
		if err != nil {
			return &os.LinkError{Op: "link", Old: f.f.Name(), New: f.name, Err: err}
		}
		return nil
	}
	dir, pattern := tempPattern(f.name)
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, strings.Replace(pattern, "*", strconv.FormatUint(rand.Uint64(), 10), 1))
		err := unix.Linkat(unix.AT_FDCWD, from, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "link", Old: f.f.Name(), New: tmp, Err: err}
		}
		if err := os.Rename(tmp, f.name); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		return nil
	}
}

// setMode gives the file or directory name, just created, the mode perm,
// which the umask may have cut; stat and chmod act on it.
func setMode(name string, stat func() (os.FileInfo, error), chmod func(os.FileMode) error, perm os.FileMode) error {
	if fi, err := stat(); err == nil && fi.Mode().Perm() == perm {
		return nil
	}
	if err := Intercept(Op{Kind: KindChmod, Path: name}); err != nil {
		return err
	}
	return chmod(perm)
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	f.synced = false
	return Write(f.f, p)
}

// Sync fsyncs the temporary file, for callers that fsync many files at
// once before they commit them; CommitNoDirSync then fsyncs it no more.
func (f *File) Sync() error {
	if f.done {
		return errors.New("safefile: file already committed or aborted")
	}
	if err := Sync(f.f); err != nil {
		return fmt.Errorf("fsync %s: %w", f.f.Name(), err)
	}
	f.synced = true
	return nil
}

// OS returns the temporary file, for reading back what was written and
// for its metadata. Writes through it bypass Hook.
func (f *File) OS() *os.File { return f.f }

// Commit makes the written bytes durable under the final name: fsync,
// close, rename, fsync of the directory.
func (f *File) Commit() error {
	if err := f.CommitNoDirSync(); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(f.name))
}

// CommitNoDirSync is Commit without the directory fsync, for callers that
// batch it: the file is complete under its final name, but the rename is
// durable only once the caller has called SyncDir on its directory.
func (f *File) CommitNoDirSync() error {
	if f.done {
		return errors.New("safefile: file already committed or aborted")
	}
	f.done = true
	tmp := f.f.Name()
	if f.synced {
		// Made durable by Sync.
	} else if err := Sync(f.f); err != nil {
		_ = f.f.Close()
		if !f.anon {
			_ = os.Remove(tmp)
		}
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if f.anon {
		err := Intercept(Op{Kind: KindRename, Path: f.name})
		if err == nil {
			err = f.link()
		}
		if cerr := f.f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := f.f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	err := Intercept(Op{Kind: KindRename, Path: f.name})
	if err == nil {
		err = os.Rename(tmp, f.name)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Abort discards the temporary file. It is safe to call after Commit, so
// that callers can defer it.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.f.Close()
	if !f.anon {
		_ = os.Remove(f.f.Name())
	}
}

// WriteFile atomically replaces name with data.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// Write writes p to f, an open file on the write path.
func Write(f *os.File, p []byte) (int, error) {
	if err := Intercept(Op{Kind: KindWrite, Path: f.Name(), File: f, Data: p}); err != nil {
		return 0, err
	}
	return f.Write(p)
}

// Sync fsyncs f.
func Sync(f *os.File) error {
	if err := Intercept(Op{Kind: KindSync, Path: f.Name()}); err != nil {
		return err
	}
	return f.Sync()
}

// Truncate cuts f to size bytes.
func Truncate(f *os.File, size int64) error {
	if err := Intercept(Op{Kind: KindTruncate, Path: f.Name()}); err != nil {
		return err
	}
	return f.Truncate(size)
}

// SyncDir fsyncs a directory so that entries created or renamed in it are
// durable.
func SyncDir(dir string) error {
	if err := Intercept(Op{Kind: KindSyncDir, Path: dir}); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// Mkdir creates the directory dir with permissions perm, whatever the
// umask. Its entry in the parent is not yet durable: the caller fsyncs the
// parent. An existing directory is reported as fs.ErrExist and left as it
// is.
func Mkdir(dir string, perm os.FileMode) error {
	if err := Intercept(Op{Kind: KindMkdir, Path: dir}); err != nil {
		return err
	}
	if err := os.Mkdir(dir, perm); err != nil {
		return err
	}
	// os.Mkdir applies the umask: a umask of 0277 would make a store
	// directory that its owner cannot write into.
	return setMode(dir, func() (os.FileInfo, error) { return os.Stat(dir) }, func(m os.FileMode) error { return os.Chmod(dir, m) }, perm)
}

// MkdirAll creates dir and any missing parents with permissions perm and
// makes each new entry durable by fsyncing its parent.
func MkdirAll(dir string, perm os.FileMode) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: unix.ENOTDIR}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made by someone else meanwhile
		}
		return err
	}
	return SyncDir(parent)
}

// Link makes newname a hard link to oldname.
func Link(oldname, newname string) error {
	if err := Intercept(Op{Kind: KindLink, Path: newname}); err != nil {
		return err
	}
	return os.Link(oldname, newname)
}

// Writable checks, without changing anything, that this process may write
// path: a file must be writable, a directory writable and searchable. A
// missing path is checked at its nearest existing parent directory, where
// it would be created. The check is access(2), which sees what permission
// bits alone do not: a read-only mount, an immutable file, root's
// privilege. (It checks the real user, which is the effective one: the tool
// is never set-user-ID.) The error names the path checked.
func Writable(path string) error {
	if err := Intercept(Op{Kind: KindProbe, Path: path}); err != nil {
		return fmt.Errorf("%s is not writable: %w", path, err)
	}
	for {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) && filepath.Dir(path) != path {
			path = filepath.Dir(path)
			continue
		}
		if err != nil {
			return err
		}
		mode := uint32(unix.W_OK)
		if fi.IsDir() {
			mode |= unix.X_OK
		}
		if err := unix.Access(path, mode); err != nil {
			return fmt.Errorf("%s is not writable: %w", path, err)
		}
		return nil
	}
}

// IsTemp reports whether the base name name is that of a temporary file
// made by Create.
func IsTemp(name string) bool {
	i := strings.LastIndex(name, tempSuffix)
	return strings.HasPrefix(name, ".") && i >= 1 && digits(name[i+len(tempSuffix):])
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// StaleAge is how old a temporary file must be before a writer that does
// not own it takes it for a crash's leftover: far longer than any write of
// one file takes.
const StaleAge = time.Hour

// RemoveTemps deletes the temporary files of name that an interrupted
// writer left in name's directory and returns how many it removed. owned
// says that the caller is name's only writer (it holds a lock that every
// writer of name takes): then every temporary file of name goes; otherwise
// only those older than StaleAge, since a live writer may own the others.
func RemoveTemps(name string, owned bool) (int, error) {
	dir, pattern := tempPattern(name)
	prefix := strings.TrimSuffix(pattern, "*")
	// Only digits may follow: ".s.jsonl.tmp-5.jsonl.tmp-7" is a temporary
	// file of "s.jsonl.tmp-5.jsonl".
	return removeTemps(dir, func(n string) bool { return strings.HasPrefix(n, prefix) && digits(n[len(prefix):]) }, owned)
}

// RemoveStale deletes the temporary files in dir older than StaleAge and
// returns how many it removed.
func RemoveStale(dir string) (int, error) {
	return removeTemps(dir, func(string) bool { return true }, false)
}

func removeTemps(dir string, match func(string) bool, anyAge bool) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var temps []fs.DirEntry
	for _, e := range entries {
		if IsTemp(e.Name()) && match(e.Name()) && e.Type().IsRegular() {
			temps = append(temps, e)
		}
	}
	return removeEntries(dir, temps, anyAge)
}

// removeEntries deletes the temporary files entries of dir: all of them
// with anyAge, else those older than StaleAge.
func removeEntries(dir string, entries []fs.DirEntry, anyAge bool) (int, error) {
	cutoff := time.Now().Add(-StaleAge)
	n := 0
	for _, e := range entries {
		if !anyAge {
			info, err := e.Info()
			if err != nil || info.ModTime().After(cutoff) {
				continue // gone meanwhile, or perhaps a live writer's
			}
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// Sweeper is RemoveTemps for a run over many files: it lists each
// directory once, the first time it is asked for a name in it, and keeps
// only the temporary files it found there, so that a run over n files of
// one directory costs one listing, not n. It sees the directory as it was
// at that listing: a caller must ask for a name before it creates that
// name's temporary files, and the temporary files of another run started
// since are left for that run. Its methods are safe for concurrent use.
type Sweeper struct {
	mu   sync.Mutex
	dirs map[string]*sweptDir
}

type sweptDir struct {
	once  sync.Once
	temps map[string][]fs.DirEntry // by the prefix of their name, as tempPattern makes it
	err   error
}

// Remove is RemoveTemps(name, owned), but for the temporary files that
// name's directory held when the Sweeper first listed it.
func (s *Sweeper) Remove(name string, owned bool) (int, error) {
	dir, pattern := tempPattern(name)
	s.mu.Lock()
	if s.dirs == nil {
		s.dirs = map[string]*sweptDir{}
	}
	d := s.dirs[dir]
	if d == nil {
		d = &sweptDir{}
		s.dirs[dir] = d
	}
	s.mu.Unlock()
	d.once.Do(func() {
		entries, err := os.ReadDir(dir)
		d.temps, d.err = map[string][]fs.DirEntry{}, err
		for _, e := range entries {
			if n := e.Name(); IsTemp(n) && e.Type().IsRegular() {
				key := n[:strings.LastIndex(n, tempSuffix)+len(tempSuffix)]
				d.temps[key] = append(d.temps[key], e)
			}
		}
	})
	if d.err != nil {
		return 0, d.err
	}
	prefix := strings.TrimSuffix(pattern, "*")
	s.mu.Lock()
	entries := d.temps[prefix]
	delete(d.temps, prefix)
	s.mu.Unlock()
	return removeEntries(dir, entries, owned)
}

// Describe names what a file of mode m is, for messages about what stands
// where a plain file belongs.
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// SetPerm gives the open file f the permissions perm if it has others
// (a file created under a umask, or by another tool), reporting the
// change to Hook.
func SetPerm(f *os.File, perm os.FileMode) error {
	fi, err := f.Stat()
	if err != nil || fi.Mode().Perm() == perm {
		return err
	}
	if err := Intercept(Op{Kind: KindChmod, Path: f.Name()}); err != nil {
		return err
	}
	return f.Chmod(perm)
}
