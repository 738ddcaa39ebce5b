package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func record(i int) Record {
	data := fmt.Sprintf("artifact %d", i)
	return Record{
		Hash:      Sum([]byte(data)).String(),
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
	err := s.Records(func(r Record) error {
		recs = append(recs, r)
		return nil
	}, func(e *BadLineError) {
		t.Errorf("unexpected bad line: %v", e)
	})
	require.NoError(t, err)
	return recs
}

func readRegistry(t *testing.T, s *Store) []byte {
	t.Helper()
	b, err := os.ReadFile(s.RegistryPath())
	require.NoError(t, err)
	return b
}

func appendRaw(t *testing.T, s *Store, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(s.Dir(), 0o700))
	f, err := os.OpenFile(s.RegistryPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func tornFiles(t *testing.T, s *Store) []string {
	t.Helper()
	names, err := filepath.Glob(s.RegistryPath() + ".torn-*")
	require.NoError(t, err)
	return names
}

func TestAppendRecords(t *testing.T) {
	s := newStore(t)
	tricky := record(0)
	tricky.Summary = "line one\nline two\r\n\"quoted\" <b>&amp;</b> \\ é 😀 \u2028 \x00"
	tricky.ToolCallID = "call_1"
	tricky.Source = "/home/u/.pi/agent/sessions/a b.jsonl"
	tricky.Entry = "e1"
	want := []Record{tricky, record(1), {Hash: record(2).Hash}}

	require.NoError(t, s.Append(want[:1]))
	require.NoError(t, s.Append(want[1:]))
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
	require.NoError(t, s.Append([]Record{r}))
	assert.Equal(t,
		`{"hash":"`+abcSum+`","size":3,"media":"text/plain","site":"x","toolCallId":"c","createdAt":"t"}`+"\n",
		string(readRegistry(t, s)))
}

func TestAppendNothing(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append(nil))
	_, err := os.Stat(s.Dir())
	assert.ErrorIs(t, err, fs.ErrNotExist, "appending nothing created the store")
}

func TestRecordsMissingRegistry(t *testing.T) {
	s := newStore(t)
	called := false
	err := s.Records(func(Record) error { called = true; return nil }, nil)
	assert.NoError(t, err)
	assert.False(t, called)
}

func TestRecordsStopsOnCallbackError(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0), record(1), record(2)}))
	errStop := errors.New("stop")
	n := 0
	err := s.Records(func(Record) error {
		n++
		if n == 2 {
			return errStop
		}
		return nil
	}, nil)
	assert.ErrorIs(t, err, errStop)
	assert.Equal(t, 2, n)
}

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
		for _, only := range []bool{false, true} {
			name := tt.name
			if only {
				name += " in an otherwise empty registry"
			}
			t.Run(name, func(t *testing.T) {
				s := newStore(t)
				var good []Record
				var intact []byte
				if !only {
					good = []Record{record(0), record(1)}
					require.NoError(t, s.Append(good))
					intact = readRegistry(t, s)
				}
				appendRaw(t, s, tt.tail)

				// Readers skip the torn tail.
				assert.Equal(t, good, allRecords(t, s))

				// A writer sets it aside, cuts it off and appends after
				// the last intact line.
				require.NoError(t, s.Append([]Record{record(2)}))
				torn := tornFiles(t, s)
				require.Len(t, torn, 1)
				aside, err := os.ReadFile(torn[0])
				require.NoError(t, err)
				assert.True(t, aside != nil && string(aside) == tt.tail, "set-aside bytes differ: %d bytes", len(aside))

				data := readRegistry(t, s)
				assert.True(t, bytes.HasPrefix(data, intact), "intact lines changed")
				line, err := json.Marshal(record(2))
				require.NoError(t, err)
				assert.Equal(t, string(line)+"\n", string(data[len(intact):]))
				assert.Equal(t, append(good, record(2)), allRecords(t, s))
			})
		}
	}
}

func TestTornTailSetAsideOnce(t *testing.T) {
	s := newStore(t)
	require.NoError(t, s.Append([]Record{record(0)}))
	appendRaw(t, s, "torn")
	require.NoError(t, s.Append([]Record{record(1)}))
	require.NoError(t, s.Append([]Record{record(2)}))
	assert.Len(t, tornFiles(t, s), 1, "an intact registry set something aside")
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
	require.NoError(t, os.MkdirAll(s.Dir(), 0o700))
	require.NoError(t, os.WriteFile(s.RegistryPath(), []byte(strings.Join(lines, "")), 0o600))

	var recs []Record
	var bad []*BadLineError
	err := s.Records(func(r Record) error {
		recs = append(recs, r)
		return nil
	}, func(e *BadLineError) { bad = append(bad, e) })
	require.NoError(t, err)
	assert.Equal(t, []Record{record(0), record(1), record(2)}, recs, "records after a bad line are lost")

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
	require.Len(t, bad, len(wantLines))
	for i, n := range wantLines {
		e := bad[i]
		assert.Equal(t, s.RegistryPath(), e.Path)
		assert.Equal(t, n, e.Line)
		assert.Equal(t, offset(n), e.Offset, "line %d", n)
		assert.Error(t, e.Err)
		assert.Contains(t, e.Error(), fmt.Sprintf("%s:%d: byte %d: bad registry record: ", s.RegistryPath(), n, offset(n)))
		assert.Equal(t, wantErrs[i], e.Err.Error(), "line %d: a few words, not the decoder's dump", n)
		var be *BadLineError
		assert.True(t, errors.As(error(e), &be))
		assert.Equal(t, e.Err, errors.Unwrap(e))
	}

	// Without a bad callback the good records still come through.
	n := 0
	require.NoError(t, s.Records(func(Record) error { n++; return nil }, nil))
	assert.Equal(t, 3, n)

	// A bad line in the middle is kept as it is by the next append.
	before := readRegistry(t, s)
	require.NoError(t, s.Append([]Record{record(3)}))
	after := readRegistry(t, s)
	assert.True(t, bytes.HasPrefix(after, before), "append rewrote earlier lines")
	assert.Empty(t, tornFiles(t, s))
}

func TestConcurrentAppend(t *testing.T) {
	const writers, each = 8, 50
	dir := filepath.Join(t.TempDir(), "artifacts")
	shared := Open(dir)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		// Half the writers share a Store, half have their own, as
		// separate processes would.
		s := shared
		if w%2 == 1 {
			s = Open(dir)
		}
		wg.Go(func() {
			for i := range each {
				r := record(w*each + i)
				r.Session = fmt.Sprintf("writer-%d", w)
				if err := s.Append([]Record{r}); err != nil {
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

	data := readRegistry(t, shared)
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	assert.Len(t, lines, writers*each)
	for i, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "line %d is torn or interleaved: %q", i+1, l)
	}

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
