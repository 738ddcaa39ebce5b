package sessiongen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var v3 = Options{Seed: 1, Entries: 120, Version: 3, MinPayload: 16, MaxPayload: 32000}

func TestGenerateDeterministic(t *testing.T) {
	assert.Equal(t, Generate(v3), Generate(v3))
	other := v3
	other.Seed = 7
	assert.NotEqual(t, Generate(v3), Generate(other))
}

// entry is the part of a pi entry the tests look at.
type entry struct {
	Type     string           `json:"type"`
	Version  int              `json:"version"`
	ID       *string          `json:"id"`
	ParentID *string          `json:"parentId"`
	Message  *json.RawMessage `json:"message"`
}

type message struct {
	Role     string `json:"role"`
	ToolName string `json:"toolName"`
	IsError  bool   `json:"isError"`
	Output   string `json:"output"`
	Content  []struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	Details map[string]json.RawMessage `json:"details"`
}

func TestGenerateCoversEveryKind(t *testing.T) {
	for _, version := range []int{1, 3} {
		o := v3
		o.Version = version
		data := Generate(o)
		require.True(t, bytes.HasSuffix(data, []byte("\n")))
		seen := map[string]bool{}
		var small, large, parent int
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		assert.GreaterOrEqual(t, len(lines), o.Entries+1)
		var last *string
		for i, l := range lines {
			require.True(t, json.Valid([]byte(l)), "line %d is not JSON", i+1)
			var e entry
			require.NoError(t, json.Unmarshal([]byte(l), &e))
			seen[e.Type] = true
			if i == 0 {
				require.Equal(t, "session", e.Type)
				if version == 3 {
					assert.Equal(t, 3, e.Version)
				}
				continue
			}
			if version == 3 {
				require.NotNil(t, e.ID, "line %d has no id", i+1)
				if last != nil {
					require.NotNil(t, e.ParentID)
					assert.Equal(t, *last, *e.ParentID, "line %d: parentId", i+1)
					parent++
				}
				last = e.ID
			} else {
				assert.Nil(t, e.ID, "v1 entries have no id")
			}
			if e.Message == nil {
				continue
			}
			var m message
			require.NoError(t, json.Unmarshal(*e.Message, &m))
			seen[m.Role] = true
			seen[m.Role+":"+m.ToolName] = true
			for k := range m.Details {
				seen["details."+k] = true
			}
			if m.IsError {
				seen["isError"] = true
			}
			if len(l) >= 4096 && m.Role == "toolResult" {
				large++
			} else if m.Role == "toolResult" {
				small++
			}
			if len(m.Output) >= 4096 {
				seen["large output"] = true
			}
			for _, b := range m.Content {
				if b.Type != "image" {
					continue
				}
				seen[m.Role+" image"] = true
				raw, err := base64.StdEncoding.DecodeString(b.Data)
				require.NoError(t, err)
				_, err = png.Decode(bytes.NewReader(raw))
				require.NoError(t, err, "line %d: image is not a PNG", i+1)
				assert.Equal(t, "image/png", b.MimeType)
			}
		}
		for _, k := range []string{
			"message", "model_change", "thinking_level_change", "compaction",
			"user", "assistant", "bashExecution", "large output", "user image", "toolResult image",
			"toolResult:read", "toolResult:bash", "toolResult:edit", "toolResult:write", "isError",
			"details.diff", "details.truncation", "details.aggregated", "details.openclawSyntheticMissingToolResult",
		} {
			assert.True(t, seen[k], "v%d: no %s", version, k)
		}
		assert.Positive(t, small, "v%d: no small tool results", version)
		assert.Positive(t, large, "v%d: no large tool results", version)
		if version == 3 {
			assert.Equal(t, len(lines)-2, parent)
		}
	}
}

func TestGenerateHostileText(t *testing.T) {
	data := string(Generate(v3))
	for _, s := range []string{`é`, `日本`, `🎉`, "\u2028", `\u0000`, `\u001b`, `\t`, `\r`, `\"`, `\\`} {
		assert.Contains(t, data, s)
	}
}

func TestHostile(t *testing.T) {
	names := map[string]bool{}
	for _, f := range Hostile() {
		assert.False(t, names[f.Name], "duplicate %s", f.Name)
		names[f.Name] = true
		large := false
		for _, l := range bytes.Split(f.Data, []byte("\n")) {
			large = large || len(l) >= 4096
		}
		assert.True(t, large, "%s has no line over the default threshold", f.Name)
	}
}

// TestTestdataUpToDate checks that testdata/sessions holds what this
// package generates.
func TestTestdataUpToDate(t *testing.T) {
	for _, f := range append(Sessions(), Hostile()...) {
		got, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", f.Name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(f.Data, got), "testdata/sessions/%s is stale: run go generate ./internal/sessiongen", f.Name)
	}
}
