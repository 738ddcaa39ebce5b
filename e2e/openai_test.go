package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// responsesAPI is a stand-in for the OpenAI Responses API as Codex CLI
// streams it: `POST /v1/responses` answered with server-sent events. It
// plays a scripted model: each request is answered by the next step of the
// script, so a test knows what the agent was told to do and records every
// request body exactly as the agent sent it, to compare what the model
// was shown before and after a migration.
type responsesAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	steps    []responsesStep
	requests []responsesRequest
}

// responsesStep answers one request with the output items the model
// "generates": function calls, a final message.
type responsesStep func(req responsesRequest) []map[string]any

// responsesRequest is one request as the agent sent it: the body
// (decompressed) and its parsed input items.
type responsesRequest struct {
	Body  []byte
	Input []map[string]any
}

// newResponsesAPI starts the stand-in on loopback; it stops with t.
func newResponsesAPI(t *testing.T) *responsesAPI {
	api := &responsesAPI{t: t}
	api.srv = httptest.NewServer(http.HandlerFunc(api.serve))
	t.Cleanup(api.srv.Close)
	return api
}

// BaseURL is the provider's base_url, ending in /v1.
func (api *responsesAPI) BaseURL() string { return api.srv.URL + "/v1" }

// Script sets the steps that answer the next requests, one each in
// order, dropping any step an earlier run left unused.
func (api *responsesAPI) Script(steps ...responsesStep) {
	api.mu.Lock()
	defer api.mu.Unlock()
	api.steps = steps
}

// Requests returns the requests received so far, oldest first, and forgets
// them, so each phase of a test sees its own.
func (api *responsesAPI) Requests() []responsesRequest {
	api.mu.Lock()
	defer api.mu.Unlock()
	r := api.requests
	api.requests = nil
	return r
}

func (api *responsesAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		// Codex asks nothing else of a custom provider; anything more is
		// a change in the agent the test should show, not hide.
		api.t.Errorf("stand-in model API: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		api.t.Errorf("stand-in model API: reading request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var parsed struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(body, &parsed); err != nil {
		api.t.Errorf("stand-in model API: request is not JSON: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := responsesRequest{Body: body, Input: parsed.Input}

	api.mu.Lock()
	api.requests = append(api.requests, req)
	n := len(api.requests)
	var step responsesStep
	if len(api.steps) > 0 {
		step, api.steps = api.steps[0], api.steps[1:]
	}
	api.mu.Unlock()
	if step == nil {
		api.t.Errorf("stand-in model API: request %d has no scripted answer", n)
		http.Error(w, "no scripted answer", http.StatusInternalServerError)
		return
	}
	items := step(req)

	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("resp_%d", n)
	writeEvent(w, "response.created", map[string]any{"response": map[string]any{"id": id}})
	for i, item := range items {
		item["id"] = fmt.Sprintf("item_%d_%d", n, i)
		writeEvent(w, "response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	// The completed response lists its output again, as OpenAI's does:
	// Copilot CLI takes the output from it.
	writeEvent(w, "response.completed", map[string]any{"response": map[string]any{
		"id": id, "status": "completed", "output": items,
		"usage": map[string]any{
			"input_tokens": len(body) / 4, "output_tokens": 10, "total_tokens": len(body)/4 + 10,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
	}})
}

// readBody returns the request body, decompressed when the agent sent it
// zstd-encoded (Codex compresses requests to some providers).
func readBody(r *http.Request) ([]byte, error) {
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "":
		return io.ReadAll(r.Body)
	case "zstd":
		d, err := zstd.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return io.ReadAll(d)
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
}

func writeEvent(w http.ResponseWriter, typ string, data map[string]any) {
	data["type"] = typ
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// execCommand is a model output item calling Codex's shell tool. It asks
// for the whole output: by default exec_command keeps about 10,000 tokens
// of it, the middle cut out.
func execCommand(callID, cmd string) map[string]any {
	args, _ := json.Marshal(map[string]any{"cmd": cmd, "max_output_tokens": 1000000})
	return map[string]any{"type": "function_call", "call_id": callID, "name": "exec_command", "arguments": string(args)}
}

// assistantMessage is a model output item ending a turn with text.
func assistantMessage(text string) map[string]any {
	return map[string]any{
		"type": "message", "role": "assistant",
		"content": []map[string]any{{"type": "output_text", "text": text}},
	}
}

// reply is a step that ignores the request and answers items.
func reply(items ...map[string]any) responsesStep {
	return func(responsesRequest) []map[string]any { return items }
}

// functionOutput returns the output of the function_call_output for callID
// in the request's input, as the model sees it, and whether there is one.
func (req responsesRequest) functionOutput(callID string) (string, bool) {
	for _, it := range req.Input {
		if it["type"] == "function_call_output" && it["call_id"] == callID {
			switch out := it["output"].(type) {
			case string:
				return out, true
			default:
				b, _ := json.Marshal(out)
				return string(b), true
			}
		}
	}
	return "", false
}
