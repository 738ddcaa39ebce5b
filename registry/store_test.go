package registry

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// newStore returns a store in a directory that does not exist yet.
func newStore(t *testing.T) *Store {
	t.Helper()
	return mustOpen(t, filepath.Join(t.TempDir(), "artifacts"))
}

// newFaulty returns a Store in a new folder whose backend asks hook
// before each call (see package faulty).
func newFaulty(t *testing.T, hook func(faulty.Call) error) *Store {
	t.Helper()
	return New(faulty.New(local.New(filepath.Join(t.TempDir(), "artifacts")), hook))
}

// mustOpen opens the store in dir.
func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(local.Open, dir)
	require.NoError(t, err)
	return s
}

// mustPut stores data and checks that it was created.
func mustPut(t *testing.T, s *Store, data []byte) store.Digest {
	t.Helper()
	d, created, err := s.Put(context.Background(), data)
	require.NoError(t, err)
	require.True(t, created)
	return d
}

// TestModes checks that the registry's files are private whatever the
// umask (the objects' are checked by store/local's TestModes). It sets the
// process umask, so it must not run in parallel with other tests.
func TestModes(t *testing.T) {
	for _, umask := range []int{0, 0o277} {
		t.Run(fmt.Sprintf("%04o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			testModes(t)
		})
	}
}

func testModes(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	d := mustPut(t, s, []byte("private"))
	require.NoError(t, s.Append(ctx, []Record{{Hash: d.String(), Site: "x"}}))
	seg := s.SegmentPath()
	fi, err := os.Stat(seg)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode(), "%s", seg)
	// A torn tail makes a compaction write a file beside the segment.
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"torn`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = s.Compact(context.Background(), func(Record) bool { return true })
	require.NoError(t, err)
	torn, err := filepath.Glob(seg + ".torn-*")
	require.NoError(t, err)
	require.Len(t, torn, 1)
	compacted, err := filepath.Glob(filepath.Join(s.Dir(), store.SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, compacted, 1)
	require.NoError(t, s.Append(ctx, []Record{{Hash: d.String(), Site: "y"}}))

	for _, dir := range []string{s.Dir(), filepath.Join(s.Dir(), store.SegmentsDir)} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, fs.ModeDir|0o700, fi.Mode(), "%s", dir)
	}
	for _, file := range []string{s.SegmentPath(), compacted[0], torn[0]} {
		fi, err := os.Stat(file)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode(), "%s", file)
	}
	require.NoError(t, s.Release())
}

// TestAppendHoldsLock: a record is appended under the store's shared lock
// too (see store/local's TestLockExcludesWriters for the lock itself).
func TestAppendHoldsLock(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(context.Background(), []Record{{Hash: store.Sum([]byte("x")).String(), CreatedAt: "now"}}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	other, err := Open(local.Open, s.Dir())
	require.NoError(t, err)
	_, err = other.LockExclusive(ctx, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, s.Release())
}
