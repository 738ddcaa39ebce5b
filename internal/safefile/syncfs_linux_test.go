package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKernelAtLeast(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    bool
	}{
		{"5.8.0", true},
		{"5.7.19", false},
		{"6.1.0-13-amd64", true},
		{"5.10-rc1", true},
		{"5.4.0-150-generic", false},
		{"4.19.0", false},
		{"10.0", true},
		{"5", false},
		{"", false},
		{"x.y", false},
		{"5.8rc", true},
	} {
		if got := kernelAtLeast(tt.release, 5, 8); got != tt.want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", tt.release, got, tt.want)
		}
	}
}

// TestSynced: after a syncfs, a file checked with Synced is committed
// without another fsync; Hook sees the syncfs and the check.
func TestSynced(t *testing.T) {
	dir := t.TempDir()
	fs, err := OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fs == nil {
		t.Skip("syncfs does not stand in for fsync here")
	}
	defer fs.Close()
	name := filepath.Join(dir, "obj")
	f, err := CreateNew(name, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("bytes")); err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	Hook = func(op Op) error { kinds = append(kinds, op.Kind); return nil }
	defer func() { Hook = nil }()
	if err := fs.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Synced(); err != nil {
		t.Fatal(err)
	}
	if err := f.CommitNoDirSync(); err != nil {
		t.Fatal(err)
	}
	want := []Kind{KindSyncFS, KindSync, KindRename}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Errorf("operations %v, want %v", kinds, want)
	}
	if data, err := os.ReadFile(name); err != nil || string(data) != "bytes" {
		t.Errorf("read back %q, %v", data, err)
	}
	if err := f.Synced(); err == nil {
		t.Error("Synced after Commit did not fail")
	}
}
