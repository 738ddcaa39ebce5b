package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/local"
)

func record(i int) Record {
	data := recordData(i)
	return Record{
		Hash:      store.Sum([]byte(data)).String(),
		Size:      int64(len(data)),
		Media:     "text/plain; charset=utf-8",
		Site:      "message.content",
		Tool:      "bash",
		Session:   "s1",
		Line:      i + 1,
		CreatedAt: "2025-01-02T03:04:05Z",
		Summary:   fmt.Sprintf("output %d", i),
	}
}

// allRecords reads the registry, failing on any bad line.
func allRecords(t *testing.T, s *Store) []Record {
	t.Helper()
	var recs []Record
	err := s.Records(context.Background(), func(r Record) error {
		recs = append(recs, r)
		return nil
	}, func(e *BadLineError) {
		t.Errorf("unexpected bad line: %v", e)
	})
	require.NoError(t, err)
	return recs
}

// readRegistry returns the bytes of s's own segment.
func readRegistry(t *testing.T, s *Store) []byte {
	t.Helper()
	require.NotEmpty(t, s.SegmentPath(), "no segment")
	b, err := os.ReadFile(s.SegmentPath())
	require.NoError(t, err)
	return b
}

// appendRaw appends data to the file at path, creating it (and its
// directory), as a writer that crashed, or a writer of an earlier version,
// would have left it.
func appendRaw(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// line returns r's registry line.
func line(t *testing.T, r Record) string {
	t.Helper()
	return string(mustMarshal(t, r)) + "\n"
}

// segments lists the segments of the store in dir.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, store.SegmentsDir, "*"+segmentExt))
	require.NoError(t, err)
	return names
}

// tornFiles lists the files torn tails were set aside in.
func tornFiles(t *testing.T, s *Store) []string {
	t.Helper()
	var names []string
	for _, pattern := range []string{s.RegistryPath() + ".torn-*", filepath.Join(s.Dir(), store.SegmentsDir, "*.torn-*")} {
		more, err := filepath.Glob(pattern)
		require.NoError(t, err)
		names = append(names, more...)
	}
	return names
}

// keepAll is the keep of a Compact that only merges.
func keepAll(Record) bool { return true }

func TestAppendRecords(t *testing.T) {
	s := newStore(t)
	tricky := record(0)
	tricky.Summary = "line one\nline two\r\n\"quoted\" <b>&amp;</b> \\ é 😀 \u2028 \x00"
	tricky.ToolCallID = "call_1"
	tricky.Source = "/home/u/.pi/agent/sessions/a b.jsonl"
	tricky.Entry = "e1"
	want := []Record{tricky, record(1), {Hash: record(2).Hash}}

	require.NoError(t, s.Append(context.Background(), want[:1]))
	require.NoError(t, s.Append(context.Background(), want[1:]))
	assert.Equal(t, want, allRecords(t, s))

	data := readRegistry(t, s)
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, len(want), "one line per record")
	for i, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "line %d: %s", i+1, l)
		var r Record
		require.NoError(t, json.Unmarshal([]byte(l), &r), "encoding/json reads line %d", i+1)
		assert.Equal(t, want[i], r)
	}
	assert.Empty(t, tornFiles(t, s))
}

func TestRecordFieldNames(t *testing.T) {
	s := newStore(t)
	r := Record{Hash: abcSum, Size: 3, Media: "text/plain", Site: "x", CreatedAt: "t", ToolCallID: "c"}
	require.NoError(t, s.Append(context.Background(), []Record{r}))
	assert.Equal(t,
		`{"hash":"`+abcSum+`","size":3,"media":"text/plain","site":"x","toolCallId":"c","createdAt":"t"}`+"\n",
		string(readRegistry(t, s)))
}

func TestAppendNothing(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(context.Background(), nil))
	_, err := os.Stat(s.Dir())
	assert.ErrorIs(t, err, fs.ErrNotExist, "appending nothing created the store")
}

func TestRecordsMissingRegistry(t *testing.T) {
	s := newStore(t)
	called := false
	err := s.Records(context.Background(), func(Record) error { called = true; return nil }, nil)
	assert.NoError(t, err)
	assert.False(t, called)
}

func TestRecordsStopsOnCallbackError(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(context.Background(), []Record{record(0), record(1), record(2)}))
	errStop := errors.New("stop")
	n := 0
	err := s.Records(context.Background(), func(Record) error {
		n++
		if n == 2 {
			return errStop
		}
		return nil
	}, nil)
	assert.ErrorIs(t, err, errStop)
	assert.Equal(t, 2, n)
}

// TestTornTail: a torn last line, in the single-file registry or in the
// segment of a writer killed mid-append, is skipped by readers and never
// appended after; a compaction sets it aside, byte for byte, before it
// removes its file.
func TestTornTail(t *testing.T) {
	tests := []struct {
		name string
		tail string
	}{
		{"half a record", `{"hash":"abc","si`},
		{"one byte", "{"},
		{"whole record without newline", `{"hash":"` + abcSum + `","size":3,"media":"","site":"","createdAt":""}`},
		{"zero-filled", strings.Repeat("\x00", 4096)},
		{"zero-filled over the read chunk", strings.Repeat("\x00", 200<<10)},
		{"CR only", "\r"},
	}
	for _, tt := range tests {
		for _, legacy := range []bool{false, true} {
			for _, only := range []bool{false, true} {
				name := tt.name + map[bool]string{false: " in a segment", true: " in the single-file registry"}[legacy]
				if only {
					name += ", otherwise empty"
				}
				t.Run(name, func(t *testing.T) {
					s := newStore(t)
					var good []Record
					path := s.RegistryPath()
					if !legacy {
						path = s.where(segmentHandle(newWriter(Shard{})))
					}
					if !only {
						good = []Record{record(0), record(1)}
						appendRaw(t, path, line(t, record(0))+line(t, record(1)))
					}
					appendRaw(t, path, tt.tail)
					torn, err := os.ReadFile(path)
					require.NoError(t, err)

					// Readers skip the torn tail.
					assert.Equal(t, good, allRecords(t, s))

					// A writer appends to its own segment, never after it.
					require.NoError(t, s.Append(context.Background(), []Record{record(2)}))
					assert.NotEqual(t, path, s.SegmentPath())
					after, err := os.ReadFile(path)
					require.NoError(t, err)
					assert.True(t, bytes.Equal(torn, after), "the torn file was changed")
					assert.Equal(t, line(t, record(2)), string(readRegistry(t, s)))
					assert.Equal(t, append(good, record(2)), allRecords(t, s))
					assert.Empty(t, tornFiles(t, s))

					// A compaction sets the tail aside and removes the file.
					_, err = s.Compact(context.Background(), keepAll)
					require.NoError(t, err)
					assert.NoFileExists(t, path)
					set := tornFiles(t, s)
					require.Len(t, set, 1)
					assert.True(t, strings.HasPrefix(set[0], path+".torn-"), "%s is not beside %s", set[0], path)
					aside, err := os.ReadFile(set[0])
					require.NoError(t, err)
					assert.True(t, string(aside) == tt.tail, "set-aside bytes differ: %d bytes", len(aside))
					assert.Equal(t, append(good, record(2)), allRecords(t, s))
				})
			}
		}
	}
}

// TestFailedWriteStartsNewSegment: a Store whose write tore its own
// segment (the write failed half done) never appends after the torn line:
// it starts another segment, and the record is appended whole there.
func TestFailedWriteStartsNewSegment(t *testing.T) {
	var tear atomic.Bool
	s := newFaulty(t, func(c faulty.Call) error {
		if c.Method == faulty.Write && tear.Load() {
			c.Tear()
			return syscall.ENOSPC
		}
		return nil
	})
	require.NoError(t, s.Append(context.Background(), []Record{record(0)}))
	first := s.SegmentPath()
	tear.Store(true)
	err := s.Append(context.Background(), []Record{record(1)})
	tear.Store(false)
	require.ErrorIs(t, err, syscall.ENOSPC)

	require.NoError(t, s.Append(context.Background(), []Record{record(1), record(2)}))
	assert.NotEqual(t, first, s.SegmentPath())
	assert.Equal(t, line(t, record(1))+line(t, record(2)), string(readRegistry(t, s)))
	data, err := os.ReadFile(first)
	require.NoError(t, err)
	half := line(t, record(1))
	assert.Equal(t, line(t, record(0))+half[:len(half)/2], string(data), "appended after a torn line")
	assert.Equal(t, []Record{record(0), record(1), record(2)}, allRecords(t, s))
}

func TestBadLines(t *testing.T) {
	s := newStore(t)
	line := func(r Record) string {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		return string(b) + "\n"
	}
	lines := []string{
		line(record(0)),
		"garbage\n",
		line(record(1)),
		"{}\n",                       // no hash
		"\n",                         // blank
		`{"hash":"x","size":` + "\n", // cut short, yet not the last line
		`{"hash":1}` + "\n",          // wrong type
		`{"hash":"x"} trailing` + "\n",
		`{"hash":"x"}{"hash":"y"}` + "\n",
		`["hash"]` + "\n",
		"null\n",
		line(record(2)),
	}
	// The same lines in the single-file registry and in a segment: each
	// bad line is reported with the file it is in.
	seg := s.where(segmentHandle(newWriter(Shard{})))
	appendRaw(t, s.RegistryPath(), strings.Join(lines, ""))
	appendRaw(t, seg, strings.Join(lines, ""))

	var recs []Record
	var bad []*BadLineError
	err := s.Records(context.Background(), func(r Record) error {
		recs = append(recs, r)
		return nil
	}, func(e *BadLineError) { bad = append(bad, e) })
	require.NoError(t, err)
	good := []Record{record(0), record(1), record(2)}
	assert.Equal(t, append(good, good...), recs, "records after a bad line are lost")

	offset := func(n int) int64 { // byte offset of 1-based line n
		var off int64
		for _, l := range lines[:n-1] {
			off += int64(len(l))
		}
		return off
	}
	wantLines := []int{2, 4, 5, 6, 7, 8, 9, 10, 11}
	wantErrs := []string{"not JSON (at byte 1 of the line)", "a record without a hash", "not JSON (at byte 1 of the line)",
		"not JSON (at byte 20 of the line)", `not a record: "hash" is a JSON number`, "not JSON (at byte 14 of the line)",
		"not JSON (at byte 13 of the line)", "not a record: a JSON array", "a record without a hash"}
	require.Len(t, bad, 2*len(wantLines))
	for i := range bad {
		e, n, path := bad[i], wantLines[i%len(wantLines)], s.RegistryPath()
		if i >= len(wantLines) {
			path = seg
		}
		assert.Equal(t, path, e.Path)
		assert.Equal(t, n, e.Line)
		assert.Equal(t, offset(n), e.Offset, "line %d", n)
		assert.Error(t, e.Err)
		assert.Contains(t, e.Error(), fmt.Sprintf("%s:%d: byte %d: bad registry record: ", path, n, offset(n)))
		assert.Equal(t, wantErrs[i%len(wantLines)], e.Err.Error(), "line %d: a few words, not the decoder's dump", n)
		var be *BadLineError
		assert.True(t, errors.As(error(e), &be))
		assert.Equal(t, e.Err, errors.Unwrap(e))
	}

	// Without a bad callback the good records still come through.
	n := 0
	require.NoError(t, s.Records(context.Background(), func(Record) error { n++; return nil }, nil))
	assert.Equal(t, 6, n)

	// The files with bad lines are left as they are by the next append.
	require.NoError(t, s.Append(context.Background(), []Record{record(3)}))
	for _, path := range []string{s.RegistryPath(), seg} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, strings.Join(lines, ""), string(data), "append changed %s", path)
	}
	assert.Empty(t, tornFiles(t, s))
}

// TestConcurrentAppend: writers appending at once, some sharing a Store,
// write one segment per Store, of whole lines, and readers see every
// record, each writer's in its order.
func TestConcurrentAppend(t *testing.T) {
	const writers, each = 8, 50
	dir := filepath.Join(t.TempDir(), "artifacts")
	shared := New(local.New(dir))
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		// Half the writers share a Store, half have their own, as
		// separate processes would.
		s := shared
		if w%2 == 1 {
			s = New(local.New(dir))
		}
		wg.Go(func() {
			for i := range each {
				r := record(w*each + i)
				r.Session = fmt.Sprintf("writer-%d", w)
				if err := s.Append(context.Background(), []Record{r}); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}

	segs := segments(t, dir)
	assert.Len(t, segs, 1+writers/2, "one segment per Store")
	total := 0
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		require.NoError(t, err)
		require.True(t, bytes.HasSuffix(data, []byte("\n")))
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		total += len(lines)
		for i, l := range lines {
			assert.True(t, json.Valid([]byte(l)), "%s: line %d is torn or interleaved: %q", seg, i+1, l)
		}
	}
	assert.Equal(t, writers*each, total)

	recs := allRecords(t, shared)
	require.Len(t, recs, writers*each)
	next := make([]int, writers) // per writer, the next record expected
	for _, r := range recs {
		var w int
		_, err := fmt.Sscanf(r.Session, "writer-%d", &w)
		require.NoError(t, err)
		assert.Equal(t, record(w*each+next[w]).Hash, r.Hash, "writer %d: records out of order", w)
		next[w]++
	}
	for w, n := range next {
		assert.Equal(t, each, n, "writer %d", w)
	}
	assert.Empty(t, tornFiles(t, shared))
}

// abcSum is the SHA-256 of "abc", as sha256sum prints it.
const abcSum = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

// recordData is the artifact record(i) names.
func recordData(i int) string { return fmt.Sprintf("artifact %d", i) }

// TestOneLinePerArtifactAndTranscript: the records of one artifact at
// several places of one transcript are one line on disk, with the places
// as refs; readers are given one record per place, as appended; appending
// them again adds nothing.
func TestOneLinePerArtifactAndTranscript(t *testing.T) {
	s := newStore(t)
	_, _, err := s.Put(context.Background(), []byte(recordData(1)))
	require.NoError(t, err)
	first := record(1)
	first.Source, first.Entry, first.ToolCallID = "/t/a.jsonl", "e1", "call_1"
	second := first
	second.Site, second.Entry, second.Line, second.Summary = "toolUseResult.stdout", "e2", 9, "another summary"
	third := first
	third.Source = "/t/b.jsonl" // another transcript: a line of its own
	recs := []Record{first, second, third}
	require.NoError(t, s.Append(context.Background(), recs))
	data, err := os.ReadFile(s.SegmentPath())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 2, "one line per artifact and transcript:\n%s", data)
	assert.Contains(t, lines[0], `"refs":[`)
	assert.NotContains(t, lines[1], `"refs"`, "a single place keeps the flat record")
	assert.Equal(t, recs, allRecords(t, s))

	require.NoError(t, mustOpen(t, s.Dir()).Append(context.Background(), recs))
	assert.Equal(t, recs, allRecords(t, s), "a rerun appends nothing")
}

// TestAppendsShareFsyncs: Appends of several transcripts at once are made
// durable by fewer fsyncs than Appends, and each one that returns has its
// records in the registry. When the shared fsync fails, every Append it
// covered fails, never only the one that made it.
func TestAppendsShareFsyncs(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			var (
				mu       sync.Mutex
				syncs    int
				counting atomic.Bool
			)
			s := newFaulty(t, func(c faulty.Call) error {
				if c.Method != faulty.Sync || !counting.Load() {
					return nil
				}
				mu.Lock()
				syncs++
				first := syncs == 1
				mu.Unlock()
				if first {
					time.Sleep(100 * time.Millisecond) // the others write meanwhile
					if fail {
						return syscall.EIO
					}
				}
				return nil
			})
			ctx := context.Background()
			require.NoError(t, s.Append(ctx, putAll(t, s, 0))) // the segment exists
			const n = 8
			recs := make([][]Record, n)
			for i := range recs {
				recs[i] = putAll(t, s, i+1)
			}
			counting.Store(true)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range recs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i > 0 {
						time.Sleep(20 * time.Millisecond) // after the first has written
					}
					errs[i] = s.Append(ctx, recs[i])
				}()
			}
			wg.Wait()
			counting.Store(false)
			assert.Less(t, syncs, n, "every Append made an fsync of its own")
			got := allRecords(t, mustOpen(t, s.Dir()))
			failed := 0
			for i, err := range errs {
				if err != nil {
					failed++
					continue
				}
				assert.Contains(t, got, recs[i][0], "Append %d returned, its record is not there", i)
			}
			if fail {
				assert.Greater(t, failed, 1, "the failed fsync covered the first Append only")
			} else {
				assert.Zero(t, failed)
			}
		})
	}
}

// FuzzKeyOfLine checks that the key Append takes from the line it writes
// is the key readers compute from the record, whatever the creation time
// and the strings around it hold.
func FuzzKeyOfLine(f *testing.F) {
	f.Add("2026-11-21T10:08:54Z", "read a.go", "s1")
	f.Add("", "", "")
	f.Add(`a"b\c`, `,"createdAt":"x"`, "\u00e9\U0001F600")
	f.Add("\\", `\"createdAt\":\"`, "<>&\u2028")
	f.Add("\x00\x1f\x7f", "\"", "\\\\\"")
	f.Fuzz(func(t *testing.T, createdAt, summary, session string) {
		for _, r := range []Record{
			{Hash: strings.Repeat("ab", 32), Size: 7, Media: "text/plain", Session: session, CreatedAt: createdAt, Summary: summary},
			{Hash: "x", Tool: summary, CreatedAt: createdAt, Refs: []Ref{{Site: createdAt, Summary: summary}, {Site: "/b"}}},
		} {
			b, err := api.Marshal(r)
			if err != nil {
				t.Skip(err)
			}
			want, err := keyOf(r)
			require.NoError(t, err)
			got, ok := keyOfLine(b)
			require.True(t, ok, "%s", b)
			require.Equal(t, want, got, "%s", b)
		}
	})
}
