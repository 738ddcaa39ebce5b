package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// anthropicAPI is a stand-in for the Anthropic Messages API on loopback,
// which both Claude Code and pi speak. A test scripts the model: script
// gets each main-loop request (one that offers tools) and returns the
// turn the model answers with, streamed as server-sent events the way the
// real API streams them. Every request body is recorded, byte for byte,
// so a test can assert on what an agent sent.
//
// Other Messages requests (ones without tools, such as a title or summary
// asked of a small model) get a short text answer, and count_tokens an
// estimate, so the agents go on as they would against the real API.
type anthropicAPI struct {
	standIn
	script func(req *messagesRequest) turn
}

// standIn is what the stand-ins share: a server on loopback and the
// requests it received.
type standIn struct {
	srv *httptest.Server
	// main tells a turn of the agent's main loop from the other requests.
	main func(r recordedRequest) bool

	mu       sync.Mutex
	requests []recordedRequest
}

// start serves h on loopback until t ends.
func (s *standIn) start(t *testing.T, h http.HandlerFunc) {
	s.srv = httptest.NewServer(h)
	t.Cleanup(s.srv.Close)
}

// URL is the stand-in's base URL, for ANTHROPIC_BASE_URL, a baseUrl or
// GOOGLE_GEMINI_BASE_URL.
func (s *standIn) URL() string { return s.srv.URL }

// record keeps r and returns its number, from 1: it numbers message and
// tool call ids, unique per server.
func (s *standIn) record(r recordedRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	return len(s.requests)
}

// Requests returns the main-loop requests received so far, in order.
func (s *standIn) Requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recordedRequest
	for _, r := range s.requests {
		if s.main(r) {
			out = append(out, r)
		}
	}
	return out
}

// recordedRequest is one request the stand-in received.
type recordedRequest struct {
	Path string
	Body []byte
	Req  *messagesRequest // nil when Body is not a messages request
}

// turn is what the scripted model answers: some text, then tool calls.
// A turn with tool calls stops with stop_reason tool_use, else end_turn.
type turn struct {
	Text  string
	Tools []toolCall
}

// toolCall is one tool_use block of a turn.
type toolCall struct {
	Name  string
	Input any
}

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

// newAnthropicAPI starts a stand-in answering main-loop requests with
// script; it stops when t ends.
func newAnthropicAPI(t *testing.T, script func(req *messagesRequest) turn) *anthropicAPI {
	a := &anthropicAPI{script: script}
	a.main = recordedRequest.mainLoop
	a.start(t, a.serve)
	return a
}

// mainLoop reports whether r is a turn of the agent's main loop: a
// Messages request that offers tools. Claude Code's count_tokens requests
// offer them too, but are not turns.
func (r recordedRequest) mainLoop() bool {
	return strings.HasSuffix(r.Path, "/v1/messages") && r.Req != nil && len(r.Req.Tools) > 0
}

func (a *anthropicAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := recordedRequest{Path: r.URL.Path, Body: body}
	var req messagesRequest
	if r.Method == http.MethodPost && json.Unmarshal(body, &req) == nil {
		rec.Req = &req
	}
	seq := a.record(rec)

	switch {
	case strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		// About four bytes a token, the usual estimate.
		writeJSON(w, map[string]any{"input_tokens": len(body)/4 + 1})
	case strings.HasSuffix(r.URL.Path, "/v1/messages") && rec.Req != nil:
		tr := turn{Text: "ok"}
		if rec.mainLoop() {
			tr = a.script(&req)
		}
		a.answer(w, &req, seq, tr)
	default:
		// Anything else (feature flags, account or metrics endpoints
		// the agents may try) is not part of the stand-in.
		http.NotFound(w, r)
	}
}

// answer writes tr as a Messages API response to req: a stream of
// server-sent events, or one JSON message when req did not ask to stream.
func (a *anthropicAPI) answer(w http.ResponseWriter, req *messagesRequest, seq int, tr turn) {
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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
