package externalizer

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-tool/transcript-tool/internal/benchgen"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// BenchmarkRewriteCorpus rewrites, line by line, the pi and Claude Code
// sessions of make bench's generated corpus at 24 MB, as migrate does
// with a store that hashes what it is given once: the work each line
// costs, without the files migrate writes.
func BenchmarkRewriteCorpus(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "corpus")
	if _, err := benchgen.Generate(dir, benchgen.Options{Seed: 1, Size: 24 << 20, Files: 12}); err != nil {
		b.Fatal(err)
	}
	var files [][]line
	var formats []Format
	var total int64
	for _, agent := range []struct {
		glob string
		f    Format
	}{{"pi/*/*.jsonl", piFormat}, {"claude/*/*.jsonl", claudeCodeFormat}} {
		paths, err := filepath.Glob(filepath.Join(dir, "sessions", agent.glob))
		if err != nil || len(paths) == 0 {
			b.Fatalf("no %s in the corpus: %v", agent.glob, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			files, formats = append(files, splitLines(data)), append(formats, agent.f)
			total += int64(len(data))
		}
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		stored := map[store.Digest]bool{}
		put := func(a Artifact) error {
			if stored[a.Digest] {
				return nil
			}
			stored[a.Digest] = true
			if a.Stream != nil {
				return a.Stream(io.Discard)
			}
			return nil
		}
		payloads, summaries := &Payloads{}, &summary.Cache{}
		for i, lines := range files {
			x := &Externalizer{Format: formats[i], Threshold: DefaultThreshold, PathFor: testPath,
				Put: put, Open: memStore{}.open, Payloads: payloads, Summaries: summaries}
			for _, l := range lines {
				if _, err := x.Rewrite(l.text, l.start()); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkRewriteBig rewrites, from its skeleton, the huge line of
// make bench at 32 MB: one tool result of log text with escapes and
// non-ASCII, twice (as content and as details), stored once by a store
// that hashes what it is given as Put does.
func BenchmarkRewriteBig(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "corpus")
	if _, err := benchgen.Generate(dir, benchgen.Options{Seed: 1, Files: 1, BigLine: 32 << 20}); err != nil {
		b.Fatal(err)
	}
	input, err := os.ReadFile(filepath.Join(dir, "bigline", "big.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := splitLines(input)
	line := lines[len(lines)-1].text
	o := transcript.SkeletonOptions{Long: 16 << 10, StubLen: 4096, Max: 1 << 20}
	sk, err := transcript.BuildSkeleton(bytes.NewReader(line), o)
	if err != nil {
		b.Fatal(err)
	}
	x := &Externalizer{Format: piFormat, Threshold: 4096, PathFor: testPath}
	x.Open = memStore{}.open
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		stored := map[store.Digest]bool{}
		x.Put = func(a Artifact) error {
			if stored[a.Digest] {
				return nil
			}
			stored[a.Digest] = true
			return a.Stream(sha256.New())
		}
		if _, err := x.RewriteBig(io.Discard, &BigLine{Skeleton: sk, Src: bytes.NewReader(line)}, 0); err != nil {
			b.Fatal(err)
		}
	}
}
