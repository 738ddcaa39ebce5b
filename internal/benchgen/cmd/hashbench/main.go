// Command hashbench reads every regular file under the given paths and
// computes its SHA-256, on -jobs workers: the reference scripts/bench.sh
// compares transcript-tool with, since the tool must at least read and
// hash every byte it migrates. It prints the number of files and bytes
// and one digest of the files' digests in path order, so that the work
// cannot be skipped.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/internal/benchgen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("hashbench", flag.ContinueOnError)
	flags.SetOutput(stderr)
	jobs := flags.Int("jobs", 1, "files hashed in parallel")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 || *jobs < 1 {
		fmt.Fprintln(stderr, "usage: hashbench [-jobs N] PATH...")
		return 2
	}
	var files []string
	for _, root := range flags.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(stderr, "hashbench: error:", err)
			return 1
		}
	}
	sums, sizes, err := hashAll(files, *jobs)
	if err != nil {
		fmt.Fprintln(stderr, "hashbench: error:", err)
		return 1
	}
	all := sha256.New()
	var total int64
	for i := range files {
		all.Write(sums[i][:])
		total += sizes[i]
	}
	fmt.Fprintf(stdout, "%d files, %d bytes, SHA-256 of their SHA-256s: %x\n", len(files), total, all.Sum(nil))
	return 0
}

// hashAll returns the SHA-256 and the size of each file, hashed by jobs
// workers that take the files in turn.
func hashAll(files []string, jobs int) ([][sha256.Size]byte, []int64, error) {
	sums := make([][sha256.Size]byte, len(files))
	sizes, err := benchgen.EachFile(len(files), jobs, func(i int, buf []byte) (int64, error) {
		return hashFile(files[i], buf, &sums[i])
	})
	return sums, sizes, err
}

func hashFile(path string, buf []byte, sum *[sha256.Size]byte) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return n, fmt.Errorf("read %s: %w", path, err)
	}
	h.Sum(sum[:0])
	return n, nil
}
