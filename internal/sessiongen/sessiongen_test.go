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

func TestGenerateFormatsDeterministic(t *testing.T) {
	o := Options{Seed: 5, Entries: 20, MinPayload: 16, MaxPayload: 9000}
	other := o
	other.Seed = 6
	for name, gen := range map[string]func(Options) []byte{
		"claude":        func(o Options) []byte { return GenerateClaude(o, false) },
		"claude agent":  func(o Options) []byte { return GenerateClaude(o, true) },
		"codex":         func(o Options) []byte { return GenerateCodex(o, false) },
		"codex legacy":  func(o Options) []byte { return GenerateCodex(o, true) },
		"chat":          func(o Options) []byte { return GenerateChat(o, false) },
		"chat messages": func(o Options) []byte { return GenerateChat(o, true) },
	} {
		assert.Equal(t, gen(o), gen(o), name)
		assert.NotEqual(t, gen(o), gen(other), name)
	}
}

// decode returns the JSON objects of a generated transcript's lines.
func decode(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &v), "line %d", i+1)
		out = append(out, v)
	}
	return out
}

// size is the length of v's JSON encoding, close to the bytes it takes
// in a transcript.
func size(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

// sizes records whether payloads were seen over and under 4096 bytes.
type sizes map[string]bool

func (s sizes) add(what string, v any) {
	if size(v) >= 4096 {
		s[what+" large"] = true
	} else {
		s[what+" small"] = true
	}
}

func TestGenerateClaudeCoversEverySite(t *testing.T) {
	for _, subagent := range []bool{false, true} {
		data := GenerateClaude(Options{Seed: 11, Entries: 80, MinPayload: 16, MaxPayload: 12000}, subagent)
		seen := sizes{}
		lines := decode(t, data)
		first := lines[0]
		if subagent {
			assert.Equal(t, "user", first["type"])
			assert.Equal(t, true, first["isSidechain"])
			assert.NotEmpty(t, first["agentId"])
		} else {
			assert.Equal(t, "file-history-snapshot", first["type"])
		}
		for _, e := range lines {
			seen[e["type"].(string)] = true
			if subagent && e["sessionId"] != nil {
				assert.Equal(t, true, e["isSidechain"])
			}
			msg, _ := e["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			results := 0
			for _, b := range blocks {
				b := b.(map[string]any)
				switch b["type"] {
				case "tool_result":
					results++
					switch c := b["content"].(type) {
					case string:
						seen.add("tool_result string", c)
						if strings.HasPrefix(c, "<persisted-output>") {
							seen["persisted-output"] = true
						}
						if r, ok := e["toolUseResult"].(map[string]any); ok && (r["stdout"] == c || r["content"] == c || r["result"] == c) {
							seen["duplicate in toolUseResult"] = true
						}
					case []any:
						seen.add("tool_result blocks", c)
						for _, cb := range c {
							if cb.(map[string]any)["type"] == "image" {
								seen["tool_result image"] = true
							}
						}
					}
				case "image":
					seen.add(e["type"].(string)+" image", b)
				}
			}
			if results > 1 {
				seen["several tool_results"] = true
			}
			switch r := e["toolUseResult"].(type) {
			case string:
				seen.add("toolUseResult string", r)
			case []any:
				seen.add("toolUseResult blocks", r)
			case map[string]any:
				for _, k := range []string{"stdout", "stderr", "originalFile", "content", "result"} {
					if v, ok := r[k]; ok && size(v) > 2 {
						seen.add("toolUseResult."+k, v)
					}
				}
				if f, ok := r["file"].(map[string]any); ok {
					for _, k := range []string{"content", "base64"} {
						if v, ok := f[k]; ok {
							seen.add("toolUseResult.file."+k, v)
						}
					}
				}
				if p, ok := r["structuredPatch"].([]any); ok && len(p) > 0 {
					seen["structuredPatch"] = true
				}
			}
			if data, ok := e["data"].(map[string]any); ok {
				seen["progress "+data["type"].(string)] = true
				if full, ok := data["fullOutput"]; ok {
					seen.add("fullOutput", full)
				}
				if m, ok := data["message"].(map[string]any); ok {
					inner := m["message"].(map[string]any)
					for _, b := range inner["content"].([]any) {
						if b := b.(map[string]any); b["type"] == "tool_result" {
							seen.add("agent_progress tool_result", b["content"])
						}
					}
				}
			}
		}
		want := []string{
			"user", "assistant", "progress", "system",
			"tool_result string large", "tool_result string small", "tool_result blocks large", "tool_result image",
			"several tool_results", "persisted-output", "duplicate in toolUseResult",
			"user image large", "toolUseResult string small", "toolUseResult string large", "toolUseResult blocks large",
			"toolUseResult.stdout large", "toolUseResult.stdout small", "toolUseResult.stderr large", "toolUseResult.originalFile large",
			"toolUseResult.content large", "toolUseResult.result large", "toolUseResult.file.content large", "toolUseResult.file.base64 large",
			"structuredPatch", "progress bash_progress", "fullOutput large",
		}
		if !subagent {
			// A subagent starts no subagent of its own.
			want = append(want, "file-history-snapshot", "queue-operation", "progress agent_progress", "agent_progress tool_result large")
		}
		for _, order := range []string{`{"tool_use_id":"toolu_`, `{"type":"tool_result","tool_use_id":`, `{"type":"tool_result","content":`} {
			assert.Contains(t, string(data), order, "subagent %v: no tool_result in this key order", subagent)
		}
		for _, k := range want {
			assert.True(t, seen[k], "subagent %v: no %s", subagent, k)
		}
	}
}

func TestGenerateCodexCoversEverySite(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		lines := decode(t, GenerateCodex(Options{Seed: 21, Entries: 60, MinPayload: 16, MaxPayload: 10000}, legacy))
		seen := sizes{}
		output := func(where string, item map[string]any) {
			typ, _ := item["type"].(string)
			if typ != "function_call_output" && typ != "custom_tool_call_output" {
				return
			}
			switch out := item["output"].(type) {
			case string:
				var inner struct {
					Output   *string        `json:"output"`
					Metadata map[string]any `json:"metadata"`
				}
				if json.Unmarshal([]byte(out), &inner) == nil && inner.Output != nil && inner.Metadata != nil {
					seen.add(where+typ+" JSON in a string", out)
				} else {
					seen.add(where+typ+" string", out)
				}
			case []any:
				seen.add(where+typ+" items", out)
				for _, it := range out {
					if it := it.(map[string]any); it["type"] == "input_image" && strings.HasPrefix(it["image_url"].(string), "data:image/png;base64,") {
						seen[where+"input_image"] = true
					}
				}
			}
		}
		first := lines[0]
		if legacy {
			assert.NotNil(t, first["id"])
			assert.NotNil(t, first["timestamp"])
			assert.Contains(t, first, "instructions")
			assert.NotContains(t, first, "type")
		} else {
			assert.Equal(t, "session_meta", first["type"])
		}
		for _, e := range lines[1:] {
			if e["record_type"] == "state" {
				seen["state"] = true
				continue
			}
			payload, ok := e["payload"].(map[string]any)
			if legacy {
				require.False(t, ok, "a legacy rollout has bare items")
				output("", e)
				continue
			}
			require.True(t, ok)
			seen[e["type"].(string)] = true
			switch e["type"] {
			case "response_item":
				output("", payload)
			case "event_msg":
				if payload["type"] == "exec_command_end" {
					for _, k := range []string{"stdout", "stderr", "aggregated_output", "formatted_output"} {
						seen.add("exec_command_end."+k, payload[k])
					}
				}
			case "compacted":
				for _, it := range payload["replacement_history"].([]any) {
					output("compacted ", it.(map[string]any))
				}
			}
		}
		want := []string{
			"function_call_output JSON in a string large", "function_call_output JSON in a string small",
			"function_call_output string large", "function_call_output items large", "input_image",
			"custom_tool_call_output JSON in a string large", "custom_tool_call_output JSON in a string small",
		}
		if legacy {
			want = append(want, "state")
		} else {
			want = append(want, "response_item", "event_msg", "turn_context", "compacted",
				"exec_command_end.stdout large", "exec_command_end.stdout small", "exec_command_end.stderr large",
				"exec_command_end.aggregated_output large", "exec_command_end.formatted_output large",
				"compacted function_call_output JSON in a string large", "compacted function_call_output items large", "compacted input_image")
		}
		for _, k := range want {
			assert.True(t, seen[k], "legacy %v: no %s", legacy, k)
		}
	}
}

func TestGenerateChatCoversEverySite(t *testing.T) {
	for _, conversations := range []bool{false, true} {
		data := GenerateChat(Options{Seed: 31, Entries: 40, MinPayload: 16, MaxPayload: 12000}, conversations)
		seen := sizes{}
		message := func(m map[string]any) {
			role, _ := m["role"].(string)
			seen[role] = true
			if role != "tool" && role != "function" {
				return
			}
			switch c := m["content"].(type) {
			case string:
				seen.add(role+" string", c)
			case []any:
				seen.add(role+" parts", c)
			}
		}
		for _, e := range decode(t, data) {
			msgs, ok := e["messages"].([]any)
			assert.Equal(t, conversations, ok)
			if !ok {
				message(e)
				continue
			}
			tools := 0
			for _, m := range msgs {
				message(m.(map[string]any))
				if m.(map[string]any)["role"] == "tool" {
					tools++
				}
			}
			if tools > 1 {
				seen["several tool messages"] = true
			}
		}
		for _, k := range []string{"system", "user", "assistant", "tool string large", "tool string small", "tool parts large",
			"function string large"} {
			assert.True(t, seen[k], "conversations %v: no %s", conversations, k)
		}
		if conversations {
			assert.True(t, seen["several tool messages"], "no conversation with several tool messages")
		} else {
			assert.Contains(t, string(data), `"role": "tool", "tool_call_id": `, "written as Python's json.dumps does")
			assert.Contains(t, string(data), `\u00e9`, "written as Python's json.dumps does")
		}
	}
}
