package store

import (
	"context"
	"errors"
	"io"
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
	// Segment is a registry segment, kept at registry/<name>.
	Segment
)

func (k Kind) String() string {
	switch k {
	case Object:
		return "object"
	case Segment:
		return "registry segment"
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
			return "objects/" + h.Name[:2] + "/" + h.Name
		}
		return "objects/" + h.Name
	case Segment:
		return "registry/" + h.Name
	}
	return "unknown/" + h.Name
}

// ObjectHandle returns the Handle of object d.
func ObjectHandle(d Digest) Handle { return Handle{Kind: Object, Name: d.String()} }

func (h Handle) String() string { return h.Kind.String() + " " + h.Name }

// FileInfo describes a file of a backend.
type FileInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
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

// Unwrapper is a Backend that wraps another, such as a test's fault
// injector: As looks through it.
type Unwrapper interface {
	Unwrap() Backend
}

// As returns b as a T (one of the optional interfaces: Locker, Sweeper, or
// a backend's own), looking through wrappers (see Unwrapper).
func As[T any](b Backend) (T, bool) {
	for {
		if t, ok := b.(T); ok {
			return t, true
		}
		u, ok := b.(Unwrapper)
		if !ok {
			var zero T
			return zero, false
		}
		b = u.Unwrap()
	}
}
