package migrate

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// RehydrateOptions configure a rehydration.
type RehydrateOptions struct {
	Store string // store directory; "" is the default of session.StoreFor
	// OpenStore opens the backend of a store (see Options.OpenStore).
	OpenStore store.OpenFunc `json:"-"`
	Out       string         // output directory mirroring the inputs
	InPlace   bool           // replace each transcript by its original
	Jobs      int
	Progress  Progress
	// Done is Options.Done for rehydrate: called for each file restored
	// once its output is in place.
	Done func(res *FileResult) error `json:"-"`
}

// RehydrateTo writes the original bytes of the migrated transcript in to
// w, from its local copy, fetched first, if it has a Remote. It first restores every line into nothing, so that w receives no
// byte of a transcript that does not restore whole (a missing or damaged
// artifact, a bad marker), then restores each line again as it writes it,
// checked against its recorded hash before it is written. The exception is
// a file changed while it is read: a long line without a marker, which is
// not held but copied from the file, may then have been written in part,
// or with the new bytes, before the error (ErrSourceChanged) says so.
// A w that is the transcript's file itself (a shell's "rehydrate f > f"
// or ">> f") is refused with an *OutputIsInputError before anything is
// written. Errors name the transcript as Input.Name does. openStore
// opens the store's backend (see Options.OpenStore).
func RehydrateTo(ctx context.Context, w io.Writer, in session.Input, storeDir string, openStore store.OpenFunc, progress Progress) error {
	path, name := in.Path, in.Name()
	if in.Remote != nil {
		defer os.Remove(path)
		if _, err := in.Remote.Fetch(ctx, path); err != nil {
			return err
		}
	}
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	if f, ok := w.(interface{ Stat() (os.FileInfo, error) }); ok {
		if wfi, err := f.Stat(); err == nil && os.SameFile(fi, wfi) {
			return &OutputIsInputError{Path: name, Emptied: fi.Size() == 0}
		}
	}
	st, err := registry.Open(openStore, session.StoreFor(cmp.Or(storeDir, in.Store), path))
	if err != nil {
		return err
	}
	open := st.Opener(ctx)
	// each reads the file from its start: its lines from r, its long
	// lines back from at.
	each := func(p Progress, fn func(r io.Reader, at io.ReaderAt) error) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		dr, at, release, err := session.Source(src, progressReader{src, p}, session.Compressed(path))
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		defer release()
		return fn(dr, at)
	}
	err = each(nil, func(r io.Reader, at io.ReaderAt) error {
		return session.EachLine(r, at, name, func(l transcript.Line, long *io.SectionReader) error {
			if long != nil {
				return nil
			}
			_, err := externalizer.RestoreTo(io.Discard, l.Text, transcript.JSONStart(l), open)
			return err
		})
	})
	if err == nil {
		err = unchangedSince(path, idOf(fi))
	}
	if err != nil {
		return err
	}
	err = each(progress, func(r io.Reader, at io.ReaderAt) error {
		_, err := restoreFile(w, r, at, name, open)
		return err
	})
	if err == nil {
		// The file was read twice, and a long line copied from it more.
		err = unchangedSince(path, idOf(fi))
	}
	return err
}

// OutputIsInputError is RehydrateTo's error for an output that is the
// transcript it reads: writing the restored bytes there would overwrite
// or extend the very file being read.
type OutputIsInputError struct {
	Path string
	// Emptied says the file was empty when it was opened, as a shell's
	// ">" leaves it before the command runs.
	Emptied bool
}

func (e *OutputIsInputError) Error() string {
	if e.Emptied {
		return fmt.Sprintf("the output is %s itself, which is empty: a shell's > emptied it before transcript-tool ran", e.Path)
	}
	return fmt.Sprintf("the output is %s itself; nothing was written to it", e.Path)
}

// restoreFile writes the original of the migrated transcript read from
// src to w in one pass; on error w has received wrong bytes and the caller
// discards it. copied reports whether a long line was copied from at,
// which reads it more than once: the caller then checks that the file did
// not change meanwhile.
func restoreFile(w io.Writer, src io.Reader, at io.ReaderAt, path string, open externalizer.Opener) (copied bool, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	err = session.EachLine(src, at, path, func(l transcript.Line, long *io.SectionReader) error {
		copied = copied || long != nil
		return restoreLine(bw, l, long, open)
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return copied, err
}

// restoration is the work of a job that rehydrates a transcript: each
// line restored from the store whose Opener is open.
type restoration struct {
	name string // the transcript's, for messages
	open externalizer.Opener
}

func (r *restoration) prepare(context.Context, *os.File, bool) error { return nil }

func (r *restoration) lines(dr io.Reader, at io.ReaderAt, w io.Writer) (bool, error) {
	return restoreFile(w, dr, at, r.name, r.open)
}

// done commits every restored output.
func (r *restoration) done(context.Context, int64) (bool, error) { return true, nil }

// restoreLine writes the original of one line and its end of line. A long
// line (long reads its bytes) holds no marker: session.EachLine reads one that
// does whole. It is copied as it is.
func restoreLine(w io.Writer, l transcript.Line, long *io.SectionReader, open externalizer.Opener) error {
	if long != nil {
		n, err := io.Copy(w, long)
		if err == nil && n != l.Len {
			err = session.ErrSourceChanged // it has shrunk since it was read
		}
		if err != nil {
			return err
		}
		_, err = w.Write(l.EOL)
		return err
	}
	changed, err := externalizer.RestoreTo(w, l.Text, transcript.JSONStart(l), open)
	if err != nil {
		return err
	}
	if !changed {
		if _, err := w.Write(l.Text); err != nil {
			return err
		}
	}
	_, err = w.Write(l.EOL)
	return err
}

// Rehydrate restores every input into opts.Out, or in place. Each output is
// written to a temporary file and renamed only when the whole file was
// restored.
func Rehydrate(ctx context.Context, inputs []session.Input, opts RehydrateOptions) Summary {
	var (
		temps safefile.Sweeper // of the directories written to
		dirs  safefile.DirSyncer
	)
	copies := newCopies(opts.Jobs, len(inputs))
	results := forEach(ctx, inputs, opts.Jobs, func(in session.Input, _ func()) FileResult {
		return copies.on(ctx, in, opts.InPlace, false, func(in session.Input) FileResult {
			dest := in.Path
			if !opts.InPlace {
				dest = Dest(in, opts.Out)
			}
			res := FileResult{Path: in.Path, Dest: dest, Status: StatusFailed, BytesBefore: in.Size}
			st, err := registry.Open(opts.OpenStore, session.StoreFor(cmp.Or(opts.Store, in.Store), in.Path))
			if err != nil {
				res.Err = err
				return res
			}
			j := &job{in: in, dest: dest, replace: opts.InPlace, progress: opts.Progress, temps: &temps, dirs: &dirs,
				work: &restoration{name: in.Name(), open: st.Opener(ctx)}}
			if err := j.run(ctx, &res); err != nil {
				res.Err = err
				return res
			}
			res.Status = StatusRestored
			return res
		})
	})
	if opts.Done != nil {
		for i := range results {
			if results[i].Status == StatusRestored && results[i].Dest != results[i].Path {
				if err := opts.Done(&results[i]); err != nil {
					results[i].Status, results[i].Err, results[i].Message = StatusFailed, err, err.Error()
				}
			}
		}
	}
	sum := Summary{Results: []FileResult{}}
	for _, r := range results {
		sum.add(r)
	}
	return sum
}

// progressReader reports the bytes read through it.
type progressReader struct {
	r io.Reader
	p Progress
}

func (pr progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	if pr.p != nil {
		pr.p.Add(int64(n))
	}
	return n, err
}

// sameFile reports whether path names the file described by fi.
func sameFile(path string, fi os.FileInfo) bool {
	pfi, err := os.Stat(path)
	return err == nil && os.SameFile(pfi, fi)
}
