package format

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

func TestMainArgument(t *testing.T) {
	tests := []struct{ input, want string }{
		{`{"command":"ls -la","timeout":5}`, "ls -la"},
		{`{"file_path":"/a/b.md","offset":1}`, "/a/b.md"},
		{`"{\"command\":[\"bash\",\"-lc\",\"npm test\"],\"workdir\":\"/w\"}"`, "npm test"},
		{`{"command":["git","status"]}`, "git status"},
		{`{"cmd":"echo\nhi"}`, "echo hi"},
		{`{"type":"exec","command":["ls"]}`, "ls"},
		{`"*** Begin Patch"`, ""},
		{`{"pattern":"x"}`, ""},
		{`{"command":"` + strings.Repeat("é", 500) + `"}`, strings.Repeat("é", maxCallInput-1) + "…"},
	}
	for _, tt := range tests {
		v, err := transcript.Parse([]byte(tt.input), 0)
		require.NoError(t, err)
		assert.Equal(t, tt.want, Call{Input: v}.MainArgument(), tt.input)
	}
}
