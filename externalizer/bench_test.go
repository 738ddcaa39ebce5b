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
	"github.com/transcript-tool/transcript-tool/transcript"
)

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
