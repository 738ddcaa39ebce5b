// Package storetest is the conformance suite every store.Backend passes:
// what Save, Load, Stat, List, Remove, Touch, Flush and Discard promise in
// store.Backend's docs, what the optional interfaces that read and write
// files promise (store.Opener, store.Appender, store.FileLocker) where the
// backend has them, and content addressing (store.Store) over the
// backend. A backend's own tests call Run with a constructor of empty
// backends, and again with the backend wrapped in store/faulty.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/transcript-tool/transcript-tool/store"
)

// Run runs the suite; newBackend returns an empty backend for each test.
func Run(t *testing.T, newBackend func(t *testing.T) store.Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b store.Backend)
	}{
		{"SaveLoad", testSaveLoad},
		{"Missing", testMissing},
		{"Ranges", testRanges},
		{"FailedWrite", testFailedWrite},
		{"Replace", testReplace},
		{"List", testList},
		{"Remove", testRemove},
		{"Touch", testTouch},
		{"InvalidNames", testInvalidNames},
		{"ConcurrentSaves", testConcurrentSaves},
		{"Discard", testDiscard},
		{"Legacy", testLegacy},
		{"OpenFile", testOpenFile},
		{"Append", testAppend},
		{"LockFile", testLockFile},
		{"StorePutGet", testStorePutGet},
		{"StoreCorrupt", testStoreCorrupt},
		{"StoreStream", testStoreStream},
		{"StoreResolve", testStoreResolve},
		{"StorePayloads", testStorePayloads},
		{"StorePutSum", testStorePutSum},
		{"StoreMissing", testStoreMissing},
		{"StoreCorruptions", testStoreCorruptions},
		{"StoreOpenVerifies", testStoreOpenVerifies},
		{"StoreConcurrentPuts", testStoreConcurrentPuts},
		{"StoreChecksOncePerRun", testStoreChecksOncePerRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newBackend(t)) })
	}
}

var ctx = context.Background()

func save(t *testing.T, b store.Backend, h store.Handle, data []byte) {
	t.Helper()
	require.NoError(t, b.Save(ctx, h, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}))
}

func load(t *testing.T, b store.Backend, h store.Handle, offset, length int64) ([]byte, error) {
	t.Helper()
	rc, err := b.Load(ctx, h, offset, length)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func obj(data string) (store.Handle, []byte) {
	return store.ObjectHandle(store.Sum([]byte(data))), []byte(data)
}

func testSaveLoad(t *testing.T, b store.Backend) {
	h, data := obj("hello, store")
	save(t, b, h, data)
	require.NoError(t, b.Flush(ctx, h))
	got, err := load(t, b, h, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	fi, err := b.Stat(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), fi.Size)
	assert.Equal(t, h.Name, fi.Name)
	assert.Contains(t, b.Path(h), h.Name, "the path names the object")
	assert.NotEmpty(t, b.Location())

	// Readable before Flush too, by the same backend.
	h2, data2 := obj("read before flush")
	save(t, b, h2, data2)
	got, err = load(t, b, h2, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, data2, got)

	seg := store.Handle{Kind: store.Segment, Name: "w1.jsonl"}
	save(t, b, seg, []byte("{}\n"))
	require.NoError(t, b.Flush(ctx))
	got, err = load(t, b, seg, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(got))
}

func testMissing(t *testing.T, b store.Backend) {
	h, _ := obj("never saved")
	_, err := b.Load(ctx, h, 0, 0)
	assert.ErrorIs(t, err, store.ErrNotExist)
	_, err = b.Stat(ctx, h)
	assert.ErrorIs(t, err, store.ErrNotExist)
	assert.ErrorIs(t, b.Touch(ctx, h), store.ErrNotExist)
	_, err = b.Load(ctx, store.Handle{Kind: store.Segment, Name: "none.jsonl"}, 0, 0)
	assert.ErrorIs(t, err, store.ErrNotExist)
}

func testRanges(t *testing.T, b store.Backend) {
	h, data := obj("0123456789abcdefghij")
	save(t, b, h, data)
	require.NoError(t, b.Flush(ctx))
	for _, c := range []struct {
		offset, length int64
		want           string
	}{
		{0, 0, string(data)},
		{5, 0, string(data[5:])},
		{5, 3, "567"},
		{0, 1, "0"},
		{18, 10, "ij"},
		{19, 1, "j"},
	} {
		got, err := load(t, b, h, c.offset, c.length)
		require.NoError(t, err, "offset %d length %d", c.offset, c.length)
		assert.Equal(t, c.want, string(got), "offset %d length %d", c.offset, c.length)
	}
}

func testFailedWrite(t *testing.T, b store.Backend) {
	h, data := obj("half written")
	boom := errors.New("boom")
	err := b.Save(ctx, h, func(w io.Writer) error {
		_, _ = w.Write(data[:4])
		return boom
	})
	assert.ErrorIs(t, err, boom)
	require.NoError(t, b.Flush(ctx))
	_, err = load(t, b, h, 0, 0)
	assert.ErrorIs(t, err, store.ErrNotExist, "nothing of a failed Save is left")
	n := 0
	require.NoError(t, b.List(ctx, store.Object, "", func(fi store.FileInfo) error { n++; return nil }))
	assert.Zero(t, n, "a failed Save lists nothing")
}

func testReplace(t *testing.T, b store.Backend) {
	h := store.Handle{Kind: store.Segment, Name: "seg.jsonl"}
	save(t, b, h, []byte("first\n"))
	require.NoError(t, b.Flush(ctx))
	save(t, b, h, []byte("second, longer\n"))
	require.NoError(t, b.Flush(ctx))
	got, err := load(t, b, h, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "second, longer\n", string(got))
}

func names(t *testing.T, b store.Backend, k store.Kind, prefix string) []string {
	t.Helper()
	var out []string
	require.NoError(t, b.List(ctx, k, prefix, func(fi store.FileInfo) error {
		require.NoError(t, fi.Bad, "a store written only by the backend has nothing bad")
		out = append(out, fi.Name)
		return nil
	}))
	sort.Strings(out)
	return out
}

func testList(t *testing.T, b store.Backend) {
	var all []string
	for i := 0; i < 40; i++ {
		h, data := obj(fmt.Sprint("object ", i))
		save(t, b, h, data)
		all = append(all, h.Name)
	}
	save(t, b, store.Handle{Kind: store.Segment, Name: "a.jsonl"}, []byte("a\n"))
	save(t, b, store.Handle{Kind: store.Segment, Name: "b.jsonl"}, []byte("b\n"))
	require.NoError(t, b.Flush(ctx))
	sort.Strings(all)
	assert.Equal(t, all, names(t, b, store.Object, ""))
	assert.Equal(t, []string{"a.jsonl", "b.jsonl"}, names(t, b, store.Segment, ""))
	for _, prefix := range []string{all[0][:1], all[0][:2], all[0][:5], all[0]} {
		var want []string
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		assert.Equal(t, want, names(t, b, store.Object, prefix), "prefix %s", prefix)
	}
	assert.Empty(t, names(t, b, store.Object, "zz"))
	var sizes []int64
	require.NoError(t, b.List(ctx, store.Segment, "a", func(fi store.FileInfo) error {
		sizes = append(sizes, fi.Size)
		return nil
	}))
	assert.Equal(t, []int64{2}, sizes)
	stop := errors.New("stop")
	assert.ErrorIs(t, b.List(ctx, store.Object, "", func(store.FileInfo) error { return stop }), stop,
		"fn's error ends the listing and is returned")
}

func testRemove(t *testing.T, b store.Backend) {
	h, data := obj("to be removed")
	save(t, b, h, data)
	require.NoError(t, b.Flush(ctx))
	require.NoError(t, b.Remove(ctx, h))
	require.NoError(t, b.Flush(ctx))
	_, err := load(t, b, h, 0, 0)
	assert.ErrorIs(t, err, store.ErrNotExist)
	assert.Empty(t, names(t, b, store.Object, ""))
	assert.NoError(t, b.Remove(ctx, h), "removing what is gone is no error")
}

func testTouch(t *testing.T, b store.Backend) {
	h, data := obj("touched")
	save(t, b, h, data)
	require.NoError(t, b.Flush(ctx))
	before, err := b.Stat(ctx, h)
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, b.Touch(ctx, h))
	require.NoError(t, b.Flush(ctx, h))
	after, err := b.Stat(ctx, h)
	require.NoError(t, err)
	assert.True(t, after.ModTime.After(before.ModTime), "Touch moves the modification time on: %v, then %v", before.ModTime, after.ModTime)
	got, err := load(t, b, h, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, data, got, "Touch changes no byte")
}

func testInvalidNames(t *testing.T, b store.Backend) {
	for _, h := range []store.Handle{
		{Kind: store.Object, Name: "../../etc/passwd"},
		{Kind: store.Object, Name: strings.Repeat("A", 64)},
		{Kind: store.Segment, Name: "../escape.jsonl"},
		{Kind: store.Segment, Name: "a/b.jsonl"},
		{Kind: store.Segment, Name: ""},
		{Kind: store.Segment, Name: ".hidden.jsonl"},
		{Kind: store.Legacy, Name: store.LockFile},
		{Kind: store.Legacy, Name: store.ObjectsDir},
		{Kind: store.Legacy, Name: "../" + store.RegistryFile},
	} {
		assert.Error(t, b.Save(ctx, h, func(w io.Writer) error { return nil }), "%q", h.Name)
		_, err := b.Load(ctx, h, 0, 0)
		assert.Error(t, err, "%q", h.Name)
		assert.Error(t, b.Remove(ctx, h), "%q", h.Name)
	}
}

func testConcurrentSaves(t *testing.T, b store.Backend) {
	h, data := obj(strings.Repeat("the same payload ", 4096))
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.Save(ctx, h, func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, b.Flush(ctx, h))
	got, err := load(t, b, h, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, []string{h.Name}, names(t, b, store.Object, ""))
}

func testDiscard(t *testing.T, b store.Backend) {
	h, data := obj("saved, then discarded")
	save(t, b, h, data)
	b.Discard()
	require.NoError(t, b.Flush(ctx))
	got, err := load(t, b, h, 0, 0)
	if err != nil {
		assert.ErrorIs(t, err, store.ErrNotExist)
	} else {
		assert.Equal(t, data, got, "a file Discard leaves is whole")
	}
}

func testStorePutGet(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := []byte("an artifact's bytes")
	d, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, store.Sum(data), d)
	_, created, err = s.Put(ctx, data)
	require.NoError(t, err)
	assert.False(t, created, "the second Put finds it")
	require.NoError(t, s.Flush(ctx, d))
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	size, err := s.Size(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), size)
	require.NoError(t, s.Verify(ctx, d))

	// A second Store over the same backend (another run) finds it too.
	_, created, err = store.New(b).Put(ctx, data)
	require.NoError(t, err)
	assert.False(t, created)

	n := 0
	require.NoError(t, s.Each(ctx, func(got store.Digest, fi store.FileInfo) error {
		assert.Equal(t, d, got)
		assert.Equal(t, int64(len(data)), fi.Size)
		n++
		return nil
	}, func(name string, why error) { t.Errorf("bad object %s: %v", name, why) }))
	assert.Equal(t, 1, n)

	require.NoError(t, s.Remove(ctx, d))
	require.NoError(t, s.Flush(ctx))
	_, err = s.Get(ctx, d)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Size(ctx, d)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func testStoreCorrupt(t *testing.T, b store.Backend) {
	data := []byte("bytes that will be damaged")
	d := store.Sum(data)
	save(t, b, store.ObjectHandle(d), []byte("bytes that were damaged!!"))
	require.NoError(t, b.Flush(ctx))
	s := store.New(b)
	_, err := s.Get(ctx, d)
	assert.ErrorIs(t, err, store.ErrCorrupt)
	assert.ErrorIs(t, s.Verify(ctx, d), store.ErrCorrupt)
	rc, err := s.Open(ctx, d)
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	rc.Close()
	assert.ErrorIs(t, err, store.ErrCorrupt, "Open's reader fails at the end")

	_, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created, "Put replaces a damaged object")
	require.NoError(t, s.Flush(ctx, d))
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
}

func testStoreStream(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := bytes.Repeat([]byte("streamed "), 100000)
	d, created, err := s.PutStream(ctx, store.Sum(data), func(w io.Writer) error {
		for i := 0; i < len(data); i += 4096 {
			if _, err := w.Write(data[i:min(i+4096, len(data))]); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, created)
	require.NoError(t, s.Flush(ctx, d))
	rc, err := s.Open(ctx, d)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	assert.Equal(t, data, got)

	part, err := s.OpenRange(ctx, d, 9, 9)
	require.NoError(t, err)
	got, err = io.ReadAll(part)
	part.Close()
	require.NoError(t, err)
	assert.Equal(t, "streamed ", string(got))

	wrong := store.Sum([]byte("other bytes"))
	_, _, err = s.PutStream(ctx, wrong, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	assert.ErrorIs(t, err, store.ErrCorrupt, "bytes that do not hash to the digest are refused")
	require.NoError(t, s.Flush(ctx))
	_, err = s.Get(ctx, wrong)
	assert.ErrorIs(t, err, store.ErrNotFound, "and nothing is stored")
}

// Twins returns two payloads whose digests share their first
// store.MinPrefix hex characters, found by hashing, not by storing
// thousands.
func Twins() (a, b []byte) {
	byPrefix := map[string][]byte{}
	for i := 0; ; i++ {
		data := []byte(fmt.Sprint("twin ", i))
		p := store.Sum(data).String()[:store.MinPrefix]
		if other, ok := byPrefix[p]; ok {
			return other, data
		}
		byPrefix[p] = data
	}
}

func testStoreResolve(t *testing.T, b store.Backend) {
	s := store.New(b)
	for i := 0; i < 30; i++ {
		_, _, err := s.Put(ctx, []byte(fmt.Sprint("artifact ", i)))
		require.NoError(t, err)
	}
	a, bb := Twins()
	da, db := store.Sum(a), store.Sum(bb)
	for _, data := range [][]byte{a, bb} {
		_, _, err := s.Put(ctx, data)
		require.NoError(t, err)
	}
	c, _, err := s.Put(ctx, []byte("lonely"))
	require.NoError(t, err)
	require.NoError(t, s.Flush(ctx))
	shared := da.String()[:store.MinPrefix]

	// The longest prefix the twins share, plus one character, is unique.
	common := 0
	for common < 64 && da.String()[common] == db.String()[common] {
		common++
	}
	for _, tt := range []struct {
		name string
		id   string
		want store.Digest
	}{
		{"full id", c.String(), c},
		{"full id of a twin", da.String(), da},
		{"unique short prefix", c.String()[:store.MinPrefix], c},
		{"unique longer prefix", c.String()[:20], c},
		{"63 characters", db.String()[:63], db},
		{"first distinguishing character", da.String()[:common+1], da},
	} {
		got, err := s.Resolve(ctx, tt.id)
		if assert.NoError(t, err, tt.name) {
			assert.Equal(t, tt.want, got, tt.name)
		}
	}

	_, err = s.Resolve(ctx, shared)
	var amb *store.AmbiguousError
	require.ErrorAs(t, err, &amb)
	assert.Equal(t, shared, amb.Prefix)
	assert.ElementsMatch(t, []string{da.String(), db.String()}, amb.Candidates)
	assert.Contains(t, err.Error(), "ambiguous")
	assert.Contains(t, err.Error(), "2 artifacts")

	for _, tt := range []struct {
		name string
		id   string
	}{
		{"empty", ""},
		{"too short", c.String()[:store.MinPrefix-1]},
		{"too long", c.String() + "0"},
		{"upper-case prefix", strings.ToUpper(c.String()[:8])},
		{"upper-case full id", strings.ToUpper(c.String())},
		{"non-hex", "zzzz"},
		{"parent directory", "../.."},
		{"path", "ab/cd"},
		{"NUL", c.String()[:4] + "\x00"},
		{"glob", c.String()[:4] + "*"},
	} {
		got, err := s.Resolve(ctx, tt.id)
		if assert.Error(t, err, tt.name) {
			assert.True(t, got.IsZero(), tt.name)
			assert.NotErrorIs(t, err, store.ErrNotFound, "%s: a malformed id is not a missing one", tt.name)
			assert.False(t, errors.As(err, &amb), tt.name)
		}
	}

	var missing []string
	for _, p := range []string{"0000", "ffff"} {
		for _, d := range []store.Digest{da, db, c} {
			require.False(t, strings.HasPrefix(d.String(), p), "the test needs a prefix no object has")
		}
		missing = append(missing, p, p+strings.Repeat("0", 60))
	}
	// A longer prefix, in a shard that holds an object.
	inShard := c.String()[:2] + strings.Repeat("0", 10)
	if strings.HasPrefix(c.String(), inShard) {
		inShard = c.String()[:2] + strings.Repeat("1", 10)
	}
	for _, id := range append(missing, inShard) {
		_, err := s.Resolve(ctx, id)
		assert.ErrorIs(t, err, store.ErrNotFound, id)
	}
}

func testStorePayloads(t *testing.T, b store.Backend) {
	large := make([]byte, 1<<20)
	for i := range large {
		large[i] = byte(i*7 + i>>8)
	}
	s := store.New(b)
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"text", []byte("hello, world\n")},
		{"binary with NUL", []byte("\x00\x01\xff\xfe\x00")},
		{"invalid UTF-8", []byte("\xc3\x28")},
		{"1 MiB", large},
	} {
		d, created, err := s.Put(ctx, tt.data)
		require.NoError(t, err, tt.name)
		assert.True(t, created, tt.name)
		assert.Equal(t, store.Sum(tt.data), d, tt.name)
		require.NoError(t, s.Flush(ctx, d), tt.name)
		got, err := s.Get(ctx, d)
		require.NoError(t, err, tt.name)
		assert.True(t, bytes.Equal(tt.data, got), "%s: Get returned other bytes", tt.name)
		assert.NoError(t, s.Verify(ctx, d), tt.name)
		size, err := s.Size(ctx, d)
		require.NoError(t, err, tt.name)
		assert.Equal(t, int64(len(tt.data)), size, tt.name)
	}
}

func testStorePutSum(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := []byte("the same bytes, hashed once by the caller")
	d, created, err := s.PutSum(ctx, store.Sum(data), data)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, store.Sum(data), d)
	require.NoError(t, s.Flush(ctx, d))
	require.NoError(t, s.Verify(ctx, d))
	_, created, err = s.Put(ctx, data)
	require.NoError(t, err)
	assert.False(t, created, "Put of the same bytes after PutSum")
}

func testStoreMissing(t *testing.T, b store.Backend) {
	s := store.New(b)
	d := store.Sum([]byte("never stored"))
	check := func() {
		t.Helper()
		_, err := s.Get(ctx, d)
		assert.ErrorIs(t, err, store.ErrNotFound)
		assert.NotErrorIs(t, err, store.ErrCorrupt)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), d.String())
		}
		assert.ErrorIs(t, s.Verify(ctx, d), store.ErrNotFound)
		_, err = s.Open(ctx, d)
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.Size(ctx, d)
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.Resolve(ctx, d.String())
		assert.ErrorIs(t, err, store.ErrNotFound, "a full id that is not stored is not found, like a prefix")
		_, err = s.Resolve(ctx, d.String()[:store.MinPrefix])
		assert.ErrorIs(t, err, store.ErrNotFound)
	}
	check() // in an empty store

	// Also when the store holds another object, in the same shard.
	var other []byte
	for i := 0; other == nil; i++ {
		data := []byte(fmt.Sprint("neighbour ", i))
		if o := store.Sum(data).String(); o[:2] == d.String()[:2] && o[:store.MinPrefix] != d.String()[:store.MinPrefix] {
			other = data
		}
	}
	_, _, err := s.Put(ctx, other)
	require.NoError(t, err)
	require.NoError(t, s.Flush(ctx))
	check()
}

func testStoreCorruptions(t *testing.T, b store.Backend) {
	data := []byte("the original artifact bytes")
	d := store.Sum(data)
	s := store.New(b)
	for _, tt := range []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"bit flip", func(b []byte) []byte { b[3] ^= 0x10; return b }},
		{"last bit flip", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"emptied", func([]byte) []byte { return nil }},
		{"extra byte", func(b []byte) []byte { return append(b, '\n') }},
		{"zero-filled", func(b []byte) []byte { return make([]byte, len(b)) }},
	} {
		_, _, err := s.Put(ctx, data)
		require.NoError(t, err, tt.name)
		require.NoError(t, s.Flush(ctx, d), tt.name)
		save(t, b, store.ObjectHandle(d), tt.corrupt(bytes.Clone(data)))
		require.NoError(t, b.Flush(ctx), tt.name)

		got, err := s.Get(ctx, d)
		assert.ErrorIs(t, err, store.ErrCorrupt, tt.name)
		assert.NotErrorIs(t, err, store.ErrNotFound, tt.name)
		assert.Nil(t, got, "%s: corrupt bytes served", tt.name)
		if assert.Error(t, err, tt.name) {
			assert.Contains(t, err.Error(), s.Path(d), tt.name)
		}
		assert.ErrorIs(t, s.Verify(ctx, d), store.ErrCorrupt, tt.name)

		d2, created, err := s.Put(ctx, data)
		require.NoError(t, err, tt.name)
		assert.True(t, created, "%s: Put replaces a corrupt object", tt.name)
		assert.Equal(t, d, d2, tt.name)
		require.NoError(t, s.Flush(ctx, d), tt.name)
		got, err = s.Get(ctx, d)
		require.NoError(t, err, tt.name)
		assert.Equal(t, data, got, tt.name)
		assert.NoError(t, s.Verify(ctx, d), tt.name)
	}
}

func testStoreOpenVerifies(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := bytes.Repeat([]byte("artifact bytes "), 10000)
	d, _, err := s.Put(ctx, data)
	require.NoError(t, err)
	require.NoError(t, s.Flush(ctx, d))

	r, err := s.Open(ctx, d)
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, r.Close())
	require.NoError(t, err)
	assert.Equal(t, data, got)

	// One bit flipped in the middle: reading to the end fails.
	damaged := bytes.Clone(data)
	damaged[len(damaged)/2] ^= 1
	save(t, b, store.ObjectHandle(d), damaged)
	require.NoError(t, b.Flush(ctx))
	r, err = s.Open(ctx, d)
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	r.Close()
	assert.ErrorIs(t, err, store.ErrCorrupt)
}

func testStoreConcurrentPuts(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := []byte("the same payload from eight workers")
	var wg sync.WaitGroup
	var created atomic.Int32
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, c, err := s.Put(ctx, data)
			errs[i] = err
			if c {
				created.Add(1)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "worker %d", i)
	}
	assert.Equal(t, int32(1), created.Load(), "exactly one Put writes the object")
	d := store.Sum(data)
	require.NoError(t, s.Flush(ctx, d))
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
}

// testStoreChecksOncePerRun: a Store reads an object it wrote or checked
// once; later Puts of the same digest, one per reference, read nothing
// (bytes changed behind its back go unseen), until a read of the object
// finds it damaged. Another Store (a later run) reads it again.
func testStoreChecksOncePerRun(t *testing.T, b store.Backend) {
	s := store.New(b)
	data := []byte("one artifact, many references")
	d, created, err := s.Put(ctx, data)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, s.Flush(ctx, d))
	save(t, b, store.ObjectHandle(d), []byte("changed behind the store's back"))
	require.NoError(t, b.Flush(ctx))

	_, created, err = s.Put(ctx, data)
	require.NoError(t, err)
	assert.False(t, created, "checked once: not read again")

	later := store.New(b)
	_, created, err = later.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created, "a later run reads it, finds it damaged and writes it anew")
	require.NoError(t, later.Flush(ctx, d))
	require.NoError(t, s.Verify(ctx, d))

	save(t, b, store.ObjectHandle(d), []byte("changed again"))
	require.NoError(t, b.Flush(ctx))
	require.ErrorIs(t, s.Verify(ctx, d), store.ErrCorrupt)
	_, created, err = s.Put(ctx, data)
	require.NoError(t, err)
	assert.True(t, created, "a read that found it damaged makes Put look again")
}
