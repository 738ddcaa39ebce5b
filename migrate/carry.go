package migrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/session"
)

// A rewrite in place races the agents that append to their transcripts
// without a lock: pi and Claude Code open the file for each entry, append
// it and close it. An append whose open(2) found the transcript before
// the rename writes to the file replaced, which no name reaches any more.
// A replacement keeps those bytes: it takes a lease on the transcript
// (session.Lease) before the last check, holds it over the rename and the
// directory's fsync, and then carries what was written to the file
// replaced into the new one.

const (
	// writerWait bounds the wait, before a rename, for the processes
	// that have the file open for writing to close it: an agent appending
	// an entry has it open for microseconds, while one that keeps it open
	// would go on writing to the file replaced.
	writerWait = 200 * time.Millisecond
	// settleWait bounds the waits of a carry: for the agents writing to
	// a replaced file to be done with it, and for those appending to the
	// transcript to close it before the bytes are carried into a new one,
	// which is better than keeping them aside.
	settleWait = 5 * time.Second
	// maxCarries bounds how many new files the bytes are carried into:
	// an agent may append to each as it is replaced in turn.
	maxCarries = 10
)

// takeLease is session.TakeLease; tests turn leases off through it.
var takeLease = session.TakeLease

// settleQuiet: without a lease, a replaced file that has not grown for
// this long since its rename is taken to be written to no more. A
// variable for tests.
var settleQuiet = 20 * time.Millisecond

// errAgain is the error of a carry that found the file replaced written
// to once more: its bytes are carried anew.
var errAgain = errors.New("written to again")

// replacement is the replacing of the transcript at path by a new file:
// the file last replaced (old), whose bytes from `from` on an agent wrote
// after it was read and belong in the file now at path (cur) at byte
// `at`, before what was appended to cur.
type replacement struct {
	path  string
	fi    os.FileInfo // of the transcript read: mode and owner of every new file
	dirs  *safefile.DirSyncer
	old   *os.File
	from  int64
	lease *session.Lease // on old, nil where there is none
	cur   *os.File       // open read-only and locked (session.Lock)
	at    int64
	// undo puts a compressed transcript, which agents do not append to,
	// back as it was, with what was written to it, rather than carry;
	// undone says it was.
	undo, undone bool
	carried      int64
	opened       []*os.File // to close: cur and the files replaced since
}

// replace readies the replacement of the transcript at path, read from
// src as described by fi and before, with the complete new file out, of
// written bytes: it makes out durable, locks it, waits for no process to
// have the transcript open for writing and leases it, and checks it
// unchanged. The rename is left to the caller, then settle, then close.
func replace(path string, src *os.File, fi os.FileInfo, before fileID, out *safefile.File, written int64, undo bool, dirs *safefile.DirSyncer) (*replacement, error) {
	// Before the lease: an agent that opens the transcript waits on it.
	if err := out.Sync(); err != nil {
		return nil, err
	}
	cur, err := openLocked(out.OS())
	if err != nil {
		return nil, err
	}
	r := &replacement{path: path, fi: fi, dirs: dirs, old: src, from: before.size, cur: cur, at: written, undo: undo, opened: []*os.File{cur}}
	r.lease, err = waitLease(src, writerWait)
	if err != nil {
		err = fmt.Errorf("%w; left untouched", err)
	} else {
		err = unchangedSince(path, before)
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// openLocked opens the temporary file f again, read-only, and locks it:
// once renamed it is the transcript, which no other run may rewrite while
// this one may still carry bytes into it.
func openLocked(f *os.File) (*os.File, error) {
	g, err := os.Open(f.Name())
	if err != nil {
		return nil, err
	}
	if err := session.Lock(g); err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

// waitLease takes a lease on f, waiting up to d for the processes that
// have it open for writing to close it.
func waitLease(f *os.File, d time.Duration) (*session.Lease, error) {
	deadline := time.Now().Add(d)
	pause := 50 * time.Microsecond
	for {
		l, err := takeLease(f)
		if !errors.Is(err, session.ErrWriterOpen) || time.Now().After(deadline) {
			return l, err
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// settle runs once cur was renamed over path and the directory synced.
// It carries what agents wrote to the file replaced into the transcript,
// after the bytes rewritten and before what they appended to the new file
// since, and returns how many bytes it carried. A compressed transcript
// is put back as it was instead, with those bytes, and the error says so.
// Bytes it cannot carry are kept in a file beside the transcript, which
// the error names.
func (r *replacement) settle() (int64, error) {
	for n := 0; ; n++ {
		end, err := r.settled()
		switch {
		case err != nil:
			return r.carried, r.aside(err)
		case end == r.from:
			if r.undone {
				return r.carried, fmt.Errorf("%s: %w (put back as it was, with the %d bytes written to it meanwhile)", r.path, session.ErrSourceChanged, r.carried)
			}
			return r.carried, nil
		case end < r.from:
			return r.carried, r.aside(errors.New("the file replaced was cut short meanwhile"))
		case n == maxCarries:
			return r.carried, r.aside(errors.New("agents kept writing to it as it was replaced"))
		}
		if err := r.carry(end); err != nil && !errors.Is(err, errAgain) {
			return r.carried, r.aside(fmt.Errorf("carry what was written to it as it was replaced: %w", err))
		}
	}
}

// settled waits until no process writes to old any more and returns its
// size. A lease held unbroken since before the rename, with the size
// unchanged, says at once that nothing was written to it. Without a
// lease, old must stay quiet for settleQuiet, also when it has not grown:
// an agent that opened it before the rename may not have written yet.
func (r *replacement) settled() (int64, error) {
	leased, broken := r.lease != nil, r.lease.Broken()
	r.lease.Release()
	r.lease = nil
	size, err := sizeOf(r.old)
	if err != nil || leased && !broken && size == r.from {
		return size, err
	}
	if leased {
		// The writers that waited on the lease now open the file; a new
		// lease is had once they all closed it again.
		if r.lease, err = waitLease(r.old, settleWait); err != nil {
			return 0, err
		}
		return sizeOf(r.old)
	}
	deadline := time.Now().Add(settleWait)
	for quiet := time.Now(); time.Since(quiet) < settleQuiet; {
		if time.Now().After(deadline) {
			return 0, errors.New("an agent kept writing to the file replaced")
		}
		time.Sleep(time.Millisecond)
		n, err := sizeOf(r.old)
		if err != nil {
			return 0, err
		}
		if n != size {
			size, quiet = n, time.Now()
		}
	}
	return size, nil
}

// carry writes a new file of cur's bytes before at (or, to undo, old's
// before from), old's from from to end, and cur's from at on, and renames
// it over path under a lease on cur; old, still leased, must have been
// written to no more (errAgain).
func (r *replacement) carry(end int64) error {
	out, err := safefile.Create(r.path, r.fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer out.Abort()
	keepOwner(out.OS(), r.fi)
	head := io.NewSectionReader(r.cur, 0, r.at)
	if r.undo {
		head = io.NewSectionReader(r.old, 0, r.from)
	}
	headLen := head.Size()
	n, err := io.Copy(out, io.MultiReader(head, io.NewSectionReader(r.old, r.from, end-r.from), io.NewSectionReader(r.cur, r.at, math.MaxInt64-r.at)))
	if err != nil {
		return err
	}
	curEnd := r.at + n - headLen - (end - r.from)
	if err := out.Sync(); err != nil {
		return err
	}
	next, err := openLocked(out.OS())
	if err != nil {
		return err
	}
	r.opened = append(r.opened, next)
	lease, err := waitLease(r.cur, settleWait)
	if err != nil {
		return err
	}
	// What was appended to cur since is copied under the lease, past the
	// fsync: the rename does not wait for the disk while agents wait on
	// the lease, and the new file is fsynced right after it. Only bytes
	// the agents had not made durable themselves wait so.
	curFI, err := r.cur.Stat()
	if err == nil && curFI.Size() > curEnd {
		var more int64
		more, err = appendFrom(out, r.cur, curEnd, curFI.Size())
		curEnd += more
		n += more
	}
	if err == nil {
		err = r.stillCur(curEnd)
	}
	if err == nil && r.lease.Broken() {
		err = errAgain
	}
	if err == nil {
		err = out.CommitNoDirSync()
	}
	if err != nil {
		lease.Release()
		return err
	}
	// old, quiet since its lease was had, is done with: an open(2) that
	// found it before it was replaced and has not reached its lease yet
	// is not waited for.
	r.lease.Release()
	r.carried += end - r.from
	r.old, r.from, r.lease = r.cur, curEnd, lease
	r.cur, r.at = next, n
	r.undone = r.undone || r.undo
	r.undo = false
	if err := safefile.Sync(next); err != nil {
		return err
	}
	return r.dirs.Sync(filepath.Dir(r.path))
}

// stillCur checks that cur is still the transcript, of size bytes; one
// that grew meanwhile, which only a writer without a lease can make it,
// is errAgain.
func (r *replacement) stillCur(size int64) error {
	fi, err := os.Stat(r.path)
	if err != nil {
		return err
	}
	cfi, err := r.cur.Stat()
	if err != nil {
		return err
	}
	switch {
	case !os.SameFile(fi, cfi):
		return fmt.Errorf("%s was replaced by another file meanwhile", r.path)
	case fi.Size() != size:
		return errAgain
	}
	return nil
}

// appendFrom copies f's bytes from off to end to out past its last Sync,
// and returns how many it copied. They are written with safefile.Write,
// not out.Write, which leaves out synced: committing it does not fsync
// them (see carry).
func appendFrom(out *safefile.File, f *os.File, off, end int64) (int64, error) {
	buf := make([]byte, min(end-off, 1<<20))
	var n int64
	for off+n < end {
		m, err := f.ReadAt(buf[:min(int64(len(buf)), end-off-n)], off+n)
		if m > 0 {
			if _, werr := safefile.Write(out.OS(), buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sizeOf returns the size of the open file f.
func sizeOf(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// aside keeps what agents wrote to old past from, once they are done, in
// a new file beside the transcript, and returns cause with the file's
// name and where the bytes belong. A file replaced that was cut short
// meanwhile is kept whole.
func (r *replacement) aside(cause error) error {
	if _, err := r.settled(); err != nil {
		cause = fmt.Errorf("%w; %w", cause, err)
	}
	size, err := sizeOf(r.old)
	if err != nil {
		return fmt.Errorf("%s: %w; what was written to it as it was replaced could not be read: %w", r.path, cause, err)
	}
	if size == r.from {
		return fmt.Errorf("%s: %w", r.path, cause)
	}
	off, what, verb := r.from, fmt.Sprintf("the %d bytes written to it as it was replaced", size-r.from), "are"
	where := fmt.Sprintf(": they belong after its byte %d", r.at)
	switch {
	case size < r.from:
		off, what, verb, where = 0, "the file it replaced", "is", ""
	case r.undo:
		where = fmt.Sprintf(": they belong after the %d bytes it had", r.from)
	}
	side := fmt.Sprintf("%s.appended-%s", r.path, time.Now().UTC().Format("20060102T150405.000000000"))
	out, err := safefile.Create(side, r.fi.Mode().Perm())
	if err == nil {
		defer out.Abort()
		keepOwner(out.OS(), r.fi)
		if _, err = io.Copy(out, io.NewSectionReader(r.old, off, size-off)); err == nil {
			err = out.Commit()
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w; %s could not be kept in %s: %w", r.path, cause, what, side, err)
	}
	return fmt.Errorf("%s: %w; %s %s in %s%s", r.path, cause, what, verb, side, where)
}

// close releases the lease and the locks.
func (r *replacement) close() {
	r.lease.Release()
	for _, f := range r.opened {
		_ = f.Close()
	}
}
