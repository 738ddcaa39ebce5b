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
	Store    string // store directory; "" uses the one beside each transcript
	Out      string // output directory mirroring the inputs
	InPlace  bool   // replace each transcript by its original
	Jobs     int
	Progress Progress
}

// RehydrateTo writes the original bytes of the migrated transcript at path
// to w. Each line is rebuilt and checked against its recorded hash before
// it is written, so w never receives a wrong line; on error, w holds the
// lines before the bad one.
func RehydrateTo(w io.Writer, path, storeDir string, progress Progress) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	store := registry.Open(StoreFor(storeDir, path))
	bw := bufio.NewWriterSize(w, 1<<20)
	r := transcript.NewReader(src)
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if progress != nil {
			progress.Add(int64(len(l.Text) + len(l.EOL)))
		}
		text, changed, err := externalizer.Restore(l.Text, transcript.JSONStart(l), store.Get)
		if err != nil {
			_ = bw.Flush()
			return &transcript.InputError{Path: path, Line: l.Num, Offset: l.Offset, Err: err}
		}
		if !changed {
			text = l.Text
		}
		if _, err := bw.Write(text); err != nil {
			return err
		}
		if _, err := bw.Write(l.EOL); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Rehydrate restores every input into opts.Out, or in place. Each output is
// written to a temporary file and renamed only when the whole file was
// restored.
func Rehydrate(ctx context.Context, inputs []Input, opts RehydrateOptions) Summary {
	results := forEach(ctx, inputs, opts.Jobs, func(in Input) FileResult {
		dest := in.Path
		if !opts.InPlace {
			dest = Dest(in, opts.Out)
		}
		res := FileResult{Path: in.Path, Dest: dest, Status: StatusFailed, BytesBefore: in.Size}
		fi, err := os.Stat(in.Path)
		if err != nil {
			res.Err = err
			return res
		}
		if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
			res.Err = err
			return res
		}
		out, err := safefile.Create(dest, fi.Mode().Perm())
		if err != nil {
			res.Err = err
			return res
		}
		defer out.Abort()
		cw := &countWriter{w: out}
		if err := RehydrateTo(cw, in.Path, opts.Store, opts.Progress); err != nil {
			res.Err = err
			return res
		}
		if opts.InPlace {
			if err := unchangedSince(in.Path, idOf(fi)); err != nil {
				res.Err = err
				return res
			}
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
