package registry

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// padded returns record r with a summary that makes its line size bytes,
// and the line.
func padded(t *testing.T, r Record, size int) (Record, string) {
	t.Helper()
	r.Summary = ""
	short := strings.TrimSuffix(line(t, r), "}\n")
	r.Summary = strings.Repeat("s", size-len(short)-len(`,"summary":""}`+"\n"))
	l := short + `,"summary":"` + r.Summary + `"}` + "\n"
	require.Equal(t, size, len(l))
	return r, l
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLongLines: a registry line over maxLine is reported as a bad line,
// with its file, number, offset and length, and passed over without being
// held, even a record; one of maxLine bytes is read. Lookups through an
// index report it too, a compaction keeps its bytes, and a torn tail that
// long is set aside without being held either.
func TestLongLines(t *testing.T) {
	smallIndexes(t)
	s := newStore(t)
	atLimit, atLimitLine := padded(t, record(3), maxLine)
	_, huge := padded(t, record(4), 32<<20)
	_, overLimit := padded(t, record(5), maxLine+1)
	lines := []string{line(t, record(0)), huge, line(t, record(1)), atLimitLine, overLimit, line(t, record(2))}
	seg := s.where(segmentHandle(newWriter(Shard{})))
	torn := strings.Repeat("t", 8<<20)
	appendRaw(t, seg, strings.Join(lines, "")+torn)
	offset := func(n int) int64 {
		return int64(len(strings.Join(lines[:n-1], "")))
	}
	type bad struct {
		line      int
		off, size int64
	}
	want := []bad{{2, offset(2), 32 << 20}, {5, offset(5), maxLine + 1}}

	read := func(keys []Key) ([]Record, []bad) {
		var recs []Record
		var bads []bad
		err := s.RecordsMatching(context.Background(), keys, func(r Record, _ Pos) error {
			recs = append(recs, r)
			return nil
		}, func(e *BadLineError) {
			var tl *LineTooLongError
			if assert.True(t, errors.As(e, &tl), "%v", e) {
				assert.Equal(t, seg, e.Path, "the file of the line")
				assert.ErrorContains(t, e, "over the 1048576 a registry record may take")
				bads = append(bads, bad{e.Line, e.Offset, tl.Size})
			}
		})
		require.NoError(t, err)
		return recs, bads
	}
	var recs []Record
	var bads []bad
	n := allocated(func() { recs, bads = read(nil) })
	assert.Equal(t, []Record{record(0), record(1), atLimit, record(2)}, recs)
	assert.Equal(t, want, bads)
	assert.Less(t, n, uint64(8<<20), "reading a registry with a line of 32 MiB allocated %d bytes", n)

	for range 2 { // reads whole and makes the index, then through it
		recs, bads = read([]Key{{FieldHash, record(1).Hash}})
		assert.Contains(t, recs, record(1))
		assert.Equal(t, want, bads)
		_, err := os.Stat(indexPath(seg))
		require.NoError(t, err)
	}

	n = allocated(func() {
		_, err := s.Compact(context.Background(), keepAll)
		require.NoError(t, err)
	})
	assert.Less(t, n, uint64(16<<20), "compacting a registry with a line of 32 MiB and a torn tail of 8 MiB allocated %d bytes", n)
	merged := segments(t, s.Dir())
	require.Len(t, merged, 1)
	seg = merged[0]
	data, err := os.ReadFile(merged[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), strings.Join(lines, ""), "the compaction dropped lines")
	recs, bads = read(nil)
	assert.Equal(t, []Record{record(0), record(1), atLimit, record(2)}, recs)
	assert.Len(t, bads, 2)
	aside := tornFiles(t, s)
	require.Len(t, aside, 1)
	data, err = os.ReadFile(aside[0])
	require.NoError(t, err)
	assert.Equal(t, torn, string(data))
}

// TestAppendSplitsLongRecord: the record of an artifact referred to from
// so many places of one transcript that its line would be over maxLine is
// written as several lines, each read back, with every place; appended
// again, it adds nothing.
func TestAppendSplitsLongRecord(t *testing.T) {
	s := newStore(t)
	var recs []Record
	for i := range 20000 {
		r := record(0)
		r.Line, r.Entry = i+1, strings.Repeat("e", 40)+string(rune('a'+i%26))
		recs = append(recs, r)
	}
	require.NoError(t, s.Append(context.Background(), recs))
	data := readRegistry(t, s)
	lines := strings.SplitAfter(string(data), "\n")
	assert.Greater(t, len(lines)-1, 1, "one line of %d bytes", len(data))
	for i, l := range lines {
		assert.LessOrEqual(t, len(l), maxLine, "line %d", i+1)
	}
	assert.Equal(t, recs, allRecords(t, s))
	require.NoError(t, s.Append(context.Background(), recs))
	assert.Equal(t, data, readRegistry(t, s), "appended again")

	r := record(1)
	r.Entry = strings.Repeat("x", maxLine)
	err := s.Append(context.Background(), []Record{r})
	var tl *LineTooLongError
	assert.True(t, errors.As(err, &tl), "a record of one place over maxLine: %v", err)
}
