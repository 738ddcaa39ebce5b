package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// responsesAPI is a stand-in for the OpenAI Responses API as Codex CLI
// and Copilot CLI stream it: `POST /v1/responses` answered with
// server-sent events. It plays a scripted model: each request is answered
// by the next step of the script, so a test knows what the agent was
// told to do. It is strict: Codex and Copilot ask nothing else of a
// provider of their own.
type responsesAPI struct {
	standIn
	steps []responsesStep // guarded by standIn.mu
}

// responsesStep answers one request with the output items the model
// "generates": function calls, a final message.
type responsesStep func(req recordedRequest) []map[string]any

// newResponsesAPI starts the stand-in on loopback; it stops with t.
func newResponsesAPI(t *testing.T) *responsesAPI {
	api := &responsesAPI{standIn: standIn{main: hasInput, strict: t}}
	api.start(t, parseResponses, api.answer)
	return api
}

// hasInput reports whether r is a Responses request: every request Codex
// and Copilot make is a turn.
func hasInput(r recordedRequest) bool { return r.Input != nil }

// Play calls run, a run of an agent, with the stand-in answering its
// requests with steps, one each in order, and returns those requests.
// Steps the run leaves unused are dropped.
func (api *responsesAPI) Play(steps []responsesStep, run func()) []recordedRequest {
	api.mu.Lock()
	api.steps = steps
	api.mu.Unlock()
	return api.During(run)
}

// parseResponses reads the input items of a POST to /v1/responses.
func parseResponses(r *http.Request, rec *recordedRequest) {
	var parsed struct {
		Input []map[string]any `json:"input"`
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" && json.Unmarshal(rec.Body, &parsed) == nil {
		rec.Input = parsed.Input
	}
}

func (api *responsesAPI) answer(w http.ResponseWriter, r *http.Request, rec recordedRequest, seq int) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		api.refuse(w, http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	}
	if !hasInput(rec) {
		api.refuse(w, http.StatusBadRequest, "request %d is not JSON with input items", seq)
		return
	}
	api.mu.Lock()
	var step responsesStep
	if len(api.steps) > 0 {
		step, api.steps = api.steps[0], api.steps[1:]
	}
	api.mu.Unlock()
	if step == nil {
		api.refuse(w, http.StatusInternalServerError, "request %d has no scripted answer", seq)
		return
	}
	items := step(rec)

	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("resp_%d", seq)
	writeEvent(w, "response.created", map[string]any{"response": map[string]any{"id": id}})
	for i, item := range items {
		item["id"] = fmt.Sprintf("item_%d_%d", seq, i)
		writeEvent(w, "response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	// The completed response lists its output again, as OpenAI's does:
	// Copilot CLI takes the output from it.
	writeEvent(w, "response.completed", map[string]any{"response": map[string]any{
		"id": id, "status": "completed", "output": items,
		"usage": map[string]any{
			"input_tokens": len(rec.Body) / 4, "output_tokens": 10, "total_tokens": len(rec.Body)/4 + 10,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
	}})
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
	return func(recordedRequest) []map[string]any { return items }
}

// functionOutput returns the output of the function_call_output for callID
// in the request's input, as the model sees it, and whether there is one.
func (req recordedRequest) functionOutput(callID string) (string, bool) {
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
