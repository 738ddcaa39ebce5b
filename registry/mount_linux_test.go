package registry

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// TestSyncFSNotAcrossMounts: a shard on another file system than the
// store's root (here a tmpfs mounted on it; root only) is not covered by
// a syncfs of the root's: the store fsyncs each object instead.
func TestSyncFSNotAcrossMounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	data := []byte("mounted")
	d := Sum(data)
	shard := filepath.Dir(Open(dir).Path(d))
	require.NoError(t, os.MkdirAll(shard, 0o700))
	if err := syscall.Mount("tmpfs", shard, "tmpfs", 0, "mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(shard, 0)
	s := Open(dir)
	var (
		mu    sync.Mutex // the fsyncs run in parallel
		kinds []safefile.Kind
	)
	safefile.Hook = func(op safefile.Op) error {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, op.Kind)
		return nil
	}
	defer func() { safefile.Hook = nil }()
	for _, b := range [][]byte{data, []byte("other 1"), []byte("other 2")} {
		_, _, err := s.PutSum(Sum(b), b)
		require.NoError(t, err)
	}
	require.NoError(t, s.Sync())
	assert.NotContains(t, kinds, safefile.KindSyncFS)
	assert.Contains(t, kinds, safefile.KindSync)
	assert.NoError(t, s.Verify(d))
}
