package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/mem"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return local.New(t.TempDir()) })
}

// TestConformanceThroughFaulty: the fault injector passes every call on,
// those of the optional interfaces too.
func TestConformanceThroughFaulty(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return faulty.New(local.New(t.TempDir()), nil) })
}

func TestLocker(t *testing.T) {
	storetest.RunLocker(t, func(t *testing.T) func() store.Backend {
		dir := filepath.Join(t.TempDir(), "artifacts")
		return func() store.Backend { return local.New(dir) }
	})
}

// TestFaultyWrapsCapabilities: store.As finds an optional interface
// through the fault injector only where the wrapped backend has it, and
// then the injector sees its calls and those of the files it opens.
func TestFaultyWrapsCapabilities(t *testing.T) {
	ctx := context.Background()
	_, ok := store.As[store.FileLocker](faulty.New(mem.New(), nil))
	assert.False(t, ok, "a FileLocker over a backend that has none")

	f := faulty.New(local.New(t.TempDir()), nil)
	a, ok := store.As[store.Appender](f)
	require.True(t, ok)
	h := store.Handle{Kind: store.Segment, Name: "w.jsonl"}
	af, err := a.CreateAppend(ctx, h)
	require.NoError(t, err)
	_, err = af.Write([]byte("x\n"))
	require.NoError(t, err)
	assert.Equal(t, []faulty.Loss{{Handle: h, Whole: true}}, f.Undurable(), "created, never synced")
	require.NoError(t, af.Sync())
	require.NoError(t, af.Close())
	assert.Empty(t, f.Undurable())
	rf, err := store.OpenFile(ctx, f, h)
	require.NoError(t, err)
	require.NoError(t, rf.Close())
	_, ok = store.As[store.Locker](f)
	assert.True(t, ok, "the lock is passed as it is")

	var methods []faulty.Method
	for _, c := range f.Calls() {
		methods = append(methods, c.Method)
	}
	assert.Equal(t, []faulty.Method{faulty.CreateAppend, faulty.Write, faulty.Sync, faulty.Open}, methods)
}
