package fsck_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// The gc scenarios of issue 19 run this many times each on a local
// store; make soak (TT_SOAK=1) runs soakIterations. Through an S3 server
// (issue 26) an iteration takes some ten requests more, and runs
// s3Iterations times, s3SoakIterations under make soak.
const (
	iterations       = 500
	soakIterations   = 5000
	s3Iterations     = 30
	s3SoakIterations = 500
)

func iterationsToRun(t *testing.T, rs *raceStore) int {
	n, soak := iterations, soakIterations
	if rs.srv != nil {
		n, soak = s3Iterations, s3SoakIterations
	}
	if os.Getenv("TT_SOAK") != "" {
		return soak
	}
	if testing.Short() {
		return max(n/10, 1)
	}
	return n
}

// raceStore is where a race keeps its stores: folders, or prefixes of a
// bucket of an S3-compatible server.
type raceStore struct {
	srv    *s3test.Server // nil for folders
	client *awss3.Client
	bucket string
	n      int
}

// raceStores are the kinds of store the races run on: a folder, and a
// bucket of each S3 server the machine has (see s3test.Servers).
func raceStores(t *testing.T) []*raceStore {
	out := []*raceStore{{}}
	for _, srv := range s3test.Servers(t) {
		out = append(out, &raceStore{srv: srv, client: s3.NewClient(srv.Config()), bucket: srv.Bucket(t, "race")})
	}
	return out
}

func (rs *raceStore) name() string {
	if rs.srv == nil {
		return "local"
	}
	return rs.srv.Name
}

// new returns the spec of a new store: artifacts/ in dir, or a prefix of
// its own in the bucket.
func (rs *raceStore) new(dir string) string {
	if rs.srv == nil {
		return filepath.Join(dir, "artifacts")
	}
	rs.n++
	return fmt.Sprintf("s3://%s/%d", rs.bucket, rs.n)
}

// open returns a Backend of the store at spec, as another process would
// open it.
func (rs *raceStore) open(spec string) (storepkg.Backend, error) {
	if rs.srv == nil {
		return local.New(spec), nil
	}
	bucket, prefix, err := s3.ParseURL(spec)
	if err != nil {
		return nil, err
	}
	return s3.New(rs.client, bucket, prefix), nil
}

func (rs *raceStore) registry(t *testing.T, spec string) *registry.Store {
	t.Helper()
	b, err := rs.open(spec)
	require.NoError(t, err)
	return registry.New(b)
}

// age makes every artifact of the store at spec older than the default
// grace period.
func (rs *raceStore) age(t *testing.T, spec string) {
	t.Helper()
	old := time.Now().Add(-aged)
	if rs.srv != nil {
		bucket, prefix, err := s3.ParseURL(spec)
		require.NoError(t, err)
		rs.srv.Age(t, bucket, prefix+"/objects/", old)
		return
	}
	st := rs.registry(t, spec)
	require.NoError(t, st.Each(context.Background(), func(d storepkg.Digest, _ storepkg.FileInfo) error {
		return os.Chtimes(st.Path(d), old, old)
	}, func(string, error) {}))
}

// copyStore copies the objects and registry segments of the store at
// from into the one at to, each segment through edit.
func (rs *raceStore) copyStore(t *testing.T, from, to string, edit func([]byte) []byte) {
	t.Helper()
	src, err := rs.open(from)
	require.NoError(t, err)
	dst, err := rs.open(to)
	require.NoError(t, err)
	ctx := context.Background()
	for _, k := range []storepkg.Kind{storepkg.Object, storepkg.Segment} {
		require.NoError(t, src.List(ctx, k, "", func(fi storepkg.FileInfo) error {
			h := storepkg.Handle{Kind: k, Name: fi.Name}
			rc, err := src.Load(ctx, h, 0, 0)
			if err != nil {
				return err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return err
			}
			if k == storepkg.Segment {
				data = edit(data)
			}
			return dst.Save(ctx, h, func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			})
		}))
	}
	require.NoError(t, dst.Flush(ctx))
}

// aged is how old the seeded artifacts are made: older than the default
// grace period, so that only the lock and the registry keep them.
const aged = 3 * time.Hour

// TestGCRaceDeduplicated: an artifact older than the grace period that
// gc may collect is what a transcript's migration deduplicates onto, while
// gc --yes runs on that transcript at the same instant. The artifact is
// collectable either because the registry records it only for that very
// transcript (migrated before, then restored: it refers to nothing now) or
// because it records it for a seed transcript since deleted and gc is run
// with --prune-missing. Whatever the interleaving, the migrated transcript
// restores.
func TestGCRaceDeduplicated(t *testing.T) {
	for _, rs := range raceStores(t) {
		t.Run(rs.name(), func(t *testing.T) {
			seed := memTempDir(t)
			seedStore := rs.new(seed)
			seedPath := filepath.Join(seed, "seed.jsonl")
			require.NoError(t, os.WriteFile(seedPath, testsession.Pi("seed", 3, 5000), 0o600))
			rs.migrateOne(t, seedPath, seedStore)
			require.NoError(t, os.Remove(seedPath))

			var r racer
			raceIterations(t, rs, func(t *testing.T, dir string, rng *rand.Rand) {
				store := rs.new(dir)
				path := filepath.Join(dir, "t.jsonl")
				require.NoError(t, os.WriteFile(path, testsession.Pi("t", 3, 5000), 0o600))
				opts := fsck.GCOptions{Grace: fsck.DefaultGrace, PruneMissing: true}
				edit := func(seg []byte) []byte { return seg }
				if rng.IntN(2) == 0 {
					edit = func(seg []byte) []byte { return bytes.ReplaceAll(seg, []byte(seedPath), []byte(path)) }
					opts.PruneMissing = false
				}
				rs.copyStore(t, seedStore, store, edit)
				rs.age(t, store)
				r.run(t, rs, path, store, opts, rng)
			})
		})
	}
}

// TestGCRaceFresh: with no grace period at all (--grace 0s --force), a
// migration writing fresh artifacts and gc --yes on its transcript run at
// the same instant; the transcript restores.
func TestGCRaceFresh(t *testing.T) {
	for _, rs := range raceStores(t) {
		t.Run(rs.name(), func(t *testing.T) {
			var r racer
			raceIterations(t, rs, func(t *testing.T, dir string, rng *rand.Rand) {
				path := filepath.Join(dir, "t.jsonl")
				require.NoError(t, os.WriteFile(path, testsession.Pi("t", 3, 5000), 0o600))
				r.run(t, rs, path, rs.new(dir), fsck.GCOptions{PruneMissing: rng.IntN(2) == 0}, rng)
			})
		})
	}
}

// TestGCMovedTree: two session folders share a store; the tree is
// moved (the registry's sources name the old place), the registry loses
// its tail, or both; then gc --yes collects for one folder alone, with no
// grace (the artifacts are hours old). The other folder still restores,
// and gc with --prune-missing, which the user asked for, collects what
// the registry's gone sources alone kept.
func TestGCMovedTree(t *testing.T) {
	folder := &raceStore{}
	tmpl := memTempDir(t)
	before := filepath.Join(tmpl, "before")
	for _, s := range []struct {
		path    string
		n, size int
	}{{"a/x.jsonl", 2, 5000}, {"b/y.jsonl", 3, 6000}, {"b/z.jsonl", 2, 5000}} {
		p := filepath.Join(before, s.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, testsession.Pi(s.path, s.n, s.size), 0o600))
		folder.migrateOne(t, p, filepath.Join(before, "artifacts"))
	}
	// Moved: nothing exists where the registry says any more.
	after := filepath.Join(tmpl, "after")
	require.NoError(t, os.Rename(before, after))
	var lines [][]byte
	for _, reg := range registryFiles(t, filepath.Join(after, "artifacts")) {
		data, err := os.ReadFile(reg)
		require.NoError(t, err)
		more := bytes.SplitAfter(data, []byte("\n"))
		lines = append(lines, more[:len(more)-1]...)
	}

	// The transcripts are only read: each iteration copies the store alone.
	x := filepath.Join(after, "a", "x.jsonl")
	ys := []string{filepath.Join(after, "b", "y.jsonl"), filepath.Join(after, "b", "z.jsonl")}
	raceIterations(t, folder, func(t *testing.T, dir string, rng *rand.Rand) {
		store := folder.new(dir)
		folder.copyStore(t, filepath.Join(after, "artifacts"), store, func(seg []byte) []byte { return seg })
		moved, cut := rng.IntN(2) == 0, rng.IntN(len(lines)+1)
		if !moved && cut == len(lines) {
			cut = rng.IntN(len(lines)) // one of the two, at least
		}
		var kept []byte
		for _, l := range lines[:cut] {
			if !moved {
				l = bytes.ReplaceAll(l, []byte(before), []byte(after))
			}
			kept = append(kept, l...)
		}
		// The registry, cut, as a single-file registry of an earlier
		// version.
		require.NoError(t, os.RemoveAll(filepath.Join(store, storepkg.SegmentsDir)))
		require.NoError(t, os.WriteFile(filepath.Join(store, storepkg.RegistryFile), kept, 0o600))
		folder.age(t, store)
		why := fmt.Sprintf("moved %v, registry cut to %d of %d lines", moved, cut, len(lines))

		rep, err := fsck.GC(context.Background(), folder.registry(t, store), inputs(x),
			fsck.GCOptions{Remove: true, Now: time.Now()})
		require.NoError(t, err, why)
		assertRestores(t, folder, append([]string{x}, ys...), store, why)
		assert.Empty(t, rep.Collected, "%s: gc deleted what the other folder may need", why)

		// What --prune-missing deletes is what verify said it would, and
		// so never what x refers to.
		v, err := fsck.Verify(context.Background(), folder.registry(t, store), inputs(x))
		require.NoError(t, err)
		var promised []string
		for _, f := range v.Findings {
			if strings.HasSuffix(f.Message, "gc --prune-missing would delete it") || strings.HasSuffix(f.Message, "gc would delete it") {
				promised = append(promised, f.Path)
			}
		}
		rep, err = fsck.GC(context.Background(), folder.registry(t, store), inputs(x),
			fsck.GCOptions{Remove: true, PruneMissing: true, Now: time.Now()})
		require.NoError(t, err, why)
		var deleted []string
		for _, c := range rep.Collected {
			deleted = append(deleted, c.Path)
		}
		assert.ElementsMatch(t, promised, deleted, why)
	})
}

// raceIterations runs one iteration of a scenario in a directory of its
// own each time, and logs the figures make soak prints.
func raceIterations(t *testing.T, rs *raceStore, iteration func(t *testing.T, dir string, rng *rand.Rand)) {
	n := iterationsToRun(t, rs)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TT_SOAK_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	base := memTempDir(t)
	start := time.Now()
	for i := 0; i < n && !t.Failed(); i++ {
		dir := filepath.Join(base, strconv.Itoa(i))
		require.NoError(t, os.Mkdir(dir, 0o700))
		iteration(t, dir, rng)
		require.NoError(t, os.RemoveAll(dir))
	}
	if !t.Failed() {
		t.Logf("%d iterations, no artifact lost, in %v (TT_SOAK_SEED=%d)", n, time.Since(start).Round(time.Millisecond), seed)
	}
}

// racer runs a migration and a collection at once. A collection is much
// shorter than a migration, so it starts after a random delay of up to
// about as long as a migration takes: each instant of the migration is as
// likely to be raced as the next.
type racer struct{ span time.Duration }

// run migrates path into store while gc --yes runs on it with opts, and
// checks that the migration succeeded and that the transcript restores.
func (r *racer) run(t *testing.T, rs *raceStore, path, store string, opts fsck.GCOptions, rng *rand.Rand) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	r.span = max(r.span, time.Millisecond)
	delay := time.Duration(rng.Int64N(int64(3 * r.span / 2)))
	opts.Remove = true
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		sum   migrate.Summary
		took  time.Duration
		gcErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		began := time.Now()
		sum = migrate.Run(context.Background(), []session.Input{{Path: path, Rel: filepath.Base(path), Explicit: true, Size: fi.Size()}},
			migrate.Options{Store: store, Jobs: 1, OpenStore: rs.open})
		took = time.Since(began)
	}()
	go func() {
		defer wg.Done()
		<-start
		time.Sleep(delay)
		opts.Now = time.Now()
		_, gcErr = fsck.GC(context.Background(), rs.registry(t, store), inputs(path), opts)
	}()
	close(start)
	wg.Wait()
	// The mean of recent migrations, not the longest: one stalled by the
	// disk would make every later delay too long.
	r.span = (7*r.span + took) / 8
	require.NoError(t, gcErr)
	require.Equal(t, 1, sum.Migrated, "%+v", sum.Results)
	assertRestores(t, rs, []string{path}, store, "")
}

// memTempDir returns a temporary directory in memory (tmpfs) where the
// system has one, else t.TempDir(): the races are the same, and the
// iterations do not wait for a disk that other programs may keep busy.
func memTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "fsck-"+t.Name()+"-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// assertRestores checks that every reference in the transcripts at paths
// resolves to an intact artifact of store.
func assertRestores(t *testing.T, rs *raceStore, paths []string, store, why string) {
	t.Helper()
	rep, err := fsck.Verify(context.Background(), rs.registry(t, store), inputs(paths...))
	require.NoError(t, err)
	for _, f := range rep.Findings {
		assert.NotEqual(t, fsck.Error, f.Severity, "%s: %s", why, f)
	}
}

func (rs *raceStore) migrateOne(t *testing.T, path, store string) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	sum := migrate.Run(context.Background(), []session.Input{{Path: path, Rel: filepath.Base(path), Explicit: true, Size: fi.Size()}},
		migrate.Options{Store: store, Jobs: 1, OpenStore: rs.open})
	require.Equal(t, 1, sum.Migrated, "%+v", sum.Results)
}

// registryFiles returns the files of the registry of store: the
// single-file registry of earlier versions, if there, and the segments.
func registryFiles(t *testing.T, store string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(store, storepkg.SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(store, storepkg.RegistryFile)); err == nil {
		files = append([]string{filepath.Join(store, storepkg.RegistryFile)}, files...)
	}
	require.NotEmpty(t, files)
	return files
}
