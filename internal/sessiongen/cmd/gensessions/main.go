// Command gensessions writes the generated and hostile test sessions of
// package sessiongen into a directory, testdata/sessions by default:
//
//	go generate ./internal/sessiongen
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/internal/sessiongen"
)

func main() {
	out := flag.String("out", "testdata/sessions", "directory to write the sessions into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gensessions: error:", err)
		os.Exit(1)
	}
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
