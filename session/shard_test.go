package session

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

func TestParseShard(t *testing.T) {
	for s, want := range map[string]registry.Shard{"0/1": {K: 0, N: 1}, "3/4": {K: 3, N: 4}, "0/4": {K: 0, N: 4}} {
		got, err := ParseShard(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "4/4", "-1/4", "1/0", "1", "a/b", "1/4/2", " 1/4"} {
		_, err := ParseShard(s)
		assert.Error(t, err, "%q", s)
	}
}

// TestTakeShard: the N shards partition the inputs, each input in exactly
// one, the same one whatever the order or the machine (the hash of its
// relative path), and not all in a few.
func TestTakeShard(t *testing.T) {
	var inputs []Input
	for i := 0; i < 1000; i++ {
		inputs = append(inputs, Input{Path: fmt.Sprintf("/root/p%d/s.jsonl", i), Rel: fmt.Sprintf("p%d/s.jsonl", i)})
	}
	const n = 4
	seen := map[string]int{}
	for k := 0; k < n; k++ {
		part := TakeShard(inputs, registry.Shard{K: k, N: n})
		assert.InDelta(t, len(inputs)/n, len(part), 60, "shard %d is badly balanced", k)
		for _, in := range part {
			seen[in.Rel]++
		}
		// The same inputs under another root, in reverse: the same shard.
		var moved []Input
		for i := len(inputs) - 1; i >= 0; i-- {
			moved = append(moved, Input{Path: "/elsewhere/" + inputs[i].Rel, Rel: inputs[i].Rel})
		}
		again := TakeShard(moved, registry.Shard{K: k, N: n})
		assert.ElementsMatch(t, rels(part), rels(again))
	}
	assert.Len(t, seen, len(inputs))
	for rel, c := range seen {
		assert.Equal(t, 1, c, rel)
	}
	assert.Equal(t, inputs, TakeShard(inputs, registry.Shard{}), "the zero shard takes all")
	// The hash is part of the contract: shards computed on other
	// machines, by other versions, must agree (figures from Python's
	// hashlib).
	for rel, want := range map[string][2]int{"a/b.jsonl": {0, 5}, "projects/-x/1.jsonl": {2, 6}, "rollout-1.jsonl": {0, 0}} {
		assert.Equal(t, want[0], shardOf(rel, 4), rel)
		assert.Equal(t, want[1], shardOf(rel, 7), rel)
	}
}

func rels(in []Input) []string {
	var out []string
	for _, i := range in {
		out = append(out, i.Rel)
	}
	return out
}
