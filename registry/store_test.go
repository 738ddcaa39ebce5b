package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newStore returns a store in a directory that does not exist yet.
func newStore(t *testing.T) *Store {
	t.Helper()
	return Open(filepath.Join(t.TempDir(), "artifacts"))
}

// mustPut stores data and checks that it was created.
func mustPut(t *testing.T, s *Store, data []byte) Digest {
	t.Helper()
	d, created, err := s.Put(data)
	require.NoError(t, err)
	require.True(t, created)
	return d
}

// shardEntries lists the names in d's shard directory.
func shardEntries(t *testing.T, s *Store, d Digest) []string {
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

func TestPutGet(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"text", []byte("hello, world\n")},
		{"binary with NUL", []byte("\x00\x01\xff\xfe\x00")},
		{"invalid UTF-8", []byte("\xc3\x28")},
		{"1 MiB", randomBytes(1 << 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			d, created, err := s.Put(tt.data)
			require.NoError(t, err)
			assert.True(t, created)
			assert.Equal(t, Sum(tt.data), d)
			require.NoError(t, s.Sync())

			got, err := s.Get(d)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(tt.data, got), "Get returned other bytes")
			assert.NoError(t, s.Verify(d))

			// sha256sum on the object file prints its name.
			path := s.Path(d)
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			sum := sha256.Sum256(file)
			assert.Equal(t, filepath.Base(path), hex.EncodeToString(sum[:]))
			assert.Equal(t, filepath.Base(path)[:2], filepath.Base(filepath.Dir(path)))
			assert.Equal(t, []string{d.String()}, shardEntries(t, s, d), "temporary files left behind")
		})
	}
}

func TestPutTwice(t *testing.T) {
	s := newStore(t)
	data := []byte("same payload")
	d1 := mustPut(t, s, data)
	before, err := os.Stat(s.Path(d1))
	require.NoError(t, err)

	d2, created, err := s.Put(data)
	require.NoError(t, err)
	assert.False(t, created, "an intact object is not created again")
	assert.Equal(t, d1, d2)
	after, err := os.Stat(s.Path(d2))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the intact object was rewritten")
	assert.Equal(t, []string{d1.String()}, shardEntries(t, s, d1))
}

func TestPutConcurrent(t *testing.T) {
	s := newStore(t)
	data := []byte("raced payload")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = s.Put(data) })
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "goroutine %d", i)
	}
	d := Sum(data)
	got, err := s.Get(d)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Equal(t, []string{d.String()}, shardEntries(t, s, d), "temporary files left behind")
	assert.NoError(t, s.Sync())
}

func TestCorruptObject(t *testing.T) {
	data := []byte("the original artifact bytes")
	tests := []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"bit flip", func(b []byte) []byte { b[3] ^= 0x10; return b }},
		{"last bit flip", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"emptied", func([]byte) []byte { return nil }},
		{"extra byte", func(b []byte) []byte { return append(b, '\n') }},
		{"zero-filled", func(b []byte) []byte { return make([]byte, len(b)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			d := mustPut(t, s, data)
			path := s.Path(d)
			require.NoError(t, os.WriteFile(path, tt.corrupt(bytes.Clone(data)), 0o600))

			got, err := s.Get(d)
			assert.ErrorIs(t, err, ErrCorrupt)
			assert.NotErrorIs(t, err, ErrNotFound)
			assert.Nil(t, got, "corrupt bytes served")
			assert.Contains(t, err.Error(), path)
			assert.ErrorIs(t, s.Verify(d), ErrCorrupt)

			d2, created, err := s.Put(data)
			require.NoError(t, err)
			assert.True(t, created, "Put replaces a corrupt object")
			assert.Equal(t, d, d2)
			got, err = s.Get(d)
			require.NoError(t, err)
			assert.Equal(t, data, got)
			assert.NoError(t, s.Verify(d))
			assert.Equal(t, []string{d.String()}, shardEntries(t, s, d))
		})
	}
}

func TestMissingObject(t *testing.T) {
	s := newStore(t)
	d := Sum([]byte("never stored"))
	_, err := s.Get(d)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), d.String())
	assert.ErrorIs(t, s.Verify(d), ErrNotFound)

	// Also when the store exists and another object shares the shard.
	mustPut(t, s, []byte("other"))
	_, err = s.Get(d)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.NotErrorIs(t, err, ErrCorrupt)
}

func TestOpenCreatesNothing(t *testing.T) {
	s := newStore(t)
	_, err := s.Get(Sum(nil))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = os.Stat(s.Dir())
	assert.ErrorIs(t, err, fs.ErrNotExist, "reading created the store")
}

func TestSyncReportsErrors(t *testing.T) {
	s := newStore(t)
	mustPut(t, s, []byte("x"))
	require.NoError(t, os.RemoveAll(s.Dir()))
	assert.Error(t, s.Sync(), "fsync of a removed directory succeeded")
}

func TestSortDeepestFirst(t *testing.T) {
	dirs := []string{"/s", "/s/objects/ab", "/", "/s/objects", "/s/objects/cd"}
	sortDeepestFirst(dirs)
	for i := 1; i < len(dirs); i++ {
		assert.GreaterOrEqual(t, len(dirs[i-1]), len(dirs[i]), "%q", dirs)
	}
	assert.ElementsMatch(t, []string{"/s", "/s/objects/ab", "/", "/s/objects", "/s/objects/cd"}, dirs)
}

// TestModes checks that the store is private whatever the umask. It sets
// the process umask, so it must not run in parallel with other tests.
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
	s := newStore(t)
	d := mustPut(t, s, []byte("private"))
	require.NoError(t, s.Append([]Record{{Hash: d.String(), Site: "x"}}))
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
	_, err = s.Compact(func(Record) bool { return true })
	require.NoError(t, err)
	torn, err := filepath.Glob(seg + ".torn-*")
	require.NoError(t, err)
	require.Len(t, torn, 1)
	compacted, err := filepath.Glob(filepath.Join(s.Dir(), SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, compacted, 1)
	require.NoError(t, s.Append([]Record{{Hash: d.String(), Site: "y"}}))

	for _, dir := range []string{s.Dir(), filepath.Join(s.Dir(), ObjectsDir), filepath.Dir(s.Path(d)), filepath.Join(s.Dir(), SegmentsDir)} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, fs.ModeDir|0o700, fi.Mode(), "%s", dir)
	}
	for _, file := range []string{s.Path(d), s.SegmentPath(), compacted[0], torn[0]} {
		fi, err := os.Stat(file)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode(), "%s", file)
	}
}

// collidingData returns two payloads whose digests share their first
// MinPrefix hex characters, and the digests.
func collidingData(t *testing.T) (a, b []byte, da, db Digest) {
	t.Helper()
	seen := map[string][]byte{}
	for i := 0; i < 1<<20; i++ {
		data := []byte(fmt.Sprintf("payload %d", i))
		p := Sum(data).String()[:MinPrefix]
		if prev, ok := seen[p]; ok {
			return prev, data, Sum(prev), Sum(data)
		}
		seen[p] = data
	}
	t.Fatal("no prefix collision found")
	return
}

func TestResolve(t *testing.T) {
	s := newStore(t)
	a, b, da, db := collidingData(t)
	mustPut(t, s, a)
	mustPut(t, s, b)
	c := mustPut(t, s, []byte("lonely"))
	shared := da.String()[:MinPrefix]
	// Entries in a shard that must never match: a directory and a file
	// whose names start like an id but are not one.
	shard := filepath.Dir(s.Path(da))
	require.NoError(t, os.Mkdir(filepath.Join(shard, shared+strings.Repeat("0", 60)), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(shard, shared+".tmp"), nil, 0o600))

	// The longest prefix the two share, plus one character, is unique.
	common := 0
	for common < 64 && da.String()[common] == db.String()[common] {
		common++
	}
	missing := "0000"
	for _, d := range []Digest{da, db, c} {
		require.False(t, strings.HasPrefix(d.String(), missing), "test needs a prefix no object has")
	}

	tests := []struct {
		name string
		id   string
		want Digest
	}{
		{"full id", c.String(), c},
		{"full id of one of a colliding pair", da.String(), da},
		{"unique short prefix", c.String()[:MinPrefix], c},
		{"unique longer prefix", c.String()[:20], c},
		{"63 characters", db.String()[:63], db},
		{"first distinguishing character", da.String()[:common+1], da},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Resolve(tt.id)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("ambiguous", func(t *testing.T) {
		_, err := s.Resolve(shared)
		var ae *AmbiguousError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, shared, ae.Prefix)
		assert.ElementsMatch(t, []string{da.String(), db.String()}, ae.Candidates)
		assert.Contains(t, err.Error(), "ambiguous")
		assert.Contains(t, err.Error(), "2 artifacts")
	})

	refused := []struct {
		name string
		id   string
	}{
		{"empty", ""},
		{"too short", c.String()[:MinPrefix-1]},
		{"too long", c.String() + "0"},
		{"upper-case prefix", strings.ToUpper(c.String()[:8])},
		{"upper-case full id", strings.ToUpper(c.String())},
		{"non-hex", "zzzz"},
		{"parent directory", "../.."},
		{"path", "ab/cd"},
		{"NUL", c.String()[:4] + "\x00"},
		{"glob", c.String()[:4] + "*"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Resolve(tt.id)
			require.Error(t, err)
			assert.True(t, got.IsZero())
			assert.NotErrorIs(t, err, ErrNotFound, "a malformed id is not a missing one")
			var ae *AmbiguousError
			assert.False(t, errors.As(err, &ae))
		})
	}

	t.Run("missing prefix", func(t *testing.T) {
		_, err := s.Resolve(missing)
		assert.ErrorIs(t, err, ErrNotFound)
	})
	t.Run("missing longer prefix in an existing shard", func(t *testing.T) {
		id := c.String()[:2] + strings.Repeat("0", 10)
		if strings.HasPrefix(c.String(), id) {
			id = c.String()[:2] + strings.Repeat("1", 10)
		}
		_, err := s.Resolve(id)
		assert.ErrorIs(t, err, ErrNotFound)
	})
	t.Run("prefix in an empty store", func(t *testing.T) {
		_, err := newStore(t).Resolve("abcd")
		assert.ErrorIs(t, err, ErrNotFound)
	})
}

func TestPutSum(t *testing.T) {
	s := Open(t.TempDir())
	data := []byte("the same bytes, hashed once by the caller")
	d, created, err := s.PutSum(Sum(data), data)
	if err != nil || !created {
		t.Fatalf("PutSum = %v, %v, %v", d, created, err)
	}
	if d != Sum(data) {
		t.Fatalf("PutSum returned %s, want %s", d, Sum(data))
	}
	if err := s.Verify(d); err != nil {
		t.Fatalf("Verify after PutSum: %v", err)
	}
	if _, created, err := s.Put(data); err != nil || created {
		t.Fatalf("Put of the same bytes after PutSum: created=%v, err=%v", created, err)
	}
}
