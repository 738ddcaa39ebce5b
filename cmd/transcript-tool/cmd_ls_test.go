package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/internal/reggen"
)

// fullDisk is an output that takes limit bytes, then fails every write
// as a full disk does, counting the writes after the first that failed.
type fullDisk struct {
	limit, n int
	after    int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.n >= d.limit {
		d.after++
		return 0, syscall.ENOSPC
	}
	k := min(len(p), d.limit-d.n)
	d.n += k
	if k < len(p) {
		return k, syscall.ENOSPC
	}
	return k, nil
}

// indexedRegistry writes a store whose registry is one segment of 20,000
// generated records (some 2 MB) and lists it once, which writes its
// index: it returns the store, the segment, its bytes and that listing.
func indexedRegistry(t *testing.T) (store, seg string, data []byte, listed result) {
	t.Helper()
	store = filepath.Join(t.TempDir(), "store")
	seg = filepath.Join(store, "registry", "20200101T000000.000000000Z_gen_1_1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(seg), 0o700))
	var b bytes.Buffer
	require.NoError(t, reggen.Write(&b, 20000))
	require.NoError(t, os.WriteFile(seg, b.Bytes(), 0o600))
	listed = runCLI(t, "ls", "--store", store)
	require.Equal(t, exitOK, listed.code, listed.stderr)
	require.FileExists(t, strings.TrimSuffix(seg, ".jsonl")+".idx", "listed through the index")
	return store, seg, b.Bytes(), listed
}

// TestLsOutputFails: ls whose output cannot be written stops at the
// first write that fails and says why, as a table and as JSON.
func TestLsOutputFails(t *testing.T) {
	store, _, _, _ := indexedRegistry(t)

	for _, args := range [][]string{{"ls", "--store", store}, {"ls", "--json", "--store", store}} {
		out := &fullDisk{limit: 300 << 10}
		var stderr strings.Builder
		code := run(context.Background(), append([]string{"transcript-tool"}, args...), strings.NewReader(""), out, &stderr)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, stderr.String(), "no space left on device", "%v", args)
		assert.Zero(t, out.after, "%v: a write after the one that failed", args)
	}
}

// TestWriteRows: the rows of a table are written whole and in the
// order of their ranks, whichever goroutine laid them out; a write that
// fails stops the rows at once, none written after it.
func TestWriteRows(t *testing.T) {
	const n = 50000 // some 40 chunks
	tb := newLsTable("/", 0)
	rk := extsort.NewRanked(n, 4096, 1<<20)
	defer rk.Close()
	var rec []byte
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		rec = tb.appendRow(rec[:0], lsRow{ID: fmt.Sprintf("%064x", i), Size: int64(i), Summary: fmt.Sprint("row ", i)})
		rk.Add(int64(i), rec)
	}
	var out bytes.Buffer
	require.NoError(t, tb.writeRows(&out, rk))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Equal(t, n, len(lines), "lines")
	for i, l := range lines {
		if !strings.HasSuffix(l, fmt.Sprint("  row ", i)) {
			t.Fatalf("line %d is %q", i, l)
		}
	}

	rk = extsort.NewRanked(n, 4096, 1<<20)
	defer rk.Close()
	for i := range n {
		rk.Add(int64(i), tb.appendRow(rec[:0], lsRow{ID: fmt.Sprintf("%064x", i)}))
	}
	full := &fullDisk{limit: 1000}
	assert.ErrorIs(t, tb.writeRows(full, rk), syscall.ENOSPC)
	assert.Zero(t, full.after, "writes after the one that failed")
}

// TestLsWideTerminal: on a terminal wide enough for a summary of more
// bytes than a cell's record counts (two bytes of size, see appendCell),
// the table's rows are whole and in order, each summary cut where its
// cell ends, with an ellipsis.
func TestLsWideTerminal(t *testing.T) {
	dir := t.TempDir()
	seg := filepath.Join(dir, "registry", "20200101T000000.000000000Z_gen_1_1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(seg), 0o700))
	summary := strings.Repeat("🙂", 30000) // 120 KB
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, `{"hash":"%s","size":1,"media":"text/plain","tool":"bash","session":"s","source":"/t.jsonl","createdAt":"2027-01-01T00:00:0%dZ","summary":%q}`+"\n",
			strings.Repeat(fmt.Sprint(i+1), 64), i, summary)
	}
	require.NoError(t, os.WriteFile(seg, []byte(b.String()), 0o600))
	store, err := openStore(dir)
	require.NoError(t, err)
	l, err := store.Listing(t.Context(), nil, nil, nil)
	require.NoError(t, err)
	defer l.Close()
	const columns = 20000
	var out bytes.Buffer
	require.NoError(t, tableLs(&out, l, "/", columns))

	rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, rows, 4)
	for i, row := range rows[1:] {
		assert.True(t, strings.HasPrefix(row, strings.Repeat(fmt.Sprint(3-i), 12)+" "), "row %d starts %q", i, row[:min(len(row), 20)])
		assert.LessOrEqual(t, utf8.RuneCountInString(row), columns, "row %d", i)
		cut, ok := strings.CutSuffix(row[strings.LastIndex(row, "  ")+2:], display.Ellipsis)
		assert.True(t, ok, "row %d: the summary is cut", i)
		assert.True(t, strings.HasPrefix(summary, cut), "row %d: the summary's cell is its start", i)
	}
}

// TestLsRegistryEditedUnderItsIndex: a line of an indexed registry
// edited in place, keeping its length and still a record, where the
// index's samples miss it (its creation time moved to the future): ls
// lists it as the registry now says, the newest row, exactly as it lists
// the registry with no index.
func TestLsRegistryEditedUnderItsIndex(t *testing.T) {
	store, seg, data, _ := indexedRegistry(t)

	// A line between the 4 KiB samples at 8/17 and 9/17 of the segment.
	start := len(data)*8/17 + 16<<10
	start += bytes.IndexByte(data[start:], '\n') + 1
	end := start + bytes.IndexByte(data[start:], '\n')
	require.Less(t, end, len(data)*9/17)
	line := data[start:end]
	at := bytes.Index(line, []byte(`"createdAt":"2026-`))
	require.GreaterOrEqual(t, at, 0, "%s", line)
	copy(line[at+len(`"createdAt":"`):], "2099")
	var rec struct{ Hash string }
	require.NoError(t, json.Unmarshal(line, &rec))
	require.NoError(t, os.WriteFile(seg, data, 0o600)) // in place: same inode

	got := runCLI(t, "ls", "--store", store)
	assert.Equal(t, exitOK, got.code, got.stderr)
	rows := strings.SplitN(got.stdout, "\n", 3)
	require.Len(t, rows, 3)
	assert.True(t, strings.HasPrefix(rows[1], rec.Hash[:12]+" "), "the edited record is the newest: %q", rows[1])

	require.NoError(t, os.Remove(strings.TrimSuffix(seg, ".jsonl")+".idx"))
	whole := runCLI(t, "ls", "--store", store)
	require.Equal(t, exitOK, whole.code, whole.stderr)
	want, have := strings.Split(whole.stdout, "\n"), strings.Split(got.stdout, "\n")
	for i := range min(len(want), len(have)) {
		if want[i] != have[i] {
			t.Fatalf("row %d is %q; with no index it is %q", i, have[i], want[i])
		}
	}
	assert.Equal(t, len(want), len(have), "rows")
}

// TestLsRegistryChangedUnderItsIndex: when a line of an indexed registry
// is changed in place after its index was written (a same-length edit the
// index's samples miss), ls lists the registry again, read whole, and
// tells the line that no longer holds a record, with status 1.
func TestLsRegistryChangedUnderItsIndex(t *testing.T) {
	store, seg, data, first := indexedRegistry(t)

	// A line past the first 64 KiB and the 4 KiB at 1/17 the index
	// samples, before 2/17: its record made a line that does not parse.
	start := len(data)/17 + 16<<10
	start += bytes.IndexByte(data[start:], '\n') + 1
	require.Less(t, start, 2*len(data)/17)
	line := bytes.Count(data[:start], []byte("\n")) + 1
	data[start] = '#'
	require.NoError(t, os.WriteFile(seg, data, 0o600)) // in place: same inode

	got := runCLI(t, "ls", "--store", store)
	assert.Equal(t, exitProblems, got.code, got.stderr)
	assert.Contains(t, got.stderr, fmt.Sprintf(":%d", line), "the line is told")
	assert.Equal(t, strings.Count(first.stdout, "\n")-1, strings.Count(got.stdout, "\n"), "one row fewer")
}
