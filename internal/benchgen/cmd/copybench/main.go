// Command copybench copies a tree of files with -jobs workers and makes
// the copy durable with one syncfs: the reference scripts/bench.sh
// compares migrate with when it copies migrate's own output. It does what
// writing that output costs (every folder and file created, every byte
// written from memory) and nothing else: no parsing, no hashing, no fsync
// per file, no temporary names. `cp -r` does the same on one thread.
//
//	copybench [-jobs N] SRC DST
//
// DST must not exist. It prints the number of files and bytes copied.
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/transcript-tool/transcript-tool/internal/benchgen"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("copybench", flag.ContinueOnError)
	flags.SetOutput(stderr)
	jobs := flags.Int("jobs", 1, "files copied in parallel")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 2 || *jobs < 1 {
		fmt.Fprintln(stderr, "usage: copybench [-jobs N] SRC DST")
		return 2
	}
	files, bytes, err := copyTree(flags.Arg(0), flags.Arg(1), *jobs)
	if err != nil {
		fmt.Fprintln(stderr, "copybench: error:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d files, %d bytes\n", files, bytes)
	return 0
}

// copyTree creates the folders of src under dst in walk order, then copies
// its regular files on jobs workers, then syncs dst's file system (with
// one syncfs, as migrate does where syncfs stands in for fsyncs).
func copyTree(src, dst string, jobs int) (files int, bytes int64, err error) {
	var rel []string
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(filepath.Join(dst, r), 0o700)
		case d.Type().IsRegular():
			rel = append(rel, r)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	// Opened before the writes, so that their write-back errors reach it.
	syncer, err := safefile.OpenFS(dst)
	if err != nil {
		return 0, 0, err
	}
	if syncer != nil {
		defer syncer.Close()
	}
	sizes, err := benchgen.EachFile(len(rel), jobs, func(i int, buf []byte) (int64, error) {
		return copyFile(filepath.Join(src, rel[i]), filepath.Join(dst, rel[i]), buf)
	})
	if err != nil {
		return 0, 0, err
	}
	for _, n := range sizes {
		bytes += n
	}
	if syncer == nil {
		// No syncfs here: sync everything, as the sync command does.
		unix.Sync()
	} else if err := syncer.Sync(); err != nil {
		return 0, 0, fmt.Errorf("syncfs %s: %w", dst, err)
	}
	return len(rel), bytes, nil
}

// copyFile copies src to the new file dst through buf, with read and write
// (not copy_file_range): migrate writes its output from memory, too.
func copyFile(src, dst string, buf []byte) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	var n int64
	for {
		r, err := in.Read(buf)
		if r > 0 {
			w, werr := out.Write(buf[:r])
			n += int64(w)
			if werr != nil {
				out.Close()
				return n, werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Close()
			return n, fmt.Errorf("read %s: %w", src, err)
		}
	}
	return n, out.Close()
}
