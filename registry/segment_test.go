package registry_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
)

func TestWriterID(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		w    registry.Writer
		want string
	}{
		{"plain", registry.Writer{Host: "box", PID: 42, Start: start, Seq: 1}, "20260102T020405.000000006Z_box_42_1"},
		{"shard", registry.Writer{Host: "box", PID: 42, Start: start, Seq: 7, Shard: registry.Shard{K: 2, N: 8}},
			"20260102T020405.000000006Z_box_42_7_s2of8"},
		{"odd host", registry.Writer{Host: "../a b/ü_x.example-1", PID: 1, Start: start, Seq: 2},
			"20260102T020405.000000006Z_..-a-b----x.example-1_1_2"}, // ü is two bytes
		{"long host", registry.Writer{Host: strings.Repeat("h", 300), PID: 1, Start: start, Seq: 3},
			"20260102T020405.000000006Z_" + strings.Repeat("h", 64) + "_1_3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.w.ID())
			assert.NotContains(t, tt.w.ID(), "/")
		})
	}
}

// TestShardInSegmentName: a Store told its shard names it in the id of
// the segments it starts.
func TestShardInSegmentName(t *testing.T) {
	s := registry.New(local.New(t.TempDir()))
	s.SetShard(registry.Shard{K: 1, N: 4})
	require.NoError(t, s.Append(context.Background(), []registry.Record{rec("a")}))
	assert.True(t, strings.HasSuffix(s.SegmentPath(), "_s1of4.jsonl"), s.SegmentPath())
}

// TestTwoWritersTwoSegments: two Stores on one store, even in one process,
// are two writers, each appending to its own segment; readers see the
// union, the single-file registry first, then the segments by name.
func TestTwoWritersTwoSegments(t *testing.T) {
	dir := t.TempDir()
	writeLegacy(t, dir, recLine(t, rec("0")))
	s1, s2 := registry.New(local.New(dir)), registry.New(local.New(dir))
	require.NoError(t, s1.Append(context.Background(), []registry.Record{rec("a")}))
	require.NoError(t, s2.Append(context.Background(), []registry.Record{rec("b")}))
	require.NoError(t, s1.Append(context.Background(), []registry.Record{rec("c")}))

	require.NotEqual(t, s1.SegmentPath(), s2.SegmentPath())
	for _, s := range []*registry.Store{s1, s2} {
		assert.Equal(t, filepath.Join(dir, store.SegmentsDir), filepath.Dir(s.SegmentPath()))
		assert.Contains(t, filepath.Base(s.SegmentPath()), "_"+strconv.Itoa(os.Getpid())+"_", "the id names the process")
	}
	assert.Equal(t, []string{filepath.Join(dir, store.RegistryFile), s1.SegmentPath(), s2.SegmentPath()}, registryFiles(t, dir),
		"the first Store started first, so its segment sorts first")
	data, err := os.ReadFile(filepath.Join(dir, store.RegistryFile))
	require.NoError(t, err)
	assert.Equal(t, recLine(t, rec("0")), string(data), "the single-file registry was appended to")

	recs, bad := hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"0", "a", "c", "b"}, recs)
	assert.Empty(t, bad)
}

const appendChildEnv = "TT_REGISTRY_APPEND_CHILD" // <store dir>:<hash letter>

// TestAppendChild is the other process of TestTwoProcesses; it does
// nothing unless started by it.
func TestAppendChild(t *testing.T) {
	spec := os.Getenv(appendChildEnv)
	if spec == "" {
		t.Skip("run by TestTwoProcesses")
	}
	dir, letter, _ := strings.Cut(spec, ":")
	s := registry.New(local.New(dir))
	for i := range 20 {
		r := rec(letter)
		r.Line = i + 1
		require.NoError(t, s.Append(context.Background(), []registry.Record{r}))
	}
	require.NoError(t, s.Release())
}

// TestTwoProcesses: two processes appending to one store at once write
// two segments; readers see the union.
func TestTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for _, letter := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), appendChildEnv+"="+dir+":"+letter)
		require.NoError(t, cmd.Start())
		wg.Go(func() {
			out, _ := cmd.CombinedOutput()
			assert.NoError(t, cmd.Wait(), "%s", out)
		})
	}
	wg.Wait()
	files := registryFiles(t, dir)
	require.Len(t, files, 2, "one segment per process")
	count := map[string]int{}
	recs, bad := hashes(t, registry.New(local.New(dir)))
	for _, h := range recs {
		count[h]++
	}
	assert.Equal(t, map[string]int{"a": 20, "b": 20}, count)
	assert.Empty(t, bad)
	for _, f := range files {
		assert.Equal(t, 20, countLines(t, f))
	}
}

// TestSingleFileRegistryStillReads: a store of an earlier version, with
// only registry.jsonl (torn tail and all), reads as it did; a writer adds
// a segment beside it and leaves it as it is.
func TestSingleFileRegistryStillReads(t *testing.T) {
	dir := t.TempDir()
	old := recLine(t, rec("0")) + recLine(t, rec("1")) + `{"hash":"tor`
	writeLegacy(t, dir, old)
	s := registry.New(local.New(dir))
	recs, bad := hashes(t, s)
	assert.Equal(t, []string{"0", "1"}, recs)
	assert.Empty(t, bad)

	require.NoError(t, s.Append(context.Background(), []registry.Record{rec("1"), rec("2")}))
	data, err := os.ReadFile(filepath.Join(dir, store.RegistryFile))
	require.NoError(t, err)
	assert.Equal(t, old, string(data))
	seg, err := os.ReadFile(s.SegmentPath())
	require.NoError(t, err)
	assert.Equal(t, recLine(t, rec("2")), string(seg), "a record the single-file registry holds was appended again")
	recs, _ = hashes(t, s)
	assert.Equal(t, []string{"0", "1", "2"}, recs)
}

// TestReaderKeepsWhatItOpened: a compaction that ends while a reader is
// reading removes files the reader has open; it reads them to the end,
// every record once.
func TestReaderKeepsWhatItOpened(t *testing.T) {
	dir := t.TempDir()
	writeLegacy(t, dir, recLine(t, rec("0")))
	for _, h := range []string{"a", "b", "c"} {
		require.NoError(t, registry.New(local.New(dir)).Append(context.Background(), []registry.Record{rec(h)}))
	}
	var recs []string
	compacted := false
	require.NoError(t, registry.New(local.New(dir)).Records(context.Background(), func(r registry.Record) error {
		if !compacted {
			compacted = true
			_, err := registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
			require.NoError(t, err)
			require.Len(t, registryFiles(t, dir), 1)
		}
		recs = append(recs, r.Hash[:1])
		return nil
	}, nil))
	assert.Equal(t, []string{"0", "a", "b", "c"}, recs)
}

// TestCompactedFilesLeftBehind: files a compaction merged but did not get
// to remove (killed first) are not read twice, and the next compaction
// removes them.
func TestCompactedFilesLeftBehind(t *testing.T) {
	dir := t.TempDir()
	writeLegacy(t, dir, recLine(t, rec("0")))
	for _, h := range []string{"a", "b"} {
		require.NoError(t, registry.New(local.New(dir)).Append(context.Background(), []registry.Record{rec(h)}))
	}
	saved := map[string][]byte{}
	for _, f := range registryFiles(t, dir) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		saved[f] = data
	}
	_, err := registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	for f, data := range saved {
		require.NoError(t, os.WriteFile(f, data, 0o600))
	}
	require.Len(t, registryFiles(t, dir), 4)

	recs, bad := hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"0", "a", "b"}, recs)
	assert.Empty(t, bad)

	// A writer's records count once too, and land in a new segment.
	w := registry.New(local.New(dir))
	require.NoError(t, w.Append(context.Background(), []registry.Record{rec("a"), rec("c")}))
	recs, _ = hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"0", "a", "b", "c"}, recs)

	_, err = registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.Len(t, registryFiles(t, dir), 1)
	recs, _ = hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"0", "a", "b", "c"}, recs)
}

// TestSingleFileRegistryMadeAnew: a writer of an earlier version that
// makes registry.jsonl anew after a compaction removed it has its records
// read, not taken for those merged; a file with the very bytes merged is.
func TestSingleFileRegistryMadeAnew(t *testing.T) {
	dir := t.TempDir()
	merged := recLine(t, rec("0"))
	writeLegacy(t, dir, merged)
	require.NoError(t, registry.New(local.New(dir)).Append(context.Background(), []registry.Record{rec("a")}))
	_, err := registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	require.NoFileExists(t, filepath.Join(dir, store.RegistryFile))

	writeLegacy(t, dir, recLine(t, rec("1"))+recLine(t, rec("2")))
	recs, _ := hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"1", "2", "0", "a"}, recs)

	writeLegacy(t, dir, merged+recLine(t, rec("3")))
	recs, _ = hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"3", "0", "a"}, recs, "the lines merged are read once, those after them too")
}

// TestCompactKeepsFileAppendedMeanwhile: a segment appended to while it is
// compacted, by a writer that does not take the store's lock, is kept;
// readers read its lines past those merged.
func TestCompactKeepsFileAppendedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	w := registry.New(local.New(dir))
	require.NoError(t, w.Append(context.Background(), []registry.Record{rec("a")}))
	seg := w.SegmentPath()
	require.NoError(t, registry.New(local.New(dir)).Append(context.Background(), []registry.Record{rec("b")}))
	// Appended to as the merged segment is saved, once the files merged
	// are open.
	c := registry.New(faulty.New(local.New(dir), func(c faulty.Call) error {
		if c.Method == faulty.Save && c.Handle.Kind == store.Segment {
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString(recLine(t, rec("c")))
				f.Close()
			}
			return err
		}
		return nil
	}))
	_, err := c.Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	assert.FileExists(t, seg)
	assert.Len(t, registryFiles(t, dir), 2)
	recs, bad := hashes(t, registry.New(local.New(dir)))
	assert.Equal(t, []string{"c", "a", "b"}, recs, "the kept segment, past what was merged, sorts before the compacted one")
	assert.Empty(t, bad)
}

// TestSegmentCompactedAway: a Store whose segment a collector compacted
// away starts a new one, never writing its old name again.
func TestSegmentCompactedAway(t *testing.T) {
	dir := t.TempDir()
	w := registry.New(local.New(dir))
	require.NoError(t, w.Append(context.Background(), []registry.Record{rec("a")}))
	first := w.SegmentPath()
	require.NoError(t, w.Release())
	require.NoError(t, registry.New(local.New(dir)).Append(context.Background(), []registry.Record{rec("c")}))
	_, err := registry.New(local.New(dir)).Compact(context.Background(), func(registry.Record) bool { return true })
	require.NoError(t, err)
	compacted := registryFiles(t, dir)
	require.Len(t, compacted, 1)

	require.NoError(t, w.Append(context.Background(), []registry.Record{rec("a"), rec("b")}))
	assert.NotContains(t, append(compacted, first), w.SegmentPath())
	assert.NoFileExists(t, first)
	recs, _ := hashes(t, w)
	assert.Equal(t, []string{"a", "c", "b"}, recs)
}

// TestCompactWhileReading: readers running while writers append and a
// collector compacts over and over never see a record twice, nor miss one
// appended before they started.
func TestCompactWhileReading(t *testing.T) {
	dir := t.TempDir()
	writeLegacy(t, dir, recLine(t, rec("0")))
	const records = 60
	var appended atomic.Int32
	appended.Store(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // a writer per record, as many runs would be
		defer cancel()
		for i := range records {
			w := registry.New(local.New(dir))
			r := rec("a")
			r.Line = i + 1
			if !assert.NoError(t, w.Append(context.Background(), []registry.Record{r})) {
				return
			}
			appended.Add(1)
			assert.NoError(t, w.Release())
		}
	})
	wg.Go(func() { // a collector
		c := registry.New(local.New(dir))
		for ctx.Err() == nil {
			lock, err := c.LockExclusive(ctx, nil)
			if err != nil {
				return
			}
			_, err = c.Compact(context.Background(), func(registry.Record) bool { return true })
			assert.NoError(t, err)
			assert.NoError(t, lock.Close())
		}
	})
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				before := int(appended.Load())
				seen := map[string]bool{}
				err := registry.New(local.New(dir)).Records(context.Background(), func(r registry.Record) error {
					k := fmt.Sprintf("%s/%d", r.Hash[:1], r.Line)
					assert.False(t, seen[k], "%s read twice", k)
					seen[k] = true
					return nil
				}, func(e *registry.BadLineError) { t.Errorf("bad line: %v", e) })
				assert.NoError(t, err)
				assert.GreaterOrEqual(t, len(seen), before, "records lost")
			}
		})
	}
	wg.Wait()
	recs, _ := hashes(t, registry.New(local.New(dir)))
	assert.Len(t, recs, records+1)
}
