// Command gensessions writes the generated and hostile test sessions of
// package sessiongen into a directory, testdata/sessions by default:
//
//	go generate ./internal/sessiongen
//
// With -bigline BYTES it writes instead one transcript with a line of about
// that size to -out, for memory measurements (make memcheck); zstd-
// compressed when -out ends in .zst, as Codex may store a rollout.
//
// With -rollouts N it writes instead N small Codex rollouts into -out,
// rollout-<i>.jsonl.zst, each compressed as one frame that declares a
// zstd window of 2^-window bytes, as zstd --long does: the memory that
// decoding many of them at once takes (make memcheck).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/transcript-tool/transcript-tool/internal/sessiongen"
)

func main() {
	out := flag.String("out", "testdata/sessions", "directory to write the sessions into, or the file with -bigline")
	bigLine := flag.Int("bigline", 0, "write one transcript with a line of about this many bytes to -out")
	rollouts := flag.Int("rollouts", 0, "write this many small compressed Codex rollouts into the directory -out")
	window := flag.Int("window", 27, "with -rollouts, the log2 of the zstd window they declare")
	flag.Parse()
	var err error
	if *rollouts > 0 {
		err = writeRollouts(*out, *rollouts, *window)
	} else if *bigLine > 0 {
		f := sessiongen.BigLine(*bigLine)
		if err = writeFile(*out, f.Data); err == nil {
			fmt.Printf("largest line: %d bytes\n", longestLine(f.Data))
		}
	} else {
		err = write(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensessions: error:", err)
		os.Exit(1)
	}
}

// writeFile writes data to path, compressed if path ends in .zst.
func writeFile(path string, data []byte) error {
	if !strings.HasSuffix(path, ".zst") {
		return os.WriteFile(path, data, 0o644)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w, err := zstd.NewWriter(f)
	if err == nil {
		_, err = w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// longestLine returns the length of the longest line of data, without its
// end of line.
func longestLine(data []byte) int {
	n := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		n = max(n, len(bytes.TrimSuffix(data[:i], []byte("\r"))))
		data = data[min(i+1, len(data)):]
	}
	return n
}

// writeRollouts writes n Codex rollouts of some 150 KB into dir, each one
// zstd frame declaring a window of 2^window bytes.
func writeRollouts(dir string, n, window int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		data := sessiongen.GenerateCodex(sessiongen.Options{Seed: uint64(100 + i), Entries: 20, MinPayload: 16, MaxPayload: 2000}, false)
		name := filepath.Join(dir, fmt.Sprintf("rollout-%d.jsonl.zst", i+1))
		if err := os.WriteFile(name, sessiongen.ZstdFrame(data, window), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range append(sessiongen.Sessions(), sessiongen.Hostile()...) {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
