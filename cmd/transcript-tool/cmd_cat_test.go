package main

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSliceCharacters(t *testing.T) {
	// Multi-byte characters straddle the 64 KiB reads of slice.
	text := strings.Repeat("a", 64<<10-1) + "é日🎉" + strings.Repeat("ü", 70000) + "end"
	runes := []rune(text)
	tests := []struct {
		name          string
		offset, limit int64
	}{
		{"all", 0, 0},
		{"from the middle to the end", 65530, 0},
		{"the characters across the first read", 64<<10 - 2, 4},
		{"one character", 64<<10 + 1, 1},
		{"past the end", int64(len(runes)) + 5, 3},
		{"up to the end exactly", int64(len(runes)) - 3, 3},
		{"limit past the end", int64(len(runes)) - 3, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := ""
			if tt.offset < int64(len(runes)) {
				end := int64(len(runes))
				if tt.limit > 0 {
					end = min(end, tt.offset+tt.limit)
				}
				want = string(runes[tt.offset:end])
			}
			var out bytes.Buffer
			require.NoError(t, slice(&out, iotest.HalfReader(strings.NewReader(text)), true, tt.offset, tt.limit))
			assert.Equal(t, want, out.String())
			assert.True(t, utf8.Valid(out.Bytes()))
		})
	}
}

func TestSliceInvalidUTF8(t *testing.T) {
	// An invalid byte counts as one character and is copied as it is.
	in := "a\xffb\xe6\x97c"
	var out bytes.Buffer
	require.NoError(t, slice(&out, strings.NewReader(in), true, 1, 3))
	assert.Equal(t, "\xffb\xe6", out.String())
	out.Reset()
	require.NoError(t, slice(&out, strings.NewReader(in), true, 0, 0))
	assert.Equal(t, in, out.String())
}

func TestSliceBytes(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, slice(&out, strings.NewReader("héllo"), false, 1, 2))
	assert.Equal(t, "é", out.String())
	out.Reset()
	require.NoError(t, slice(&out, strings.NewReader("héllo"), false, 99, 2))
	assert.Empty(t, out.String())
}
