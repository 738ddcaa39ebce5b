package benchgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
	sess "github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// small is a corpus that takes a fraction of a second to write and
// migrate, with files of every kind.
var small = Options{Seed: 3, Size: 2_000_000, Files: 8, BigLine: 200_000}

func generate(t *testing.T, o Options) (string, Stats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	st, err := Generate(dir, o)
	require.NoError(t, err)
	return dir, st
}

// readTree returns the files under dir by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[rel], err = os.ReadFile(path)
		return err
	})
	require.NoError(t, err)
	return files
}

// smallDigest is treeDigest of the transcripts of the corpus small. When
// a change to the generator, or to a library it uses, changes it, bump
// Version so that cached corpora are written again, and update it.
const smallDigest = "b4e88d50d34276aa5456f6fd700df139e2312af2b8ef80e60e61277c608ee125"

// treeDigest is the SHA-256 of the names and contents of the transcripts
// among files, in name order.
func treeDigest(files map[string][]byte) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(name), len(files[name]))
		h.Write(files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := generate(t, small)
	b, _ := generate(t, small)
	files := readTree(t, a)
	assert.Equal(t, files, readTree(t, b))
	assert.Equal(t, smallDigest, treeDigest(files), "the corpus changed: bump Version and update smallDigest")

	other := small
	other.Seed++
	c, _ := generate(t, other)
	assert.NotEqual(t, readTree(t, a), readTree(t, c))
}

func TestGenerateLayout(t *testing.T) {
	t.Parallel()
	dir, st := generate(t, small)
	files := readTree(t, dir)
	var sessions, pi, claude int
	var total int64
	for name, data := range files {
		switch {
		case strings.HasPrefix(name, filepath.Join("sessions", "pi")+string(filepath.Separator)):
			pi++
		case strings.HasPrefix(name, filepath.Join("sessions", "claude")+string(filepath.Separator)):
			claude++
		default:
			continue
		}
		sessions++
		total += int64(len(data))
		assert.True(t, strings.HasSuffix(name, ".jsonl"), name)
	}
	assert.Equal(t, small.Files, sessions)
	assert.Equal(t, st.PiFiles, pi)
	assert.Equal(t, st.ClaudeFiles, claude)
	assert.Equal(t, 2, claude)
	assert.Equal(t, st.Bytes, total)
	assert.InDelta(t, small.Size, total, 0.2*float64(small.Size), "total size")
	assert.Equal(t, Stamp(small)+"\n", string(files["stamp"]))
	assert.Equal(t, st.String()+"\n", string(files["description"]))
	assert.Len(t, files, sessions+3, "sessions, the huge line, stamp and description")

	_, err := Generate(dir, small)
	assert.ErrorContains(t, err, "exists", "an existing directory is refused")
}

func TestStamp(t *testing.T) {
	seen := map[string]bool{Stamp(small): true}
	for _, o := range []Options{{Seed: 4}, {Size: 1}, {Files: 1}, {BigLine: 1000}} {
		o.Seed += small.Seed
		o.Size += small.Size
		o.Files += small.Files
		o.BigLine += small.BigLine
		s := Stamp(o)
		assert.False(t, seen[s], "stamp %q repeats", s)
		seen[s] = true
	}
}

// Every line is JSON; the escapes and characters the payloads should hold
// are there; images decode.
func TestGenerateContent(t *testing.T) {
	t.Parallel()
	dir, st := generate(t, small)
	assert.Positive(t, st.Images)
	var all bytes.Buffer
	images := 0
	for name, data := range readTree(t, filepath.Join(dir, "sessions")) {
		all.Write(data)
		require.True(t, bytes.HasSuffix(data, []byte("\n")), name)
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			require.True(t, json.Valid(line), "%s:%d is not JSON", name, i+1)
			var e struct {
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			require.NoError(t, json.Unmarshal(line, &e))
			var blocks []struct {
				Type string `json:"type"`
				Data string `json:"data"`
			}
			if json.Unmarshal(e.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b.Type == "image" && b.Data != "" {
					raw, err := base64.StdEncoding.DecodeString(b.Data)
					require.NoError(t, err)
					_, err = png.Decode(bytes.NewReader(raw))
					require.NoError(t, err, "%s:%d: image", name, i+1)
					images++
				}
			}
		}
	}
	assert.Positive(t, images)
	for _, want := range []string{`\n`, `\t`, `\r`, `\"`, `\\`, `\u001b`, `\u00e9`, `\ud83d\ude80`, "é", "漢字", "🚀"} {
		assert.Contains(t, all.String(), want)
	}
}

func TestBigLine(t *testing.T) {
	t.Parallel()
	for _, size := range []int64{minBigLine, 200_000, 200_001} {
		o := small
		o.Files, o.Size, o.BigLine = 1, 1000, size
		dir, st := generate(t, o)
		data, err := os.ReadFile(filepath.Join(dir, "bigline", "big.jsonl"))
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), st.BigFileBytes)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Len(t, lines, 3)
		assert.Len(t, lines[2], int(size), "the third line is the huge one")
		var e struct {
			Message struct {
				Role    string `json:"role"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				Details struct {
					Aggregated string `json:"aggregated"`
				} `json:"details"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[2]), &e))
		assert.Equal(t, "toolResult", e.Message.Role)
		require.Len(t, e.Message.Content, 1)
		assert.Equal(t, e.Message.Content[0].Text, e.Message.Details.Aggregated)
		assert.Greater(t, len(e.Message.Details.Aggregated), int(size)*2/5-500, "the output is half the line (escapes decoded)")
	}
	_, err := Generate(filepath.Join(t.TempDir(), "x"), Options{Files: 1, BigLine: minBigLine - 1})
	assert.Error(t, err)
}

// About a third of the payload bytes are in payloads over 12 KB: in the
// law itself, and in a small corpus.
func TestPayloadSizes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var st Stats
	for range 100_000 {
		n := payloadSize(r)
		require.GreaterOrEqual(t, n, MinPayload)
		require.LessOrEqual(t, n, MaxPayload)
		st.addPayload(int64(n), false)
	}
	assert.InDelta(t, 1.0/3, st.LargeFraction(), 0.03, "law")

	o := small
	o.Size, o.Files, o.BigLine = 4_000_000, 10, 0
	_, st = generate(t, o)
	assert.InDelta(t, 1.0/3, st.LargeFraction(), 0.08, "corpus of %d payloads", st.Payloads)
	assert.InDelta(t, 0.75, float64(st.PayloadBytes)/float64(st.Bytes), 0.1, "payloads are most of the bytes")
}

// Every session file is detected as its format, migrates, and rehydrates
// to the same bytes; so does the huge line.
func TestCorpusMigrates(t *testing.T) {
	t.Parallel()
	dir, _ := generate(t, small)
	work := t.TempDir()
	migrated, restored := filepath.Join(work, "migrated"), filepath.Join(work, "restored")
	for _, tree := range []string{"sessions", "bigline"} {
		src := filepath.Join(dir, tree)
		inputs, err := sess.Collect([]string{src})
		require.NoError(t, err)
		require.NotEmpty(t, inputs)
		out := filepath.Join(migrated, tree)
		sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Out: out, Jobs: 2})
		require.Len(t, sum.Results, len(inputs))
		for _, r := range sum.Results {
			require.Equal(t, migrate.StatusMigrated, r.Status, "%s: %v", r.Path, r.Err)
			want := "pi"
			if strings.Contains(r.Path, string(filepath.Separator)+"claude"+string(filepath.Separator)) {
				want = "claude-code"
			}
			assert.Equal(t, want, r.Format, r.Path)
			assert.Less(t, r.BytesAfter, r.BytesBefore, r.Path)
		}
		inputs, err = sess.Collect([]string{out})
		require.NoError(t, err)
		sum = migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, Out: filepath.Join(restored, tree), Jobs: 2})
		require.Zero(t, sum.Failed, "%+v", sum.Results)
		assert.Equal(t, readTree(t, src), readTree(t, filepath.Join(restored, tree)))
	}
}

func TestPNG(t *testing.T) {
	for _, n := range []int{1, 75, 5000, 200_000, 1_500_000} {
		var b bytes.Buffer
		require.NoError(t, writePNG(&b, rand.New(rand.NewPCG(uint64(n), pngStream)), n))
		assert.Equal(t, pngLen(n), b.Len(), "size for %d", n)
		if n > 1000 {
			assert.InDelta(t, n, b.Len(), 0.02*float64(n), "about the size asked")
		}
		img, err := png.Decode(&b)
		require.NoError(t, err, "n=%d", n)
		assert.Equal(t, pngSide(n), img.Bounds().Dx())
	}
}

// Every line of the pool is a valid JSON string body, shorter than the
// filler the last line of a text is cut from.
func TestPool(t *testing.T) {
	for k := range numKinds {
		for _, st := range transcript.Styles {
			for _, l := range pool.lines[k][st] {
				assert.Less(t, len(l), len(pool.filler))
				var s string
				require.NoError(t, json.Unmarshal([]byte(`"`+l+`"`), &s), l)
			}
		}
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, size := range []int{MinPayload, 4096, 100_000} {
		b.Reset()
		streamText(w, text{seed: 9, kind: kindCode, size: size}, transcript.StyleASCII)
		require.NoError(t, w.Flush())
		assert.Equal(t, size, b.Len())
		var s string
		require.NoError(t, json.Unmarshal([]byte(`"`+b.String()+`"`), &s))
	}
}
