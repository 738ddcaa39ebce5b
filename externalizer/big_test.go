package externalizer

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// skeletonOptions cut every string of at least the threshold, the
// smallest stubs allowed, so that tests reach the long-line path on small
// lines.
func skeletonOptions(threshold int) transcript.SkeletonOptions {
	n := max(threshold, holeMin(threshold), 256)
	return transcript.SkeletonOptions{Long: n, StubLen: n, Max: 1 << 30}
}

// rewriteBoth rewrites text whole and from its skeleton, both knowing the
// tool calls of calls (nil for none), and requires the same line, the
// same artifacts and the same stored bytes. It reports false for a line
// RewriteBig leaves to Rewrite.
func rewriteBoth(t *testing.T, f Format, threshold int, text []byte, start int, calls *callTable) bool {
	t.Helper()
	whole, big := memStore{}, memStore{}
	xw := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: whole.put, Open: whole.open}
	xb := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: big.put, Open: big.open}
	if calls != nil {
		xw.calls, xb.calls = calls.clone(), calls.clone()
	}
	want, werr := xw.Rewrite(text, start)
	sk, err := transcript.BuildSkeleton(bytes.NewReader(text), skeletonOptions(threshold))
	require.NoError(t, err)
	var out bytes.Buffer
	got, berr := xb.RewriteBig(&out, &BigLine{Skeleton: sk, Src: bytes.NewReader(text)}, start)
	if errors.Is(berr, ErrNeedWhole) {
		require.Zero(t, out.Len(), "written before ErrNeedWhole")
		require.Empty(t, big, "stored before ErrNeedWhole")
		return false
	}
	if werr != nil {
		require.Error(t, berr, "whole: %v", werr)
		return true
	}
	require.NoError(t, berr)
	wantLine := want.Line
	if wantLine == nil {
		wantLine = text
	}
	if !bytes.Equal(out.Bytes(), wantLine) {
		t.Fatalf("long-line rewrite differs from the whole one:\n got %.600q\nwant %.600q", out.Bytes(), wantLine)
	}
	require.Equal(t, len(want.Artifacts), len(got.Artifacts))
	for i := range want.Artifacts {
		require.Equal(t, want.Artifacts[i], got.Artifacts[i], "artifact %d", i)
	}
	require.Equal(t, whole, big, "stored artifacts")
	return true
}

// TestRewriteBigSessions: on every line of testdata/sessions, the
// long-line rewrite gives exactly what the whole one does.
func TestRewriteBigSessions(t *testing.T) {
	for _, name := range sessionFiles(t) {
		input, f := readSession(t, name)
		base := filepath.Base(name)
		for _, threshold := range []int{4096, 300, 1} {
			t.Run(fmt.Sprintf("%s/%d", base, threshold), func(t *testing.T) {
				compared, whole := 0, 0
				var calls callTable
				for _, l := range splitLines(input) {
					if rewriteBoth(t, f, threshold, l.text, l.start(), &calls) {
						compared++
					} else {
						whole++
					}
					if root, ok := l.parse(); ok {
						f.Calls(root, calls.add)
					}
				}
				t.Logf("%d lines compared, %d left to the whole rewrite", compared, whole)
			})
		}
	}
}

// TestRewriteBigCorpus does the same on ../shared/corpus when it is there.
func TestRewriteBigCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*/*.jsonl")
	if len(files) == 0 {
		t.Skip("no ../shared/corpus")
	}
	if testing.Short() {
		t.Skip("short")
	}
	for _, name := range files {
		input, err := os.ReadFile(name)
		require.NoError(t, err)
		f, ok := detectFormat(input)
		if !ok {
			continue
		}
		t.Run(filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name), func(t *testing.T) {
			var calls callTable
			for _, l := range splitLines(input) {
				rewriteBoth(t, f, 4096, l.text, l.start(), &calls)
				if root, ok := l.parse(); ok {
					f.Calls(root, calls.add)
				}
			}
		})
	}
}

// TestRewriteBigLines: hand-made long lines whose payloads hold what the
// streaming decoders must get right at any cut.
func TestRewriteBigLines(t *testing.T) {
	text := strings.Repeat(`line \"quoted\" \\ tab\t é 漢字 😀 \ud83d\ude00 \u00e9 \u001b[31m `, 400)
	b64 := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", 300) + "AAAA"
	lines := []string{
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"` + text + `"}],"details":{"aggregated":"` + text + `"}}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"image","data":"` + b64 + `","mimeType":"image/png"}]}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c3","toolName":"x","content":[{"type":"text","text":"` + strings.Repeat(`\ud800`, 3000) + `"}]}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c4","toolName":"x","content":[{"type":"text","text":"` + strings.Repeat(`\/`, 3000) + `"}]}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c5","toolName":"x","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"` + text + `"}],"toolName":"late","role":"toolResult","toolCallId":"c6"}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c7","toolName":"x","content":[{"type":"text","text":"` + text + "\x01" + `"}]}}`,
	}
	for i, l := range lines {
		for _, threshold := range []int{4096, 300, 1} {
			if !rewriteBoth(t, piFormat, threshold, []byte(l), 0, nil) {
				t.Errorf("line %d: left to the whole rewrite", i+1)
			}
		}
	}
}

// FuzzRewriteBig: on any line built from the fuzz templates, with payloads
// long enough to be cut to stubs, the long-line rewrite gives exactly what
// the whole one does.
func FuzzRewriteBig(f *testing.F) {
	bigPad := strings.Repeat("payload-", 400)
	for _, s := range fuzzSeeds {
		f.Add(0, strings.ReplaceAll(s, pad, bigPad))
	}
	for i := range fuzzTemplates {
		f.Add(i, `{"type":"text","text":"`+bigPad+`"}`)
		f.Add(i, `\u00e9 \ud83d\ude00 `+bigPad+`\n\"`)
	}
	f.Fuzz(func(t *testing.T, i int, s string) {
		tpl := fuzzTemplates[uint(i)%uint(len(fuzzTemplates))]
		input := strings.ReplaceAll(tpl.before, pad, bigPad) + s + strings.ReplaceAll(tpl.after, pad, bigPad)
		for _, l := range splitLines([]byte(input)) {
			rewriteBoth(t, piFormat, fuzzThreshold, l.text, l.start(), nil)
		}
	})
}

// TestCandidatesInPieces: a long literal gives the same form and artifact
// whether it is written at once or in pieces of any size, as the long-line
// path writes it; text of multi-byte characters is stored as text.
func TestCandidatesInPieces(t *testing.T) {
	text := strings.Repeat("日本語のテキスト line é 🚀\\t\\\"x\\\"\\n", 20000)
	lit := []byte(`"` + text + `"`)
	c := newCandidates(false, true, false, Context{})
	_, _ = c.Write(lit)
	form, digest, size, _ := c.result("")
	require.Equal(t, FormJS, form, "one write")
	for _, piece := range []int{1 << 10, 4099, 64 << 10, 256 << 10} {
		c := newCandidates(false, true, false, Context{})
		for rest := lit; len(rest) > 0; {
			n := min(piece, len(rest))
			_, _ = c.Write(rest[:n])
			rest = rest[n:]
		}
		f, d, n, _ := c.result("")
		assert.Equal(t, form, f, "pieces of %d", piece)
		assert.Equal(t, digest, d, "pieces of %d", piece)
		assert.Equal(t, size, n, "pieces of %d", piece)
	}
}

// clone returns a copy of t that adding to does not change t.
func (t *callTable) clone() callTable {
	c := callTable{m: make(map[string]callInfo, len(t.m)), ring: slices.Clone(t.ring), next: t.next}
	maps.Copy(c.m, t.m)
	return c
}

// TestMovesReadsNoLargePayload: Moves tells that a payload far larger than
// any placeholder moves without reading it: a check of a long line reads
// its payloads no more than to cut them out, however large.
func TestMovesReadsNoLargePayload(t *testing.T) {
	text := []byte(`{"type":"message","id":"r1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":` +
		jsonString(t, strings.Repeat(payloadText, 50)) + `}],"details":{"cwd":"/home/dev/app"},"isError":false}}`)
	for _, threshold := range []int{4096, 1} {
		sk, err := transcript.BuildSkeleton(bytes.NewReader(text), skeletonOptions(threshold))
		require.NoError(t, err)
		require.NotEmpty(t, sk.Stubs, "no payload cut out")
		root, err := transcript.Parse(sk.Text, 0)
		require.NoError(t, err)
		sites := piFormat.Sites(root, threshold, nil)
		x := &Externalizer{Format: piFormat, Threshold: threshold, PathFor: testPath}
		moves, err := x.Moves(root, sites, &BigLine{Skeleton: sk, Src: unreadable{}})
		require.NoError(t, err, "threshold %d", threshold)
		var moved []string
		for i, s := range sites {
			if moves[i] {
				moved = append(moved, s.Path.String())
			}
		}
		assert.Equal(t, []string{"/message/content"}, moved, "threshold %d", threshold)
	}
}

// unreadable is a line's source that fails every read.
type unreadable struct{}

func (unreadable) ReadAt([]byte, int64) (int, error) { return 0, errors.New("read") }
