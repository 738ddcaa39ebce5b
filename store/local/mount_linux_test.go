package local

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/store"
)

// TestSyncFSNotAcrossMounts: a shard on another file system than the
// store's root (here a tmpfs mounted on it; root only) is not covered by
// a syncfs of the root's: the store fsyncs each object instead.
func TestSyncFSNotAcrossMounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	data := []byte("mounted")
	d := store.Sum(data)
	shard := filepath.Dir(New(dir).Path(store.ObjectHandle(d)))
	require.NoError(t, os.MkdirAll(shard, 0o700))
	if err := syscall.Mount("tmpfs", shard, "tmpfs", 0, "mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer syscall.Unmount(shard, 0)
	l := New(dir)
	defer l.Release()
	s := store.New(l)
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
	t.Cleanup(func() { safefile.Hook = nil })
	for _, b := range [][]byte{data, []byte("other 1"), []byte("other 2")} {
		_, _, err := s.PutSum(ctx, store.Sum(b), b)
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(ctx))
	assert.NotContains(t, kinds, safefile.KindSyncFS)
	assert.Contains(t, kinds, safefile.KindSync)
	assert.NoError(t, s.Verify(ctx, d))
}
