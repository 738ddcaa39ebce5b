package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

// testLegacy: the single-file registry of earlier versions and the files
// named after it are kept at the root, and listed by their kind alone.
func testLegacy(t *testing.T, b store.Backend) {
	reg := store.Handle{Kind: store.Legacy, Name: store.RegistryFile}
	torn := store.Handle{Kind: store.Legacy, Name: store.RegistryFile + ".torn-1"}
	_, err := b.Stat(ctx, reg)
	assert.ErrorIs(t, err, store.ErrNotExist)
	save(t, b, reg, []byte("{}\n"))
	save(t, b, torn, []byte("{"))
	save(t, b, store.Handle{Kind: store.Segment, Name: store.RegistryFile}, []byte("a segment's\n"))
	require.NoError(t, b.Flush(ctx))
	got, err := load(t, b, reg, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(got))
	assert.NotContains(t, b.Path(reg), store.SegmentsDir+"/", "kept at the root")
	assert.Equal(t, []string{store.RegistryFile, torn.Name}, names(t, b, store.Legacy, ""))
	assert.Equal(t, []string{torn.Name}, names(t, b, store.Legacy, torn.Name[:len(store.RegistryFile)+2]))
	assert.Empty(t, names(t, b, store.Legacy, "x"))
	assert.Equal(t, []string{store.RegistryFile}, names(t, b, store.Segment, ""))
	require.NoError(t, b.Remove(ctx, torn))
	require.NoError(t, b.Flush(ctx))
	assert.Equal(t, []string{store.RegistryFile}, names(t, b, store.Legacy, ""))
}

// testOpenFile: store.OpenFile, through the backend's Opener or by loading,
// reads the file as it was when opened, also once it is removed.
func testOpenFile(t *testing.T, b store.Backend) {
	h := store.Handle{Kind: store.Segment, Name: "open.jsonl"}
	_, err := store.OpenFile(ctx, b, h)
	assert.ErrorIs(t, err, store.ErrNotExist)
	save(t, b, h, []byte("0123456789\n"))
	require.NoError(t, b.Flush(ctx))
	f, err := store.OpenFile(ctx, b, h)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, int64(11), f.Stat().Size)
	assert.Equal(t, h.Name, f.Stat().Name)
	require.NoError(t, b.Remove(ctx, h))
	require.NoError(t, b.Flush(ctx))
	buf := make([]byte, 4)
	_, err = f.ReadAt(buf, 3)
	require.NoError(t, err)
	assert.Equal(t, "3456", string(buf))
}

// testAppend: an Appender creates a file once, appends to it in place,
// and what a Sync returned for is there for every reader.
func testAppend(t *testing.T, b store.Backend) {
	a, ok := store.As[store.Appender](b)
	if !ok {
		t.Skip("no Appender")
	}
	h := store.Handle{Kind: store.Segment, Name: "w.jsonl"}
	_, err := a.OpenAppend(ctx, h)
	assert.ErrorIs(t, err, store.ErrNotExist)
	f, err := a.CreateAppend(ctx, h)
	require.NoError(t, err)
	n, err := f.Write([]byte("a\n"))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	_, err = a.CreateAppend(ctx, h)
	assert.ErrorIs(t, err, store.ErrExist)

	g, err := a.OpenAppend(ctx, h)
	require.NoError(t, err)
	fi, err := g.Stat()
	require.NoError(t, err)
	assert.Equal(t, int64(2), fi.Size)
	_, err = g.Write([]byte("b\n"))
	require.NoError(t, err)
	require.NoError(t, g.Sync())
	require.NoError(t, g.Close())
	got, err := load(t, b, h, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "a\nb\n", string(got))
	assert.Equal(t, []string{h.Name}, names(t, b, store.Segment, ""))
	_, err = a.CreateAppend(ctx, store.Handle{Kind: store.Segment, Name: "../x.jsonl"})
	assert.Error(t, err)

	// A file opened to read stops where it was when opened, whatever is
	// appended since: the registry's readers read each file up to there.
	r, err := store.OpenFile(ctx, b, h)
	require.NoError(t, err)
	defer r.Close()
	g, err = a.OpenAppend(ctx, h)
	require.NoError(t, err)
	_, err = g.Write([]byte("c\n"))
	require.NoError(t, err)
	require.NoError(t, g.Sync())
	require.NoError(t, g.Close())
	assert.Equal(t, int64(4), r.Stat().Size)
	fi, err = b.Stat(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, int64(6), fi.Size)
	assert.Equal(t, r.Stat().ID, fi.ID, "the same file")

	// Once removed, it is gone for OpenAppend, and a file created anew
	// under its name is another file.
	require.NoError(t, b.Remove(ctx, h))
	require.NoError(t, b.Flush(ctx))
	_, err = a.OpenAppend(ctx, h)
	assert.ErrorIs(t, err, store.ErrNotExist)
	f, err = a.CreateAppend(ctx, h)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	fi, err = b.Stat(ctx, h)
	require.NoError(t, err)
	assert.Zero(t, fi.Size)
	if fi.ID != 0 {
		assert.NotEqual(t, r.Stat().ID, fi.ID, "the file removed is still open: its ID is not reused")
	}
}

// testLockFile: a FileLocker's lock of a file excludes another until it
// is closed; a file that is not there has none.
func testLockFile(t *testing.T, b store.Backend) {
	l, ok := store.As[store.FileLocker](b)
	if !ok {
		t.Skip("no FileLocker")
	}
	h := store.Handle{Kind: store.Legacy, Name: store.RegistryFile}
	_, err := l.LockFile(ctx, h)
	assert.ErrorIs(t, err, store.ErrNotExist)
	save(t, b, h, []byte("{}\n"))
	require.NoError(t, b.Flush(ctx))
	first, err := l.LockFile(ctx, h)
	require.NoError(t, err)
	var mu sync.Mutex
	released := false
	done := make(chan error)
	go func() {
		second, err := l.LockFile(ctx, h)
		if err == nil {
			mu.Lock()
			if !released {
				err = errors.New("locked while another held the lock")
			}
			mu.Unlock()
			err = errors.Join(err, second.Close())
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	released = true
	mu.Unlock()
	require.NoError(t, first.Close())
	assert.NoError(t, <-done)
}
