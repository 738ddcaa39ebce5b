package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The escaping of GitHub Actions workflow commands
// (::command prop=value,prop=value::data): data escapes %, CR and LF;
// property values also the : and , that would end them.
func TestGitHubEscaping(t *testing.T) {
	for _, tc := range []struct{ in, data, property string }{
		{"plain.jsonl", "plain.jsonl", "plain.jsonl"},
		{"a,b:c.jsonl", "a,b:c.jsonl", "a%2Cb%3Ac.jsonl"},
		{"100%", "100%25", "100%25"},
		{"%0A", "%250A", "%250A"},
		{"two\nlines\r\n", "two%0Alines%0D%0A", "two%0Alines%0D%0A"},
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
		{"é, ü: ok", "é, ü: ok", "é%2C ü%3A ok"},
		{"", "", ""},
	} {
		assert.Equal(t, tc.data, githubData(tc.in), "data %q", tc.in)
		assert.Equal(t, tc.property, githubProperty(tc.in), "property %q", tc.in)
	}
}
