package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Kind is the kind of file a Handle names: it decides where a backend
// keeps the file (see the package doc, # Layout).
type Kind int

// The kinds of files a store holds.
const (
	// Object is an artifact, named by the lower-case hex SHA-256 of its
	// bytes, kept at objects/<first two hex>/<name>.
	Object Kind = iota + 1
	// Segment is a registry segment, kept at registry/<name>, or a file
	// the registry keeps beside its segments (an index, a torn tail set
	// aside).
	Segment
	// Legacy is the single-file registry of versions before segments,
	// kept at the store's root as RegistryFile, or a file named after it
	// there (a torn tail set aside, RegistryFile.torn-<n>). It is read and
	// removed, never appended to.
	Legacy
)

func (k Kind) String() string {
	switch k {
	case Object:
		return "object"
	case Segment:
		return "registry segment"
	case Legacy:
		return "single-file registry"
	}
	return "unknown kind"
}

// Handle names one file of a store: its kind and its name within the kind.
type Handle struct {
	Kind Kind
	Name string
}

// Key returns the slash-separated path of h relative to the store's root,
// the same for every backend (see the package doc, # Layout): a plain
// copy of one store's files is another store.
func Key(h Handle) string {
	switch h.Kind {
	case Object:
		if len(h.Name) >= 2 {
			return ObjectsDir + "/" + h.Name[:2] + "/" + h.Name
		}
		return ObjectsDir + "/" + h.Name
	case Segment:
		return SegmentsDir + "/" + h.Name
	case Legacy:
		return h.Name
	}
	return "unknown/" + h.Name
}

// CheckHandle refuses a handle whose name is not one of its kind, so that
// no name reaches outside its kind's folder: an object's is a digest; a
// segment's a plain name, not hidden (see IsTemp); a Legacy file's
// RegistryFile or a plain name that starts with it.
func CheckHandle(h Handle) error {
	plain := h.Name != "" && !IsTemp(h.Name) && !strings.ContainsAny(h.Name, `/\`)
	switch h.Kind {
	case Object:
		if _, err := ParseDigest(h.Name); err != nil {
			return fmt.Errorf("invalid handle %s: %w", h, err)
		}
		return nil
	case Segment:
		if plain {
			return nil
		}
	case Legacy:
		if plain && strings.HasPrefix(h.Name, RegistryFile) {
			return nil
		}
	}
	return fmt.Errorf("invalid handle %s %q", h.Kind, h.Name)
}

// ObjectHandle returns the Handle of object d.
func ObjectHandle(d Digest) Handle { return Handle{Kind: Object, Name: d.String()} }

func (h Handle) String() string { return h.Kind.String() + " " + h.Name }

// FileInfo describes a file of a backend.
type FileInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
	// ID tells apart the files that stood under one name in turn, where
	// the backend can (a local file's inode); 0 where it cannot.
	ID uint64
	// Bad, when not nil, says why what List found where files of its
	// kind are kept cannot be one (a name that is not one of the kind, a
	// link, a directory where a file belongs); Name is then its path
	// relative to the store's Location, in the backend's own spelling.
	// It is never followed.
	Bad error
}

// Errors of backends. A backend's error for a file that is not there
// wraps ErrNotExist; for one that is there but is not a plain file of
// bytes (a directory, a link, a named pipe where an object should be),
// ErrNotFile.
var (
	ErrNotExist = errors.New("does not exist")
	ErrExist    = errors.New("already exists")
	ErrNotFile  = errors.New("not a regular file")
	// ErrLinked is the error of a local store's entry that is a symbolic
	// link: a store never follows one below its root, so that a planted
	// link cannot make it read or write outside the store.
	ErrLinked = errors.New("is a symbolic link, which the store does not follow")
)

// NotFileError is a backend's error for what stands under a file's name
// and is not a plain file of bytes: Err says what it is. It wraps
// ErrNotFile and Err.
type NotFileError struct {
	Path string
	Err  error
}

func (e *NotFileError) Error() string {
	return e.Path + ": " + ErrNotFile.Error() + ": it " + e.Err.Error()
}

// Unwrap returns ErrNotFile and Err.
func (e *NotFileError) Unwrap() []error { return []error{ErrNotFile, e.Err} }

// Backend keeps the files of one store: a local folder, memory, or a
// bucket of S3-compatible object storage. It knows nothing of content
// addressing: Store hashes, verifies and decides what to write. Every
// method may be called from several goroutines at once. A method's error
// names the file and, for a remote backend, what the server said.
type Backend interface {
	// Location names the store for messages: a directory or a URL.
	Location() string

	// Path returns where a program outside this one finds h, for a
	// placeholder's path: an absolute file path, or an s3:// URL.
	Path(h Handle) string

	// Save stores the bytes write writes under h. The file is under its
	// name, whole, for every reader by the time Flush returns, perhaps
	// earlier, and never half-written. Save replaces a file that is
	// there (for an object: bytes that were damaged, since sound ones
	// are the same bytes); a backend that can only create files removes
	// it first. An error from write is returned, and nothing is stored.
	Save(ctx context.Context, h Handle, write func(io.Writer) error) error

	// Load returns a reader of length bytes of h from offset, or to its
	// end when length is 0. It wraps ErrNotExist when h is not there, and
	// ErrNotFile when h is not a plain file.
	Load(ctx context.Context, h Handle, offset, length int64) (io.ReadCloser, error)

	// Stat describes h, with the errors of Load.
	Stat(ctx context.Context, h Handle) (FileInfo, error)

	// List calls fn for each file of kind k whose name starts with
	// prefix, in no set order, and for what cannot be one (see
	// FileInfo.Bad) when prefix is empty. Temporary files of writers are
	// skipped.
	List(ctx context.Context, k Kind, prefix string, fn func(FileInfo) error) error

	// Remove deletes h; a file already gone is no error. The removal is
	// durable once Flush returns.
	Remove(ctx context.Context, h Handle) error

	// Touch sets h's modification time to now, so that a collector's
	// grace counts from this use, and makes h's name durable by the next
	// Flush (it may have been written by a run that died before its
	// Flush). It wraps ErrNotExist when h is gone.
	Touch(ctx context.Context, h Handle) error

	// Flush makes durable every file saved, touched and removed through
	// this Backend so far. It returns an error if it could not, or if any
	// of must, saved through this Backend, is not durable (its write
	// failed, perhaps in a batch another caller's Flush committed).
	Flush(ctx context.Context, must ...Handle) error

	// Discard drops the files saved since the last Flush that are not yet
	// under their names, leaving nothing of them behind; their Saves must
	// be repeated.
	Discard()
}

// OpenFunc opens the backend of the store at spec, the value of --store: a
// folder or a URL. Only the command line knows the concrete backends
// (package location); it passes one down, and the packages below it never
// choose, as restic's and rclone's main packages alone do.
type OpenFunc func(spec string) (Backend, error)

// Open opens the backend at spec with open, or fails when open is nil (a
// caller that was given no way to open stores).
func (open OpenFunc) Open(spec string) (Backend, error) {
	if open == nil {
		return nil, fmt.Errorf("store %s: no way to open a store was given", spec)
	}
	return open(spec)
}

// Appender is a Backend that appends to a file in place: a local folder.
// The registry appends its records to a segment of its own through it; over
// a Backend without it, each append is a whole new file (see package
// registry).
type Appender interface {
	// CreateAppend creates h, which must not be there (an error wrapping
	// ErrExist if it is), and opens it to append to. Its name is durable
	// once the file's first Sync returns.
	CreateAppend(ctx context.Context, h Handle) (AppendFile, error)
	// OpenAppend opens h to append to: an error wrapping ErrNotExist
	// when it is not there, ErrNotFile when it is not a plain file.
	OpenAppend(ctx context.Context, h Handle) (AppendFile, error)
}

// AppendFile is a file open to append to (see Appender).
type AppendFile interface {
	// Write appends p with one write. When it fails, part of p may have
	// been written: the file may end in a torn line.
	Write(p []byte) (int, error)
	// Sync makes the bytes written so far durable, through any
	// AppendFile of the file, and the file's name with them. When it
	// fails, they may be lost, also those an earlier Sync of another
	// AppendFile of the file reported durable after the failure.
	Sync() error
	// Stat describes the file as it is now.
	Stat() (FileInfo, error)
	Close() error
}

// Opener is a Backend that opens a file to read at any offset, as it is
// when opened: a local folder, which reads it in place. The file stays
// readable once it is removed. (OpenFile serves a Backend without it by
// loading the file whole.)
type Opener interface {
	// Open opens h, with the errors of Load.
	Open(ctx context.Context, h Handle) (File, error)
}

// File is a file opened to read (see Opener).
type File interface {
	io.ReaderAt
	// Stat describes the file as it was opened: its size is where its
	// readers stop, whatever is appended since.
	Stat() FileInfo
	Close() error
}

// OpenFile opens h through b's Opener, or, where b has none, loads it whole
// into memory (a file loaded has no ModTime or ID).
func OpenFile(ctx context.Context, b Backend, h Handle) (File, error) {
	if o, ok := As[Opener](b); ok {
		return o.Open(ctx, h)
	}
	rc, err := b.Load(ctx, h, 0, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", b.Path(h), err)
	}
	return Loaded(data, h.Name), nil
}

// Loaded returns data as a file named name, as OpenFile loads one.
func Loaded(data []byte, name string) File {
	return loaded{bytes.NewReader(data), FileInfo{Name: name, Size: int64(len(data))}}
}

// loaded is a file OpenFile loaded whole.
type loaded struct {
	*bytes.Reader
	fi FileInfo
}

func (l loaded) Stat() FileInfo { return l.fi }
func (loaded) Close() error     { return nil }

// FileLocker is a Backend whose files each have a lock of their own, as
// versions before segments locked the single-file registry to append to
// it: a local folder, with flock(2).
type FileLocker interface {
	// LockFile takes h's own lock exclusively, waiting while another
	// holds it, and returns once the file it locked is the one under h's
	// name. It wraps ErrNotExist when h is not there.
	LockFile(ctx context.Context, h Handle) (io.Closer, error)
}

// Newcomer is a Backend that knows of some objects, without a request,
// that they were not there when it began: a local folder, in the object
// folders it made itself. The Store that claims this knowledge saves such
// an object without looking for it first. The answer may be wrong once
// another writer has saved the object since; Save then replaces it with
// the same bytes, so a wrong answer costs a write and loses nothing.
type Newcomer interface {
	// Claim returns, to its first caller only, a function that reports
	// whether h can stand there only if the caller, or a writer it does
	// not know of, has saved it since the Backend made its folder. Later
	// callers get nil: the objects the first saves are not new to them.
	Claim() func(h Handle) bool
}

// Unwrapper is a Backend that wraps another, such as a test's fault
// injector: As looks through it.
type Unwrapper interface {
	Unwrap() Backend
}

// Decorator is an Unwrapper that also wraps the optional interfaces As
// finds below it, as a fault injector fails their calls too.
type Decorator interface {
	Unwrapper
	// Decorate returns c, an optional interface of the wrapped Backend,
	// or a value wrapping it; As takes the value when it is of the
	// interface asked for, else c.
	Decorate(c any) any
}

// As returns b as a T (one of the optional interfaces: Locker, Appender,
// Opener, or a backend's own), looking through wrappers (see Unwrapper,
// Decorator).
func As[T any](b Backend) (T, bool) {
	if t, ok := b.(T); ok {
		return t, true
	}
	u, ok := b.(Unwrapper)
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := As[T](u.Unwrap())
	if !ok {
		return t, false
	}
	if d, isDecorator := u.(Decorator); isDecorator {
		if dt, same := d.Decorate(t).(T); same {
			return dt, true
		}
	}
	return t, true
}
