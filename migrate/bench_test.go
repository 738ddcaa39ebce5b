package migrate

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-tool/transcript-tool/internal/benchgen"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// BenchmarkMigrateCorpusPi migrates fresh copies of the real pi sessions
// (skipped when ../shared/corpus is absent) and rehydrates them.
func BenchmarkMigrateCorpusPi(b *testing.B) {
	files, _ := filepath.Glob("../../shared/corpus/pi/*.jsonl")
	if len(files) == 0 {
		b.Skip("no ../shared/corpus/pi")
	}
	var total int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		total += fi.Size()
	}
	b.Run("migrate", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			inputs := copyInputs(b, files, dir)
			b.StartTimer()
			sum := Run(context.Background(), inputs, Options{OpenStore: local.Open, Jobs: 1})
			if sum.Failed > 0 {
				b.Fatal(sum.Results)
			}
		}
	})
	b.Run("rehydrate", func(b *testing.B) {
		dir := b.TempDir()
		inputs := copyInputs(b, files, dir)
		if sum := Run(context.Background(), inputs, Options{OpenStore: local.Open, Jobs: 1}); sum.Failed > 0 {
			b.Fatal(sum.Results)
		}
		b.SetBytes(total)
		for b.Loop() {
			for _, in := range inputs {
				if err := RehydrateTo(context.Background(), io.Discard, in, "", local.Open, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func copyInputs(b *testing.B, files []string, dir string) []session.Input {
	b.Helper()
	var inputs []session.Input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, session.Input{Path: dst, Rel: filepath.Base(f), Size: int64(len(data))})
	}
	return inputs
}

// BenchmarkMigrateDir migrates the transcripts under $TT_BENCH_DIR into a
// fresh --out directory per iteration, for profiling on a chosen corpus:
//
//	TT_BENCH_DIR=/path go test ./migrate -run '^$' -bench MigrateDir -cpuprofile cpu.out
func BenchmarkMigrateDir(b *testing.B) {
	dir := os.Getenv("TT_BENCH_DIR")
	if dir == "" {
		b.Skip("TT_BENCH_DIR not set")
	}
	inputs, err := session.Collect([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, in := range inputs {
		total += in.Size
	}
	b.SetBytes(total)
	for b.Loop() {
		out := b.TempDir()
		sum := Run(context.Background(), inputs, Options{OpenStore: local.Open, Jobs: 1, Out: out})
		if sum.Failed > 0 {
			b.Fatal(sum.Results)
		}
	}
}

// BenchmarkMigrateProject migrates, on two workers, a Claude Code project
// folder shaped like real ones (make bench's, at a fifth of its size: a
// few distinct payloads behind many tool results, each twice on its
// line) into a fresh --out directory per iteration: the run-wide cache of
// what payloads became, and files waiting for their fsyncs.
func BenchmarkMigrateProject(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "project")
	p := benchgen.Project{Seed: 1, Sessions: 40, Calls: 24, Distinct: 128, PayloadSize: 16 << 10, Subagents: true}
	if _, err := benchgen.GenerateProject(dir, p); err != nil {
		b.Fatal(err)
	}
	inputs, err := session.Collect([]string{filepath.Join(dir, "sessions")})
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, in := range inputs {
		total += in.Size
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		sum := Run(context.Background(), inputs, Options{OpenStore: local.Open, Jobs: 2, Out: b.TempDir()})
		if sum.Failed > 0 {
			b.Fatal(sum.Results)
		}
	}
}
