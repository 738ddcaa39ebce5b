package format

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// TestCallTableKeepsTheMostRecent: past MaxCalls calls the oldest are
// forgotten, never the newest, whatever the number added.
func TestCallTableKeepsTheMostRecent(t *testing.T) {
	var c CallTable
	n := 3*MaxCalls + 17
	for i := range n {
		c.Add("call_"+strconv.Itoa(i), "tool"+strconv.Itoa(i%7), "")
	}
	assert.Equal(t, MaxCalls, c.Len())
	for _, i := range []int{0, n - MaxCalls - 1} {
		assert.False(t, c.Has("call_"+strconv.Itoa(i)), i)
	}
	for _, i := range []int{n - MaxCalls, n - 2, n - 1} {
		got, ok := c.Get("call_" + strconv.Itoa(i))
		require.True(t, ok, i)
		assert.Equal(t, "tool"+strconv.Itoa(i%7), got.Name)
	}
	assert.LessOrEqual(t, len(c.queue), 2*MaxCalls+1, "the queue stays within twice the calls held")
}

// TestCallTableBytes: calls with long names and arguments are held within
// the byte bound, the newest kept.
func TestCallTableBytes(t *testing.T) {
	var c CallTable
	name := strings.Repeat("n", 2000)
	input := strings.Repeat("a", 800)
	for i := range MaxCalls {
		c.Add(strings.Repeat("i", 200)+strconv.Itoa(i), name, input)
	}
	assert.LessOrEqual(t, c.bytes, maxCallBytes)
	assert.Less(t, c.Len(), MaxCalls, "the byte bound, not the count, bounded it")
	got, ok := c.Get(strings.Repeat("i", 200) + strconv.Itoa(MaxCalls-1))
	require.True(t, ok)
	assert.Len(t, got.Name, maxCallName)
	assert.Equal(t, input, got.Input)
}

// TestCallTableRefuses: ids that cannot be a call's are not kept, and an
// id seen again takes its new name.
func TestCallTableRefuses(t *testing.T) {
	var c CallTable
	c.Add("", "bash", "")
	c.Add(strings.Repeat("x", maxCallID+1), "bash", "")
	c.Add("a"+transcript.StubMark, "bash", "")
	c.Add("b", "ba"+transcript.StubMark, "")
	assert.Zero(t, c.Len())
	c.Add("c", "read", "x.go")
	c.Add("c", "bash", "ls")
	got, _ := c.Get("c")
	assert.Equal(t, CalledTool{Name: "bash", Input: "ls"}, got)
	assert.Equal(t, len("c")+len("bash")+len("ls"), c.bytes)
	// A name cut between code points, not inside one.
	c.Add("d", strings.Repeat("é", maxCallName), "")
	got, _ = c.Get("d")
	assert.Len(t, got.Name, maxCallName)
	assert.True(t, strings.HasSuffix(got.Name, "é"))
}
