package migrate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// RehydrateOptions configure a rehydration.
type RehydrateOptions struct {
	Store    string // store directory; "" is the default of StoreFor
	Out      string // output directory mirroring the inputs
	InPlace  bool   // replace each transcript by its original
	Jobs     int
	Progress Progress
}

// RehydrateTo writes the original bytes of the migrated transcript at path
// to w. It first restores every line into nothing, so that w receives no
// byte of a transcript that does not restore whole (a missing or damaged
// artifact, a bad marker), then restores each line again as it writes it,
// checked against its recorded hash before it is written. The exception is
// a file changed while it is read: a long line without a marker, which is
// not held but copied from the file, may then have been written in part,
// or with the new bytes, before the error (ErrSourceChanged) says so.
func RehydrateTo(w io.Writer, path, storeDir string, progress Progress) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	store := registry.Open(StoreFor(storeDir, path))
	// each runs fn over the lines of the file from its start.
	each := func(p Progress, fn func(l transcript.Line, long *io.SectionReader) error) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		dr, at, release, err := source(src, progressReader{src, p}, compressed(path))
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		defer release()
		return eachLine(dr, at, path, fn)
	}
	err = each(nil, func(l transcript.Line, long *io.SectionReader) error {
		if long != nil {
			return nil
		}
		_, err := externalizer.RestoreTo(io.Discard, l.Text, transcript.JSONStart(l), store.Open)
		return err
	})
	if err == nil {
		err = unchangedSince(path, idOf(fi))
	}
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = each(progress, func(l transcript.Line, long *io.SectionReader) error {
		return restoreLine(bw, l, long, store)
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		// The file was read twice, and a long line copied from it more.
		err = unchangedSince(path, idOf(fi))
	}
	return err
}

// restoreFile writes the original of the migrated transcript read from
// src to w in one pass; on error w has received wrong bytes and the caller
// discards it. copied reports whether a long line was copied from at,
// which reads it more than once: the caller then checks that the file did
// not change meanwhile.
func restoreFile(w io.Writer, src io.Reader, at io.ReaderAt, path string, store *registry.Store) (copied bool, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	err = eachLine(src, at, path, func(l transcript.Line, long *io.SectionReader) error {
		copied = copied || long != nil
		return restoreLine(bw, l, long, store)
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return copied, err
}

// restoreLine writes the original of one line and its end of line. A long
// line (long reads its bytes) holds no marker: eachLine reads one that
// does whole. It is copied as it is.
func restoreLine(w io.Writer, l transcript.Line, long *io.SectionReader, store *registry.Store) error {
	if long != nil {
		n, err := io.Copy(w, long)
		if err == nil && n != l.Len {
			err = ErrSourceChanged // it has shrunk since it was read
		}
		if err != nil {
			return err
		}
		_, err = w.Write(l.EOL)
		return err
	}
	changed, err := externalizer.RestoreTo(w, l.Text, transcript.JSONStart(l), store.Open)
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

// eachLine calls fn for every line of src; an error from fn is reported
// at the line's place in path. at, when not nil, reads the bytes of src
// again by offset (see source): a line longer than LongLine without a
// marker then comes as Long, with long reading its bytes, so that memory
// does not grow with the length of a line. Every other line comes whole,
// with long nil.
func eachLine(src io.Reader, at io.ReaderAt, path string, fn func(l transcript.Line, long *io.SectionReader) error) error {
	r := transcript.NewReader(src)
	if at != nil {
		r.Limit = LongLine
	}
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		var long *io.SectionReader
		if l.Long {
			long = io.NewSectionReader(at, l.Offset, l.Len)
			marked, err := externalizer.HasMarkerIn(long)
			if pos, _ := long.Seek(0, io.SeekCurrent); err == nil && pos != l.Len {
				err = ErrSourceChanged // it has shrunk since it was read
			}
			if err == nil && marked {
				// Restoring a marker takes the whole line.
				l.Text, l.Long, long = make([]byte, l.Len), false, nil
				_, err = io.NewSectionReader(at, l.Offset, l.Len).ReadAt(l.Text, 0)
			}
			if err != nil {
				return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
			}
			if long != nil {
				long = io.NewSectionReader(at, l.Offset, l.Len) // from its start again
			}
		}
		if err := fn(l, long); err != nil {
			return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
		}
	}
}

// Rehydrate restores every input into opts.Out, or in place. Each output is
// written to a temporary file and renamed only when the whole file was
// restored.
func Rehydrate(ctx context.Context, inputs []Input, opts RehydrateOptions) Summary {
	var temps safefile.Sweeper // of the directories of the files replaced
	results := forEach(ctx, inputs, opts.Jobs, func(in Input, _ func()) FileResult {
		dest := in.Path
		if !opts.InPlace {
			dest = Dest(in, opts.Out)
		}
		res := FileResult{Path: in.Path, Dest: dest, Status: StatusFailed, BytesBefore: in.Size}
		src, err := os.Open(in.Path)
		if err != nil {
			res.Err = err
			return res
		}
		defer src.Close()
		fi, err := src.Stat()
		if err != nil {
			res.Err = err
			return res
		}
		// An --out that names the transcript's own directory replaces it
		// too: that takes the transcript's lock, before any temporary file
		// is made beside it.
		inPlace := opts.InPlace || sameFile(dest, fi)
		if inPlace {
			if err := lockSource(src); err != nil {
				res.Err = err
				return res
			}
			if err := unchangedSince(in.Path, idOf(fi)); err != nil {
				res.Err = err
				return res
			}
			_, _ = temps.Remove(dest, true)
		}
		state := &agentState{}
		if inPlace {
			if state, err = lockAgentState(in.Path); err != nil {
				res.Err = fmt.Errorf("%s: %w; left untouched", in.Path, err)
				return res
			}
			defer state.release()
		}
		if err := safefile.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
			res.Err = err
			return res
		}
		out, err := safefile.Create(dest, fi.Mode().Perm())
		if err != nil {
			res.Err = err
			return res
		}
		defer out.Abort()
		keepOwner(out.OS(), fi)
		zst := compressed(in.Path)
		dr, at, release, err := source(src, progressReader{src, opts.Progress}, zst)
		if err != nil {
			res.Err = fmt.Errorf("read %s: %w", in.Path, err)
			return res
		}
		defer release()
		cw := &countWriter{w: out}
		// The original's compressed size is not known: the default level.
		enc, releaseEnc, err := encoder(cw, zst, 0)
		if err != nil {
			res.Err = err
			return res
		}
		defer releaseEnc()
		store := registry.Open(StoreFor(opts.Store, in.Path))
		copied, err := restoreFile(enc, dr, at, in.Path, store)
		if err != nil {
			res.Err = err
			return res
		}
		if err := enc.Close(); err != nil {
			res.Err = err
			return res
		}
		// In place, an agent may have appended meanwhile; and a long line
		// copied from the file was read more than once.
		if inPlace || copied {
			if err := unchangedSince(in.Path, idOf(fi)); err != nil {
				res.Err = err
				return res
			}
		}
		if err := state.reset(ctx); err != nil {
			res.Err = fmt.Errorf("%s: %w; left untouched", in.Path, err)
			return res
		}
		if err := out.Commit(); err != nil {
			res.Err = err
			return res
		}
		res.BytesAfter = cw.n
		res.Status = StatusRestored
		return res
	})
	var sum Summary
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
