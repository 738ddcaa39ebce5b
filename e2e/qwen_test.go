package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// qwenPin is the Qwen Code release the tests drive.
const qwenPin = "@qwen-code/qwen-code@0.24.4"

// qwenTimeout bounds one run of Qwen Code, which takes a minute or more
// on a loaded machine before it exits (it loads its skills and
// extensions each time).
const qwenTimeout = 5 * time.Minute

// TestQwen has Qwen Code write a session against a stand-in
// chat-completions API, migrates ~/.qwen/projects in place, and resumes
// the session with `--resume ID`: the model is sent the same messages in
// a fraction of the bytes, and read_file opens the placeholder's path.
func TestQwen(t *testing.T) {
	forEachPin(t, qwenPin, func(t *testing.T, pin string) {
		runE2E(t, qwenCase(findAgent(t, pin, "qwen")))
	})
}

// qwenCase is Qwen Code's part in the end-to-end flow.
func qwenCase(qwen agent) agentCase {
	c := geminiCase(qwen) // the same tools, of the same names
	shell := c.Tools.Shell
	// Qwen Code 0.24.4 settles a command when its shell exits, not when
	// the output pipe is drained (child_process "exit", not "close"): a
	// command that writes tens of KB and exits at once, as cat of an
	// artifact does, often comes back "(empty)". The pause after it
	// leaves the pipe time to drain; the output is the command's.
	c.Tools.Shell = func(command string) toolCall { return shell(command + "; sleep 1") }
	c.Configure = func(t *testing.T, home, _ string) {
		dir := filepath.Join(home, ".qwen")
		require.NoError(t, os.MkdirAll(dir, 0o700))
		// Large outputs kept whole, as for Gemini CLI; Qwen Code's own
		// tools, skills and prompt as a user has them.
		settings := `{"security":{"auth":{"selectedType":"openai"}},"model":{"name":"standin-model"},` +
			`"tools":{"truncateToolOutputThreshold":1000000},"privacy":{"usageStatisticsEnabled":false}}`
		require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600))
	}
	c.API = newChatAPI
	c.Sessions = func(home string) string { return filepath.Join(home, ".qwen", "projects") }
	// Qwen Code sends its system prompt, a reminder of its skills and
	// its tool schemas with every request, whatever the session holds:
	// the session needs the large outputs a working session has for
	// them to be most of the request, as they are for the other agents.
	c.MoreOutputs = 6
	c.Run = func(t *testing.T, r agentRun) {
		t.Helper()
		args := []string{"--yolo"}
		if r.Session != "" {
			args = append(args, "--resume", strings.TrimSuffix(filepath.Base(r.Session), ".jsonl"))
		}
		env := []string{"HOME=" + r.Home, "OPENAI_API_KEY=stand-in", "OPENAI_BASE_URL=" + r.URL + "/v1",
			"OPENAI_MODEL=standin-model", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}
		runAgent(t, qwen, r.Work.Dir, env, qwenTimeout, append(args, "-p", r.Prompt)...)
	}
	return c
}

// newChatAPI starts a stand-in for an OpenAI-compatible chat completions
// API (POST /v1/chat/completions, streamed or not), as Qwen Code speaks
// it, answering main-loop requests with script; it stops when t ends.
// Each request's messages are read as a messagesRequest (tool_calls as
// tool_use blocks, tool messages as tool_result blocks) for the script
// and checkResumes.
func newChatAPI(t *testing.T, script func(req *messagesRequest) turn) *standIn {
	s := &standIn{main: offersTools, script: script}
	s.start(t, parseChat, s.answerChat)
	return s
}

// chatRequest is the part of a chat completions body the stand-in reads.
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// messages returns r as a messagesRequest.
func (r chatRequest) messages() *messagesRequest {
	m := messagesRequest{Model: r.Model, Stream: r.Stream}
	for _, tool := range r.Tools {
		m.Tools = append(m.Tools, struct {
			Name string `json:"name"`
		}{tool.Function.Name})
	}
	for _, msg := range r.Messages {
		var blocks []apiBlock
		switch msg.Role {
		case "tool":
			blocks = append(blocks, apiBlock{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: qwenShellOutput(msg.Content)})
		default:
			var text string
			var parts []apiBlock
			if json.Unmarshal(msg.Content, &text) == nil && text != "" {
				blocks = append(blocks, apiBlock{Type: "text", Text: text})
			} else if json.Unmarshal(msg.Content, &parts) == nil {
				blocks = append(blocks, parts...)
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, apiBlock{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(c.Function.Arguments)})
			}
		}
		role := msg.Role
		if role == "tool" {
			role = "user"
		}
		content, _ := json.Marshal(blocks)
		m.Messages = append(m.Messages, apiMessage{Role: role, Content: content})
	}
	return &m
}

// qwenShellOutput returns the output of a command as run_shell_command
// returns it ("Command: …\nDirectory: …\nOutput: OUTPUT\nError: …\nExit
// Code: …"), as the JSON string of OUTPUT; any other content as it is.
func qwenShellOutput(content json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(content, &s) != nil {
		// Or an array of text parts.
		var parts []apiBlock
		if json.Unmarshal(content, &parts) != nil || len(parts) != 1 {
			return content
		}
		s = parts[0].Text
	}
	if !strings.HasPrefix(s, "Command: ") {
		return content
	}
	start, end := strings.Index(s, "\nOutput: "), strings.LastIndex(s, "\nError: ")
	if start < 0 || end < start {
		return content
	}
	b, _ := json.Marshal(s[start+len("\nOutput: ") : end])
	return b
}

// parseChat reads the body of a chat completions request as a
// messagesRequest.
func parseChat(r *http.Request, rec *recordedRequest) {
	var req chatRequest
	if strings.HasSuffix(r.URL.Path, "/chat/completions") && json.Unmarshal(rec.Body, &req) == nil {
		rec.Req = req.messages()
	}
}

func (s *standIn) answerChat(w http.ResponseWriter, r *http.Request, rec recordedRequest, seq int) {
	// Qwen Code waits on an open connection before it exits.
	w.Header().Set("Connection", "close")
	if rec.Req == nil {
		http.NotFound(w, r)
		return
	}
	tr := s.reply(rec, "Stand-in")
	var calls []map[string]any
	for i, t := range tr.Tools {
		args, err := json.Marshal(t.Input)
		if err != nil {
			panic(err) // the stand-in's own values always marshal
		}
		calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_standin_%04d_%d", seq, i), "type": "function",
			"function": map[string]any{"name": t.Name, "arguments": string(args)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": len(rec.Body) / 4, "completion_tokens": 10, "total_tokens": len(rec.Body)/4 + 10}
	id := fmt.Sprintf("chatcmpl-%d", seq)
	message := map[string]any{"role": "assistant", "content": tr.Text}
	if !rec.Req.Stream {
		if len(calls) > 0 {
			message["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": rec.Req.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choices []any, extra map[string]any) {
		data := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": rec.Req.Model, "choices": choices}
		for k, v := range extra {
			data[k] = v
		}
		b, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := map[string]any{"role": "assistant"}
	if tr.Text != "" {
		delta["content"] = tr.Text
	}
	if len(calls) > 0 {
		delta["tool_calls"] = calls
	}
	chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	chunk([]any{}, map[string]any{"usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
