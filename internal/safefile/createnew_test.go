package safefile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// TestCreateNew: the file has no name in its directory until Commit, then
// has its final one with its mode; it replaces a file that is there; an
// aborted one leaves nothing.
func TestCreateNew(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "obj")
	entries := func() []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	f, err := safefile.CreateNew(name, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	if len(entries()) != 0 {
		t.Fatalf("before Commit the directory holds %v", entries())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(); len(got) != 1 || got[0] != "obj" {
		t.Fatalf("after Commit the directory holds %v", got)
	}
	fi, err := os.Stat(name)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stat: %v, mode %v", err, fi.Mode())
	}

	g, err := safefile.CreateNew(name, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("second"))
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(name); string(data) != "second" {
		t.Fatalf("replaced file holds %q", data)
	}
	if got := entries(); len(got) != 1 {
		t.Fatalf("after replacing, the directory holds %v", got)
	}

	h, err := safefile.CreateNew(filepath.Join(dir, "other"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte("never"))
	h.Abort()
	if got := entries(); len(got) != 1 {
		t.Fatalf("after Abort, the directory holds %v", got)
	}
}
