package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

var ctx = context.Background()

// newStore returns a store in a folder that does not exist yet, and its
// backend.
func newStore(t *testing.T) (*store.Store, *Local) {
	t.Helper()
	l := New(filepath.Join(t.TempDir(), "artifacts"))
	t.Cleanup(func() { _ = l.Release() })
	return store.New(l), l
}

// mustPut stores data, checks that it was created, and flushes it.
func mustPut(t *testing.T, s *store.Store, data []byte) store.Digest {
	t.Helper()
	d, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, s.Flush(ctx, d))
	return d
}

// shardEntries lists the names in d's shard directory.
func shardEntries(t *testing.T, s *store.Store, d store.Digest) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(s.Path(d)))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func randomBytes(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestObjectFile: an object is a file named by the SHA-256 of its bytes
// (sha256sum on it prints its name), in the shard of its first two hex
// characters, with no temporary file left beside it.
func TestObjectFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"text", []byte("hello, world\n")},
		{"binary with NUL", []byte("\x00\x01\xff\xfe\x00")},
		{"1 MiB", randomBytes(1 << 20)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, l := newStore(t)
			d := mustPut(t, s, tt.data)
			path := s.Path(d)
			abs, err := filepath.Abs(l.Dir())
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(abs, store.ObjectsDir, d.String()[:2], d.String()), path)
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			sum := sha256.Sum256(file)
			assert.Equal(t, filepath.Base(path), hex.EncodeToString(sum[:]))
			assert.Equal(t, filepath.Base(path)[:2], filepath.Base(filepath.Dir(path)))
			assert.Equal(t, []string{d.String()}, shardEntries(t, s, d), "temporary files left behind")
		})
	}
}

// TestPutTwice: an intact object found by Put is not rewritten.
func TestPutTwice(t *testing.T) {
	s, l := newStore(t)
	data := []byte("same payload")
	d := mustPut(t, s, data)
	before, err := os.Stat(s.Path(d))
	require.NoError(t, err)

	// This Store, which remembers it wrote the object, then a later run's.
	for _, s := range []*store.Store{s, store.New(New(l.Dir()))} {
		_, created, err := s.Put(ctx, data)
		require.NoError(t, err)
		assert.False(t, created, "an intact object is not created again")
		require.NoError(t, s.Flush(ctx, d))
		after, err := os.Stat(s.Path(d))
		require.NoError(t, err)
		assert.True(t, os.SameFile(before, after), "the intact object was rewritten")
		assert.Equal(t, []string{d.String()}, shardEntries(t, s, d))
		require.NoError(t, s.Backend().(*Local).Release())
	}
}

// TestPutConcurrentLeavesNoTemps: workers storing the same payload at once
// leave one file, and no temporary one.
func TestPutConcurrentLeavesNoTemps(t *testing.T) {
	s, _ := newStore(t)
	data := []byte("raced payload")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = s.Put(ctx, data) })
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "goroutine %d", i)
	}
	d := store.Sum(data)
	require.NoError(t, s.Flush(ctx, d))
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, []string{d.String()}, shardEntries(t, s, d), "temporary files left behind")
}

// TestCorruptObjectReplaced: an object damaged in place is reported with
// its path, and Put replaces it, leaving only the object in its shard.
func TestCorruptObjectReplaced(t *testing.T) {
	s, _ := newStore(t)
	data := []byte("the original artifact bytes")
	d := mustPut(t, s, data)
	path := s.Path(d)
	damaged := bytes.Clone(data)
	damaged[3] ^= 0x10
	require.NoError(t, os.WriteFile(path, damaged, 0o600))

	_, err := s.Get(ctx, d)
	assert.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), path)
	_, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created, "Put replaces a corrupt object")
	require.NoError(t, s.Flush(ctx, d))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, []string{d.String()}, shardEntries(t, s, d))
}

// TestReadCreatesNothing: reading a store that does not exist creates no
// folder.
func TestReadCreatesNothing(t *testing.T) {
	s, l := newStore(t)
	_, err := s.Get(ctx, store.Sum(nil))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Resolve(ctx, "abcd")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.Each(ctx, func(store.Digest, store.FileInfo) error { return nil },
		func(string, error) { t.Error("bad entry in an empty store") }))
	_, err = os.Stat(l.Dir())
	assert.ErrorIs(t, err, fs.ErrNotExist, "reading created the store")
}

// TestFlushReportsErrors: a Flush that cannot make what was stored
// durable says so.
func TestFlushReportsErrors(t *testing.T) {
	s, l := newStore(t)
	data := []byte("x")
	d, _, err := s.PutSum(ctx, store.Sum(data), data) // Put would flush it
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(l.Dir()))
	assert.Error(t, s.Flush(ctx, d), "fsync of a removed directory succeeded")
}

// TestDepth: Flush fsyncs a shard before objects/, and objects/ before
// the store's folder.
func TestDepth(t *testing.T) {
	for _, c := range []struct {
		deeper, shallower string
	}{
		{"/s/objects/ab", "/s/objects"},
		{"/s/objects", "/s"},
		{"/s", "/"},
		{"s/objects/ab", "s/objects"},
		{"s/objects/ab/", "s/objects"},
	} {
		assert.Greater(t, depth(c.deeper), depth(c.shallower), "%s, %s", c.deeper, c.shallower)
	}
	assert.Equal(t, depth("/s/objects/ab"), depth("/s/registry/cd"))
}

// TestModes checks that the store is private whatever the umask. It sets
// the process umask, so it must not run in parallel with other tests.
func TestModes(t *testing.T) {
	for _, umask := range []int{0, 0o277} {
		t.Run(fmt.Sprintf("%04o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
			s, l := newStore(t)
			d := mustPut(t, s, []byte("private"))
			seg := store.Handle{Kind: store.Segment, Name: "w.jsonl"}
			require.NoError(t, l.Save(ctx, seg, func(w io.Writer) error {
				_, err := w.Write([]byte("{}\n"))
				return err
			}))
			require.NoError(t, l.Flush(ctx, seg))

			for _, dir := range []string{l.Dir(), filepath.Join(l.Dir(), store.ObjectsDir), filepath.Dir(s.Path(d)), filepath.Join(l.Dir(), store.SegmentsDir)} {
				fi, err := os.Stat(dir)
				require.NoError(t, err)
				assert.Equal(t, fs.ModeDir|dirPerm, fi.Mode(), "%s", dir)
			}
			for _, file := range []string{s.Path(d), l.Path(seg), filepath.Join(l.Dir(), store.LockFile)} {
				fi, err := os.Stat(file)
				require.NoError(t, err)
				assert.Equal(t, fs.FileMode(filePerm), fi.Mode(), "%s", file)
			}
		})
	}
}

// TestResolveSkipsStrays: what stands in a shard and is no object, a
// directory named like one or a temporary file, is no candidate beside
// objects; alone, it is resolved, so that reading it says what is wrong.
func TestResolveSkipsStrays(t *testing.T) {
	s, _ := newStore(t)
	a, b := storetest.Twins()
	da, db := mustPut(t, s, a), mustPut(t, s, b)
	shared := da.String()[:store.MinPrefix]
	shard := filepath.Dir(s.Path(da))
	stray := shared + strings.Repeat("0", 60)
	require.NotContains(t, []string{da.String(), db.String()}, stray)
	require.NoError(t, os.Mkdir(filepath.Join(shard, stray), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(shard, "."+shared+".tmp"), nil, 0o600))

	_, err := s.Resolve(ctx, shared)
	var amb *store.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.ElementsMatch(t, []string{da.String(), db.String()}, amb.Candidates)

	got, err := s.Resolve(ctx, stray[:40])
	require.NoError(t, err)
	assert.Equal(t, stray, got.String())
	_, err = s.Get(ctx, got)
	assert.ErrorIs(t, err, store.ErrCorrupt, "a directory is no artifact")
}

// TestPutFreshens: an object found by Put has its modification time set
// to now, so that a collector counting a grace period counts from this
// use; one that vanished is written again.
func TestPutFreshens(t *testing.T) {
	s, l := newStore(t)
	data := []byte("deduplicated")
	d := mustPut(t, s, data)
	old := time.Now().Add(-3 * time.Hour)
	require.NoError(t, os.Chtimes(s.Path(d), old, old))

	// A later run: this Store has not checked the object yet.
	s = store.New(New(l.Dir()))
	_, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	assert.False(t, created)
	fi, err := os.Stat(s.Path(d))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute)
	require.NoError(t, s.Backend().(*Local).Release())

	require.NoError(t, os.Remove(s.Path(d)))
	s = store.New(New(l.Dir()))
	_, created, err = s.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created)
	require.NoError(t, s.Flush(ctx, d))
	require.NoError(t, s.Verify(ctx, d))
	require.NoError(t, s.Backend().(*Local).Release())
}

// sameFolder returns n payloads whose objects share a folder.
func sameFolder(n int) [][]byte {
	var out [][]byte
	for i := 0; len(out) < n; i++ {
		data := fmt.Appendf(nil, "payload %d", i)
		if store.Sum(data)[0] == 0x2a {
			out = append(out, data)
		}
	}
	return out
}

// TestNewObjectsNotLookedFor: in an object folder the store's Local made,
// a Store saves an object it never met without reading the folder first;
// in one that was there, or once another writer has put the object, the
// object is looked for, or written again whole.
func TestNewObjectsNotLookedFor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	f := faulty.New(New(dir), nil)
	s := store.New(f)
	payloads := sameFolder(4)
	loads := func(f *faulty.Backend) int {
		n := 0
		for _, c := range f.Calls() {
			if c.Method == faulty.Load {
				n++
			}
		}
		return n
	}
	for _, data := range payloads[:3] {
		_, created, err := s.Put(ctx, data)
		require.NoError(t, err)
		assert.True(t, created)
	}
	assert.Equal(t, 1, loads(f), "only the first object, before its folder was made, is looked for")

	// Another run: the folder is there, so every object is looked for.
	other := faulty.New(New(dir), nil)
	for _, data := range payloads[:3] {
		_, created, err := store.New(other).Put(ctx, data)
		require.NoError(t, err)
		assert.False(t, created)
	}
	assert.Equal(t, 3, loads(other))

	// An object another writer put in the first run's folder is saved
	// again by the first run, whole.
	d, created, err := store.New(other).Put(ctx, payloads[3])
	require.NoError(t, err)
	require.True(t, created)
	_, created, err = s.Put(ctx, payloads[3])
	require.NoError(t, err)
	assert.True(t, created, "not looked for: the folder was the first run's")
	got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(store.Key(store.ObjectHandle(d)))))
	require.NoError(t, err)
	assert.Equal(t, payloads[3], got)

	// A second Store over the first run's Local does not take the
	// objects the first saved for new.
	_, created, err = store.New(f).Put(ctx, payloads[0])
	require.NoError(t, err)
	assert.False(t, created)
}
