package session

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/registry"
)

// ParseShard parses --shard's K/N, K from 0 to N-1 as batch schedulers
// number their tasks (a Kubernetes Indexed Job's completion index, a
// Slurm array task id, a GitHub Actions matrix index).
func ParseShard(s string) (registry.Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	ki, kerr := strconv.Atoi(k)
	ni, nerr := strconv.Atoi(n)
	if !ok || kerr != nil || nerr != nil || ni < 1 || ki < 0 || ki >= ni {
		return registry.Shard{}, fmt.Errorf("--shard %q: want K/N with 0 <= K < N, such as 0/4", s)
	}
	return registry.Shard{K: ki, N: ni}, nil
}

// TakeShard returns the inputs of shard sh: those whose path relative to
// their PATH argument hashes to K modulo N. The hash is SHA-256's first
// eight bytes of the slash-separated path, the same on every machine, so
// N processes given the same PATHs take every input exactly once between
// them, with no coordination; a retry of one shard takes the same inputs.
// The zero Shard takes them all.
func TakeShard(inputs []Input, sh registry.Shard) []Input {
	if sh.N <= 1 {
		return inputs
	}
	var out []Input
	for _, in := range inputs {
		if shardOf(in.Rel, sh.N) == sh.K {
			out = append(out, in)
		}
	}
	return out
}

func shardOf(rel string, n int) int {
	sum := sha256.Sum256([]byte(filepath.ToSlash(rel)))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}
