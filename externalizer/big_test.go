package externalizer

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// skeletonOptions cut every string of at least the threshold, the
// smallest stubs allowed, so that tests reach the long-line path on small
// lines.
func skeletonOptions(threshold int) transcript.SkeletonOptions {
	n := max(threshold, holeMin(threshold), 256)
	return transcript.SkeletonOptions{Long: n, StubLen: n, Max: 1 << 30}
}

// twins are two externalizers of one file's lines, one rewriting each
// line whole and one from its skeleton, knowing the same tool calls.
type twins struct{ whole, big *Externalizer }

func newTwins(f Format, threshold int) *twins {
	return &twins{
		whole: &Externalizer{Format: f, Threshold: threshold, PathFor: testPath},
		big:   &Externalizer{Format: f, Threshold: threshold, PathFor: testPath},
	}
}

// see gives both the tool calls of a line, as parsed whole.
func (tw *twins) see(root transcript.Value) {
	tw.whole.Format.Calls(root, tw.whole.addCall)
	tw.big.Format.Calls(root, tw.big.addCall)
}

// rewriteBoth rewrites text whole and from its skeleton, with the tool
// calls tw knows, and requires the same line, the same artifacts and the
// same stored bytes. It reports false for a line RewriteBig leaves to
// Rewrite.
func rewriteBoth(t *testing.T, tw *twins, text []byte, start int) bool {
	t.Helper()
	whole, big := memStore{}, memStore{}
	xw, xb := tw.whole, tw.big
	xw.Put, xw.Open = whole.put, whole.open
	xb.Put, xb.Open = big.put, big.open
	threshold := xw.Threshold
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
				tw := newTwins(f, threshold)
				for _, l := range splitLines(input) {
					if rewriteBoth(t, tw, l.text, l.start()) {
						compared++
					} else {
						whole++
					}
					if root, ok := l.parse(); ok {
						tw.see(root)
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
			tw := newTwins(f, 4096)
			for _, l := range splitLines(input) {
				rewriteBoth(t, tw, l.text, l.start())
				if root, ok := l.parse(); ok {
					tw.see(root)
				}
			}
		})
	}
}

// TestRewriteBigLines: hand-made long lines whose payloads hold what the
// streaming decoders must get right at any cut, and payloads a line holds
// twice, found so by their bytes.
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
		// Two payloads of one length that only their last byte tells
		// apart, then the first again.
		`{"type":"message","message":{"role":"toolResult","toolCallId":"c8","toolName":"bash","content":[{"type":"text","text":"` + text + `a"},{"type":"text","text":"` + text + `b"}],"details":{"aggregated":"` + text + `a"}}}`,
	}
	for i, l := range lines {
		for _, threshold := range []int{4096, 300, 1} {
			if !rewriteBoth(t, newTwins(piFormat, threshold), []byte(l), 0) {
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
			rewriteBoth(t, newTwins(piFormat, fuzzThreshold), l.text, l.start())
		}
	})
}

// TestCandidatesInPieces: a long literal gives the same form and artifact
// whether it is written at once or in pieces of any size, as the long-line
// path writes it; text of multi-byte characters is stored as text, and a
// literal no style writes back (an escaped slash in its middle) as its
// JSON, which is read again for it.
func TestCandidatesInPieces(t *testing.T) {
	text := strings.Repeat("日本語のテキスト line é 🚀\\t\\\"x\\\"\\n", 20000)
	for _, tt := range []struct {
		lit  []byte
		form Form
	}{
		{[]byte(`"` + text + `"`), FormJS},
		{[]byte(`"` + text + `\/` + text + `"`), FormRaw},
	} {
		read := func(w io.Writer) error {
			_, err := w.Write(tt.lit)
			return err
		}
		c := newCandidates(false, true, false, summary.Context{})
		_, _ = c.Write(tt.lit)
		form, digest, size, desc, err := c.result("", read)
		require.NoError(t, err)
		require.Equal(t, tt.form, form, "one write")
		if form == FormRaw {
			assert.Equal(t, store.Digest(sha256.Sum256(tt.lit)), digest)
			assert.Equal(t, int64(len(tt.lit)), size)
			assert.Equal(t, summary.DescribeIn(tt.lit, MediaJSON, summary.Context{}), desc.String())
		}
		for _, piece := range []int{1 << 10, 4099, 64 << 10, 256 << 10} {
			c := newCandidates(false, true, false, summary.Context{})
			for rest := tt.lit; len(rest) > 0; {
				n := min(piece, len(rest))
				_, _ = c.Write(rest[:n])
				rest = rest[n:]
			}
			f, d, n, _, err := c.result("", read)
			require.NoError(t, err)
			assert.Equal(t, form, f, "pieces of %d", piece)
			assert.Equal(t, digest, d, "pieces of %d", piece)
			assert.Equal(t, size, n, "pieces of %d", piece)
		}
	}
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

// TestTextSinkCuts: a long literal's text and the styles that write it
// back are, written to a textSink in two pieces cut at every offset of
// its tricky part (escapes whole and wrong, upper-case \u digits,
// surrogates alone and in pairs, DEL, invalid and cut UTF-8), what
// decoding the whole literal and encoding it back in each style gives.
// The sink cuts the first piece some 16 bytes before its end, and the
// second, long, some 48 bytes after its start, where it joins what it
// carried with it.
func TestTextSinkCuts(t *testing.T) {
	pieces := []string{"ab", "é", "漢", "😀", `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\u00E9`, `\ud83d\ude00`, `\ud83d`, `\ude00`,
		`\u0041`, `\u001f`, `\t`, "\x7f", `\u007f`, "\xff", "\xe6\x97", `\u2028`}
	rng := rand.New(rand.NewPCG(3, 4))
	prefix := strings.Repeat("plain text and é\\n", (64<<10)/18+8)
	for range 16 {
		var mid []byte
		for k := 1 + rng.IntN(8); k > 0; k-- {
			mid = append(mid, pieces[rng.IntN(len(pieces))]...)
		}
		lit := []byte(`"` + prefix + string(mid) + prefix + `"`)
		want, wantStyles := textReference(lit)
		for first := len(prefix) - 60; first < len(prefix)+len(mid)+20; first++ {
			var out bytes.Buffer
			styles := slices.Clone(transcript.Styles)
			s := &textSink{w: &out, check: true, styles: &styles}
			_, _ = s.Write(lit[:first])
			_, _ = s.Write(lit[first:])
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			ok := s.ok() && len(styles) > 0
			if !ok {
				styles = nil
			}
			if ok != (want != nil) || !slices.Equal(styles, wantStyles) || ok && !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%q cut at %d: ok %v, styles %v; whole: %v, %v", mid, first-len(prefix), ok, styles, want != nil, wantStyles)
			}
		}
	}
}

// textReference decodes the string literal lit and returns its text and
// the styles that encode the text back to lit; nil when none does.
func textReference(lit []byte) ([]byte, []transcript.Style) {
	text, err := transcript.Decode(lit)
	if err != nil || !utf8.Valid(text) {
		return nil, nil
	}
	var styles []transcript.Style
	for _, s := range transcript.Styles {
		if bytes.Equal(transcript.AppendEncoded(nil, text, s), lit) {
			styles = append(styles, s)
		}
	}
	if styles == nil {
		return nil, nil
	}
	return text, styles
}
