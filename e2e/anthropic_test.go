package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// messagesRequest is the part of a Messages API request body the script
// reads.
type messagesRequest struct {
	Model    string       `json:"model"`
	Stream   bool         `json:"stream"`
	Messages []apiMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// apiMessage is one message of a request: its content is a string or an
// array of blocks.
type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// apiBlock is one content block, of any type; Content is a tool_result's
// content, a string or an array of blocks.
type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Blocks returns m's content as blocks: a string content is one text block.
func (m apiMessage) Blocks() []apiBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []apiBlock{{Type: "text", Text: s}}
	}
	var bs []apiBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// ResultText returns the text of a tool_result block: its string content,
// or its text blocks joined by newlines.
func (b apiBlock) ResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var bs []apiBlock
	_ = json.Unmarshal(b.Content, &bs)
	var texts []string
	for _, c := range bs {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// ToolResults returns the tool_result blocks of r's messages, in order.
func (r *messagesRequest) ToolResults() []apiBlock {
	var out []apiBlock
	for _, m := range r.Messages {
		for _, b := range m.Blocks() {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// Exchange finds the last user message whose text holds one of prompts:
// the exchange under way. It returns that prompt and the tool results
// sent since, which say how far the exchange has come; prompt is "" when
// no message holds one.
func (r *messagesRequest) Exchange(prompts ...string) (prompt string, results []apiBlock) {
	for i := len(r.Messages) - 1; i >= 0 && prompt == ""; i-- {
		m := r.Messages[i]
		var here []apiBlock
		for _, b := range m.Blocks() {
			switch {
			case b.Type == "tool_result":
				here = append(here, b)
			case b.Type == "text" && m.Role == "user":
				for _, p := range prompts {
					if strings.Contains(b.Text, p) {
						prompt = p
					}
				}
			}
		}
		results = append(here, results...)
	}
	if prompt == "" {
		return "", nil
	}
	return prompt, results
}

// newAnthropicAPI starts a stand-in for the Anthropic Messages API,
// which both Claude Code and pi speak, answering main-loop requests with
// script, streamed as server-sent events the way the real API streams
// them; it stops when t ends. Other Messages requests (ones without
// tools, such as a title or summary asked of a small model) get a short
// text answer, and count_tokens an estimate, so the agents go on as they
// would against the real API.
func newAnthropicAPI(t *testing.T, script func(req *messagesRequest) turn) *standIn {
	s := &standIn{main: recordedRequest.mainLoop, script: script}
	s.start(t, parseMessages, s.answerMessages)
	return s
}

// mainLoop reports whether r is a turn of the agent's main loop: a
// Messages request that offers tools. Claude Code's count_tokens requests
// offer them too, but are not turns.
func (r recordedRequest) mainLoop() bool {
	return strings.HasSuffix(r.Path, "/v1/messages") && offersTools(r)
}

// parseMessages reads a POST's body as a Messages request.
func parseMessages(r *http.Request, rec *recordedRequest) {
	var req messagesRequest
	if r.Method == http.MethodPost && json.Unmarshal(rec.Body, &req) == nil {
		rec.Req = &req
	}
}

func (s *standIn) answerMessages(w http.ResponseWriter, r *http.Request, rec recordedRequest, seq int) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		// About four bytes a token, the usual estimate.
		writeJSON(w, map[string]any{"input_tokens": len(rec.Body)/4 + 1})
	case strings.HasSuffix(r.URL.Path, "/v1/messages") && rec.Req != nil:
		writeMessage(w, rec.Req, seq, s.reply(rec, "ok"))
	default:
		// Anything else (feature flags, account or metrics endpoints
		// the agents may try) is not part of the stand-in.
		http.NotFound(w, r)
	}
}

// writeMessage writes tr as a Messages API response to req, the seq-th:
// a stream of server-sent events, or one JSON message when req did not
// ask to stream.
func writeMessage(w http.ResponseWriter, req *messagesRequest, seq int, tr turn) {
	// Each response has its own message id: Claude Code merges the
	// assistant messages that share one.
	msgID := fmt.Sprintf("msg_standin_%04d", seq)
	var blocks []map[string]any
	if tr.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": tr.Text})
	}
	for i, c := range tr.Tools {
		blocks = append(blocks, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_standin_%04d_%d", seq, i),
			"name": c.Name, "input": c.Input,
		})
	}
	stop := "end_turn"
	if len(tr.Tools) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 20,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	message := map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
	}
	if !req.Stream {
		writeJSON(w, message)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var sse bytes.Buffer
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, err := json.Marshal(data)
		if err != nil {
			panic(err) // the stand-in's own values always marshal
		}
		fmt.Fprintf(&sse, "event: %s\ndata: %s\n\n", name, b)
	}
	start := map[string]any{}
	for k, v := range message {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"message": start})
	for i, b := range blocks {
		if b["type"] == "text" {
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			input, err := json.Marshal(b["input"])
			if err != nil {
				panic(err)
			}
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
	_, _ = w.Write(sse.Bytes())
}
