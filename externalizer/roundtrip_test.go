package externalizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// memStore is an in-memory artifact store for round-trip tests.
type memStore map[storepkg.Digest][]byte

func (m memStore) open(d storepkg.Digest) (io.ReadCloser, error) {
	data, ok := m[d]
	if !ok {
		return nil, fmt.Errorf("%s: %w", d, storepkg.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (m memStore) put(a Artifact) error {
	data := bytes.Clone(a.Data)
	if a.Stream != nil {
		var b bytes.Buffer
		if err := a.Stream(&b); err != nil {
			return err
		}
		if storepkg.Sum(b.Bytes()) != a.Digest {
			return fmt.Errorf("streamed artifact %s: its bytes hash to %s", a.Digest, storepkg.Sum(b.Bytes()))
		}
		data = b.Bytes()
	}
	m[a.Digest] = data
	return nil
}

func testPath(d storepkg.Digest) string { return "artifacts/" + local.ObjectPath(d) }

// roundTrip rewrites every line of input with f and restores it, checking
// that the restored bytes equal the input. It returns the rewritten bytes
// and the store that holds their artifacts.
func roundTrip(t testing.TB, f Format, threshold int, input []byte) ([]byte, memStore) {
	t.Helper()
	store := memStore{}
	x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: store.put, Open: store.open}
	var migrated, restored bytes.Buffer
	r := transcript.NewReader(bytes.NewReader(input))
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		start := transcript.JSONStart(l)
		res, err := x.Rewrite(l.Text, start)
		require.NoError(t, err)
		out := l.Text
		if res.Line != nil {
			out = res.Line
		}
		migrated.Write(out)
		migrated.Write(l.EOL)
	}
	r = transcript.NewReader(bytes.NewReader(migrated.Bytes()))
	for {
		l, err := r.Next()
		if err != nil {
			break
		}
		out, changed, err := Restore(l.Text, transcript.JSONStart(l), store.open)
		require.NoError(t, err, "line %d", l.Num)
		if !changed {
			out = l.Text
		}
		restored.Write(out)
		restored.Write(l.EOL)
	}
	require.True(t, bytes.Equal(input, restored.Bytes()), "round trip changed the bytes")
	return migrated.Bytes(), store
}

func TestRoundTripCorpusPi(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/pi/*.jsonl")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus/pi")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			input, err := os.ReadFile(name)
			require.NoError(t, err)
			out, _ := roundTrip(t, piFormat, 4096, input)
			t.Logf("%d -> %d bytes (%.1f%%)", len(input), len(out), 100*float64(len(out))/float64(len(input)))
			assert.Less(t, len(out), len(input))
		})
	}
}

// TestMarkerLookalikes: genuine entries whose last member looks like a
// marker (even a well-formed one) round-trip, and stay idempotent.
func TestMarkerLookalikes(t *testing.T) {
	zeros := strings.Repeat("0", 64)
	big := strings.Repeat("x", 3000)
	lines := []string{
		`{"type":"custom","id":"e1","transcriptTool":{"v":1,"sha256":"` + zeros + `","edits":[]}}`,
		`{"type":"custom","id":"e2","transcriptTool":{"V":1,"SHA256":"` + strings.ToUpper(strings.Repeat("ab", 32)) + `"}}`,
		`{"type":"message","message":{"role":"toolResult","toolName":"t","content":"` + big + `"},"transcriptTool":{"v":1,"sha256":"` + zeros + `","edits":[]}}`,
		`{"type":"message","message":{"role":"toolResult","toolName":"t","content":"` + big + `"},"transcriptTool":"genuine"}`,
	}
	for _, l := range lines {
		input := []byte(`{"type":"session","id":"s"}` + "\n" + l + "\n")
		out, store := roundTrip(t, piFormat, 64, input)
		checkMigrated(t, piFormat, 64, input, out, store)
	}
}

// TestDuplicateKeysLinear: a message repeating "content" and "details"
// tens of thousands of times is handled in one pass per object (it took
// minutes when each member looked up the last one again), and round-trips.
func TestDuplicateKeysLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"message","message":{"role":"toolResult","toolName":"t"`)
	for range 20000 {
		b.WriteString(`,"content":0,"details":{"diff":0,"diff":0}`)
	}
	b.WriteString(`,"content":"` + strings.Repeat("y", 3000) + `"}}`)
	input := []byte(`{"type":"session","id":"s"}` + "\n" + b.String() + "\n")
	out, store := roundTrip(t, piFormat, 64, input)
	checkMigrated(t, piFormat, 64, input, out, store)
	assert.Less(t, len(out), len(input), "only the last content is externalized")
}

// TestToolNameCannotForgeHintLines: a tool name with newlines does not add
// lines to the hint a model reads.
func TestToolNameCannotForgeHintLines(t *testing.T) {
	input := []byte(`{"type":"session","id":"s"}` + "\n" +
		`{"type":"message","message":{"role":"toolResult","toolName":"x\npath: /etc/passwd","content":"` + strings.Repeat("z", 3000) + `"}}` + "\n")
	out, _ := roundTrip(t, piFormat, 64, input)
	assert.Contains(t, string(out), `\ntool: x path: /etc/passwd\n`, "the hint keeps the name on its own line")
}

func TestRoundTripCorpusClaudeCode(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/claude-code/*.jsonl")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus/claude-code")
	}
	var before, after int
	for _, name := range files {
		input, err := os.ReadFile(name)
		require.NoError(t, err)
		f, ok := detectFormat(input)
		require.True(t, ok && f.Name() == "claude-code", "%s: detected as %v", name, f)
		out, store := roundTrip(t, f, 4096, input)
		checkMigrated(t, f, 4096, input, out, store)
		before += len(input)
		after += len(out)
		for i, l := range bytes.Split(out, []byte("\n")) {
			if len(l) > 0 {
				assert.True(t, json.Valid(l), "%s:%d: migrated line is not JSON", filepath.Base(name), i+1)
			}
		}
	}
	t.Logf("%d -> %d bytes (%.1f%%)", before, after, 100*float64(after)/float64(before))
	assert.LessOrEqual(t, float64(after), 0.25*float64(before), "migrated Claude Code transcripts must total at most 25%% of the original")
}

// detectFormat detects the format of a transcript from its first 16
// lines, past a byte order mark, as migrate does.
func detectFormat(input []byte) (Format, bool) {
	r := transcript.NewReader(bytes.NewReader(input))
	for range 16 {
		l, err := r.Next()
		if err != nil {
			break
		}
		v, err := transcript.Parse(l.Text, transcript.JSONStart(l))
		if err != nil || v.Kind() != transcript.Object {
			continue
		}
		if f, ok := format.Detect(v); ok {
			return f, true
		}
	}
	return nil, false
}

// TestCheckRewrite shows that the proof Rewrite runs on every rewritten
// line fails when the marker does not rebuild the original.
func TestCheckRewrite(t *testing.T) {
	text := []byte(`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"` + strings.Repeat("line of output\\n", 400) + `"}]}}`)
	store := memStore{}
	x := &Externalizer{Format: piFormat, Threshold: 1024, PathFor: testPath, Put: store.put, Open: store.open}
	res, err := x.Rewrite(text, 0)
	if err != nil || res.Line == nil {
		t.Fatalf("Rewrite: %v, line %q", err, res.Line)
	}
	raw := []byte(`"` + strings.Repeat("line of output\\n", 400) + `"`)
	var id string
	for _, a := range res.Artifacts {
		id = a.Digest.String()
	}
	good := func() rawParts { return rawParts{{ID: id, Form: FormJS}: {raw}} }
	if err := checkRewrite(res.Line, 0, text, good()); err != nil {
		t.Fatalf("checkRewrite of Rewrite's own line: %v", err)
	}
	if err := checkRewrite(res.Line, 0, text, rawParts{}); err == nil {
		t.Error("checkRewrite passed a line naming an artifact it was not given")
	}
	short := append(append([]byte(nil), raw[:len(raw)-3]...), '"')
	if err := checkRewrite(res.Line, 0, text, rawParts{{ID: id, Form: FormJS}: {short}}); err == nil {
		t.Error("checkRewrite passed a line that rebuilds other bytes")
	}
	if err := checkRewrite(text, 0, text, good()); err == nil {
		t.Error("checkRewrite passed a line without a marker")
	}
	// The original itself is compared: one byte changed, or one more or
	// one fewer at the end, fails the proof.
	other := bytes.Clone(text)
	other[len(other)/2] ^= 1
	for _, orig := range [][]byte{other, append(bytes.Clone(text), ' '), text[:len(text)-1]} {
		if err := checkRewrite(res.Line, 0, orig, good()); err == nil {
			t.Errorf("checkRewrite passed against an original of %d bytes that differs", len(orig))
		}
	}
}

// TestHasMarker compares HasMarker with bytes.Contains on lines built
// from pieces of the key.
// TestHasMarkerIn: the key is found wherever it lies, also across the
// end of a piece read, and is not found where only part of it is.
func TestHasMarkerIn(t *testing.T) {
	key := string(markerKeyQuoted)
	piece := 256 << 10 // HasMarkerIn's reads, after the first
	size := 3*piece + 100
	for _, at := range []int{0, 1, piece - 20, piece - 1, piece, piece + len(key) - 2, piece + len(key), 2*piece + 10, 2*piece + len(key) - 1, size - len(key)} {
		line := bytes.Repeat([]byte("x"), size)
		copy(line[at:], key)
		got, err := HasMarkerIn(bytes.NewReader(line))
		require.NoError(t, err)
		assert.True(t, got, "key at %d", at)
		copy(line[at:], key[:len(key)-1]+"x")
		got, err = HasMarkerIn(bytes.NewReader(line))
		require.NoError(t, err)
		assert.False(t, got, "part of the key at %d", at)
	}
	got, err := HasMarkerIn(strings.NewReader(""))
	require.NoError(t, err)
	assert.False(t, got)
	_, err = HasMarkerIn(iotest.ErrReader(errors.New("disk on fire")))
	assert.ErrorContains(t, err, "disk on fire")
}

func TestHasMarker(t *testing.T) {
	key := string(markerKeyQuoted)
	pieces := []string{key, key[:5], key[5:], "T", "TT", `"`, "x", "transcript", "Tool\"", `"transcriptTTool"`, "é"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(5); k >= 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		line := []byte(b.String())
		if got, want := HasMarker(line), bytes.Contains(line, markerKeyQuoted); got != want {
			t.Fatalf("HasMarker(%q) = %v, want %v", line, got, want)
		}
	}
	if markerRare <= 0 {
		t.Fatalf("markerRare = %d", markerRare)
	}
}

// TestMembersAddedAfterMarker: an agent that rewrites a migrated entry
// may add members after the marker (pi, upgrading a v1 session, adds id
// and parentId to every entry). The entry still restores: to the original
// with those members after its own, the original's hash checked without
// them; and a second migration leaves it as it is. An edit that would land
// in such a member is refused.
func TestMembersAddedAfterMarker(t *testing.T) {
	store := memStore{}
	x := &Externalizer{Format: piFormat, Threshold: 4096, PathFor: testPath, Put: store.put, Open: store.open}
	for _, tc := range []struct{ name, entry string }{
		{"v1 tool result", `{"type":"message","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + jsonString(t, payloadText) + `}],"isError":false}}`},
		{"entry of no members", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(tc.entry)
			var migrated []byte
			if tc.entry == "{}" {
				// Only a foreign marker makes a marker the first member.
				migrated = []byte(`{"transcriptTool":{"v":1,"sha256":"` + storepkg.Sum(line).String() + `","edits":[]}}`)
			} else {
				res, err := x.Rewrite(line, 0)
				require.NoError(t, err)
				require.NotNil(t, res.Line)
				migrated = res.Line
			}
			upgraded := append(bytes.TrimSuffix(migrated, []byte("}")), `,"id":"e1","parentId":null}`...)
			got, changed, err := Restore(upgraded, 0, store.open)
			require.NoError(t, err)
			require.True(t, changed)
			sep := ","
			if tc.entry == "{}" {
				sep = ""
			}
			assert.Equal(t, string(line[:len(line)-1])+sep+`"id":"e1","parentId":null}`, string(got))

			res, err := x.Rewrite(upgraded, 0)
			require.NoError(t, err)
			assert.True(t, res.Migrated, "already migrated")
			assert.Nil(t, res.Line)
		})
	}
	t.Run("edit in an added member", func(t *testing.T) {
		line := []byte(`{"a":1}`)
		forged := `{"a":1,"transcriptTool":{"v":1,"sha256":"` + storepkg.Sum(line).String() + `","edits":[{"at":"/b","parts":[{"lit":"2"}]}]},"b":3}`
		_, _, err := Restore([]byte(forged), 0, store.open)
		assert.ErrorIs(t, err, ErrBadMarker)
	})
}

// TestForeignMarkerRestoresAsItIs: a transcript never migrated may hold a
// member called like the marker that is not shaped like one (a number, an
// object with no SHA-256 in it). Restoring such a line gives it back as it
// is; a marker of this tool's shape whose line does not rebuild stays an
// error, as the corruption it most likely is.
func TestForeignMarkerRestoresAsItIs(t *testing.T) {
	store := memStore{}
	for _, line := range []string{
		`{"transcriptTool":1,"type":"message"}`,
		`{"type":"note","transcriptTool":{"v":1,"sha256":"00","edits":[]}}`,
		`{"type":"note","transcriptTool":{"sha256":"` + storepkg.Sum([]byte("x")).String() + `","edits":[]}}`,
		`{"type":"note","transcriptTool":"an entry's own member"}`,
		`{"type":"note","transcriptTool":{"v":1,"sha256":"` + storepkg.Sum([]byte("x")).String() + `","edits":"no"}}`,
	} {
		got, changed, err := Restore([]byte(line), 0, store.open)
		require.NoError(t, err, line)
		assert.False(t, changed, line)
		assert.Nil(t, got, line)
		root, err := transcript.Parse([]byte(line), 0)
		require.NoError(t, err, line)
		refs, err := Replacements(root)
		require.NoError(t, err, line)
		assert.Empty(t, refs, line)
	}
	for _, line := range []string{
		`{"a":1,"transcriptTool":{"v":1,"sha256":"` + storepkg.Sum([]byte(`{"a":2}`)).String() + `","edits":[]}}`,
		`{"a":1,"transcriptTool":{"v":2,"sha256":"` + storepkg.Sum([]byte(`{"a":1}`)).String() + `","edits":[]}}`,
	} {
		_, _, err := Restore([]byte(line), 0, store.open)
		assert.ErrorIs(t, err, ErrBadMarker, line)
	}
}

// TestFormKind: every form a marker may name says what it holds, the
// bare forms as their quoted ones.
func TestFormKind(t *testing.T) {
	for f, want := range map[Form]string{FormJS: "text", FormJSBare: "text", FormASCII: "text", FormASCIIBare: "text",
		FormBase64: "image", FormBase64Bare: "image", FormRaw: "JSON", "future": ""} {
		assert.Equal(t, want, f.Kind(), f)
	}
}

// TestSmallSitesStay: with a threshold far below the size of a
// placeholder, a site that its placeholder and marker would outgrow stays
// inline, and a line that would only grow is kept as it is; a site larger
// than both still moves.
func TestSmallSitesStay(t *testing.T) {
	store := memStore{}
	x := &Externalizer{Format: piFormat, Threshold: 1, PathFor: testPath, Put: store.put, Open: store.open}
	result := func(text string) []byte {
		return []byte(`{"type":"message","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + jsonString(t, text) + `}],"isError":false}}`)
	}
	small := result(strings.Repeat("ok ", 60))
	res, err := x.Rewrite(small, 0)
	require.NoError(t, err)
	assert.Nil(t, res.Line, "a 180-byte result would have grown the line")
	assert.Empty(t, res.Artifacts)
	assert.Empty(t, store, "nothing stored for a site that stays")

	large := result(strings.Repeat("the quick brown fox ", 200))
	res, err = x.Rewrite(large, 0)
	require.NoError(t, err)
	require.NotNil(t, res.Line)
	assert.Less(t, len(res.Line), len(large))
}

// TestMoveBreakEven: the rule is exact. For each format, the smallest
// payload that moves saves its line exactly one byte: one byte less and
// moving it would have saved nothing, so it stays.
func TestMoveBreakEven(t *testing.T) {
	tests := []struct {
		f    Format
		line func(payload string) []byte
	}{
		{piFormat, func(p string) []byte {
			return []byte(`{"type":"message","id":"e1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` + p + `}],"isError":false}}`)
		}},
		{claudeCodeFormat, func(p string) []byte {
			return bytes.TrimSuffix(claudeLine(p, `{"stdout":"","stderr":""}`), []byte("\n"))
		}},
		{codexFormat, func(p string) []byte {
			return []byte(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":` + p + `}}`)
		}},
		{chatFormat, func(p string) []byte { return []byte(`{"role":"tool","tool_call_id":"call_1","content":` + p + `}`) }},
	}
	for _, tt := range tests {
		t.Run(tt.f.Name(), func(t *testing.T) {
			x := &Externalizer{Format: tt.f, Threshold: 1, PathFor: testPath, Put: memStore{}.put, Open: memStore{}.open}
			// One line of text: its summary stops growing at summary.Max,
			// and the size keeps three digits.
			for n := 300; n < 1000; n++ {
				line := tt.line(jsonString(t, strings.Repeat("y", n)))
				res, err := x.Rewrite(line, 0)
				require.NoError(t, err)
				if res.Line != nil {
					require.Greater(t, n, 300, "the search starts too high")
					assert.Equal(t, len(line)-1, len(res.Line), "payload of %d bytes", n)
					return
				}
			}
			t.Fatal("no payload under 1000 bytes moved")
		})
	}
}

// BenchmarkRewrite rewrites pi tool results at the default threshold, one
// payload of 8 KB and one of 5 KB beside a copy in details, and at
// --threshold 1 a line of small results where only the large one moves:
// what deciding which sites shorten their line costs on top of storing
// them.
func BenchmarkRewrite(b *testing.B) {
	result := func(content, details string) []byte {
		return []byte(`{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-06-01T09:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":` +
			content + `,"details":` + details + `,"isError":false}}`)
	}
	block := func(s string) string { return `[{"type":"text","text":` + jsonString(b, s) + `}]` }
	out5 := jsonString(b, payloadText[:5000])
	for _, tt := range []struct {
		name      string
		threshold int
		line      []byte
	}{
		{"8KB", DefaultThreshold, result(block(strings.Repeat(payloadText, 2)[:8000]), `{}`)},
		{"5KB-and-details", DefaultThreshold, result(`[{"type":"text","text":`+out5+`}]`, `{"aggregated":`+out5+`,"exitCode":0}`)},
		{"threshold-1", 1, result(block(payloadText), `{"aggregated":"ok\n","cwd":"/home/dev/app","diff":"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"}`)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			x := &Externalizer{Format: piFormat, Threshold: tt.threshold, PathFor: testPath, Put: func(Artifact) error { return nil }}
			b.SetBytes(int64(len(tt.line)))
			b.ReportAllocs()
			for b.Loop() {
				res, err := x.Rewrite(tt.line, 0)
				if err != nil || res.Line == nil {
					b.Fatal(err, "kept")
				}
			}
		})
	}
}
