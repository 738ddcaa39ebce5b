// Command genregistry writes a store whose registry is one segment of N
// synthetic records (see package reggen), for measuring readers:
//
//	go run ./internal/reggen/cmd/genregistry -n 1000000 -out /tmp/million/store
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
)

func main() {
	n := flag.Int("n", 1000000, "number of records")
	out := flag.String("out", "", "store `DIR` to make (must not exist)")
	flag.Parse()
	if err := run(*out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
}

func run(out string, n int) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	dir := filepath.Join(out, "registry")
	if err := os.MkdirAll(filepath.Join(out, "objects"), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "20260101T000000.000000000Z_gen_1_1.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := reggen.Write(f, n); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
