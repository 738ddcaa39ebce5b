package session

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// choppy serves data in reads of random sizes, up to 1 MiB.
type choppy struct {
	data []byte
	r    *rand.Rand
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.r.IntN(1<<20))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestSpool: every line the Reader returns as Long reads back exactly
// from the spool, whatever the sizes of the reads: lines at LongLine and
// just past it, long lines one after the other or between short ones,
// CR LF, and a long last line without a newline.
func TestSpool(t *testing.T) {
	var lines []string
	for i, n := range []int{2, LongLine - 1, LongLine, LongLine + 1, LongLine + 1, LongLine + 5, 5, LongLine, 2 * LongLine} {
		lines = append(lines, strings.Repeat(string(rune('a'+i)), n))
	}
	eols := []string{"\n", "\n", "\n", "\n", "\r\n", "\n", "\n", "\r\n", ""}
	var data []byte
	for i := range lines {
		data = append(data, lines[i]+eols[i]...)
	}
	for seed := range uint64(3) {
		s := &spool{r: &choppy{data: data, r: rand.New(rand.NewPCG(seed, 0))}}
		r := transcript.NewReader(s)
		r.Limit = LongLine
		var long []int
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if !l.Long {
				assert.Equal(t, lines[l.Num-1], string(l.Text))
				continue
			}
			long = append(long, l.Num)
			got, err := io.ReadAll(io.NewSectionReader(s, l.Offset, l.Len))
			require.NoError(t, err)
			assert.True(t, bytes.Equal([]byte(lines[l.Num-1]), got), "line %d does not read back", l.Num)
		}
		s.close()
		assert.Equal(t, []int{5, 6, 9}, long, "the lines the Reader holds no longer")
	}
}
