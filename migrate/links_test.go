package migrate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestHardLinks: a transcript under three names (hard links) is one
// file. Found three times or named three times, it is migrated once,
// with one and with two workers: in place it is refused, its other names
// counted, and left one file as it was, also by rehydrate --in-place;
// with --out it is written once.
func TestHardLinks(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		for _, out := range []bool{false, true} {
			t.Run(fmt.Sprintf("jobs=%d out=%v", jobs, out), func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "src")
				names := []string{filepath.Join(src, "a.jsonl"), filepath.Join(src, "b.jsonl"), filepath.Join(src, "c.jsonl")}
				orig := testsession.Pi("s", 2, payload)
				writeFile(t, names[0], orig, 0o644)
				for _, n := range names[1:] {
					require.NoError(t, os.Link(names[0], n))
				}
				opts := migrate.Options{Jobs: jobs}
				if out {
					opts.Out = filepath.Join(dir, "out")
				}
				for _, paths := range [][]string{{src}, names} {
					sum := migrateRun(t, opts, paths...)

					require.Len(t, sum.Results, 1, "%v", paths)
					r := sum.Results[0]
					assert.Equal(t, names[0], r.Path)
					if out {
						require.NoError(t, r.Err)
						entries, err := os.ReadDir(opts.Out)
						require.NoError(t, err)
						var files []string
						for _, e := range entries {
							if e.Type().IsRegular() {
								files = append(files, e.Name())
							}
						}
						assert.Equal(t, []string{"a.jsonl"}, files)
						assert.Equal(t, orig, rehydrate(t, filepath.Join(opts.Out, "a.jsonl"), ""))
					} else {
						assert.Equal(t, migrate.StatusFailed, r.Status)
						assert.Contains(t, r.Message, "has 2 other names (hard links)")
						assert.Contains(t, r.Message, "--out")
					}
					for _, n := range names {
						assert.Equal(t, orig, readFile(t, n), n)
						assert.Equal(t, inode(t, names[0]), inode(t, n), "%s is still the same file", n)
					}
				}
				inputs, err := session.Collect(names)
				require.NoError(t, err)
				sum := migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, InPlace: true, Jobs: jobs})
				require.Len(t, sum.Results, 1)
				assert.Contains(t, sum.Results[0].Message, "has 2 other names (hard links)")
			})
		}
	}
}

// inode returns the inode number of the file at path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}
