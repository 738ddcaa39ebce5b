package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestColorFor(t *testing.T) {
	cases := []struct {
		mode, noColor, term string
		isTerminal, want    bool
	}{
		{"auto", "", "xterm-256color", true, true},
		{"auto", "", "xterm", false, false},
		{"auto", "1", "xterm", true, false},
		{"auto", "0", "xterm", true, false}, // any value but the empty string
		{"auto", "", "dumb", true, false},
		{"always", "", "dumb", false, true},
		{"always", "1", "xterm", true, false}, // NO_COLOR wins even over --color always
		{"never", "", "xterm", true, false},
	}
	for _, tc := range cases {
		got, err := colorFor(tc.mode, tc.noColor, tc.term, tc.isTerminal)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
	_, err := colorFor("yes", "", "", true)
	assert.ErrorContains(t, err, `--color must be auto, always or never, not "yes"`)
}
