package store

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sha256 of the empty input and of "abc", as sha256sum prints them.
const (
	emptySum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	abcSum   = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
)

func TestSum(t *testing.T) {
	assert.Equal(t, emptySum, Sum(nil).String())
	assert.Equal(t, abcSum, Sum([]byte("abc")).String())
	data := []byte("some artifact bytes\x00\xff")
	want := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(want[:]), Sum(data).String())
}

func TestParseDigest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"lower-case", abcSum, true},
		{"all digits", strings.Repeat("0", 64), true},
		{"all letters", strings.Repeat("f", 64), true},
		{"upper case", strings.ToUpper(abcSum), false},
		{"one upper-case letter", "B" + abcSum[1:], false},
		{"empty", "", false},
		{"too short", abcSum[:63], false},
		{"too long", abcSum + "0", false},
		{"prefix", abcSum[:8], false},
		{"parent directory", "../" + abcSum[3:], false},
		{"slash", abcSum[:2] + "/" + abcSum[3:], false},
		{"backslash", abcSum[:2] + `\` + abcSum[3:], false},
		{"NUL", abcSum[:10] + "\x00" + abcSum[11:], false},
		{"space", " " + abcSum[1:], false},
		{"newline", abcSum[:63] + "\n", false},
		{"non-hex letter", "g" + abcSum[1:], false},
		{"0x prefix", "0x" + abcSum[2:], false},
		{"multi-byte rune making 64 bytes", abcSum[:62] + "é", false},
		{"full-width digit", abcSum[:61] + "０", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDigest(tt.in)
			if !tt.ok {
				require.Error(t, err)
				assert.True(t, d.IsZero(), "a refused id yields the zero Digest")
				assert.Contains(t, err.Error(), "invalid artifact id")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.in, d.String())
			raw, err := hex.DecodeString(tt.in)
			require.NoError(t, err)
			assert.Equal(t, raw, d[:])
		})
	}
}

func TestDigestRoundTrip(t *testing.T) {
	for _, data := range []string{"", "abc", "\x00", strings.Repeat("x", 1<<16)} {
		d := Sum([]byte(data))
		got, err := ParseDigest(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
		assert.Len(t, d.String(), 64)
		assert.Equal(t, strings.ToLower(d.String()), d.String())
	}
}

func TestIsZero(t *testing.T) {
	assert.True(t, Digest{}.IsZero())
	assert.False(t, Sum(nil).IsZero())
	var d Digest
	d[31] = 1
	assert.False(t, d.IsZero())
}
