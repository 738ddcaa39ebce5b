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

// standIn is a stand-in model API on loopback, of any dialect (the
// Messages API, Gemini's, chat completions, Responses). It records every
// request body byte for byte, so that a test can assert on what an agent
// sent, and numbers the requests from 1: the number names a response's
// message and tool call ids, unique per server. What a dialect does its
// own way, reading a request and writing the answer, is given to start.
type standIn struct {
	srv *httptest.Server
	// main tells a turn of the agent's main loop from the other requests.
	main func(r recordedRequest) bool
	// script answers the turns of the main loop; the Responses stand-in
	// plays steps instead (see responsesAPI).
	script func(req *messagesRequest) turn
	// strict, when set, is failed by a request the stand-in cannot read
	// or answer. Codex and Copilot ask a provider of their own for turns
	// and nothing else, so anything more is a change in the agent the
	// test should show; the other agents ask for more (feature flags,
	// metrics) than the stand-in answers, and go on without it.
	strict *testing.T

	mu       sync.Mutex
	requests []recordedRequest
}

// recordedRequest is one request the stand-in received.
type recordedRequest struct {
	Path  string
	Body  []byte           // decompressed
	Req   *messagesRequest // nil when Body is not a turn of a Messages-like dialect
	Input []map[string]any // a Responses request's input items
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

// start serves on loopback until t ends. Each request's body is read
// and given to parse, which reads into rec what the dialect understands
// of it; the request is recorded, and answer writes the response to it,
// the seq-th.
func (s *standIn) start(t *testing.T, parse func(r *http.Request, rec *recordedRequest),
	answer func(w http.ResponseWriter, r *http.Request, rec recordedRequest, seq int)) {
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			s.refuse(w, http.StatusBadRequest, "reading %s %s: %v", r.Method, r.URL.Path, err)
			return
		}
		rec := recordedRequest{Path: r.URL.Path, Body: body}
		parse(r, &rec)
		answer(w, r, rec, s.record(rec))
	}))
	t.Cleanup(s.srv.Close)
}

// URL is the stand-in's base URL, for ANTHROPIC_BASE_URL, a baseUrl or
// GOOGLE_GEMINI_BASE_URL; with /v1, for an OpenAI-compatible provider.
func (s *standIn) URL() string { return s.srv.URL }

// record keeps r and returns its number, from 1.
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

// During calls run, a run of an agent, and returns the main-loop
// requests received meanwhile, in order.
func (s *standIn) During(run func()) []recordedRequest {
	n := len(s.Requests())
	run()
	return s.Requests()[n:]
}

// reply is the turn that answers rec: the script's, for a turn of the
// main loop; else aside, a short text, all the agent's own requests (a
// title, a summary) need.
func (s *standIn) reply(rec recordedRequest, aside string) turn {
	if s.main(rec) {
		return s.script(rec.Req)
	}
	return turn{Text: aside}
}

// refuse answers with code and the message, and fails the test when s is
// strict.
func (s *standIn) refuse(w http.ResponseWriter, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.strict != nil {
		s.strict.Errorf("stand-in model API: %s", msg)
	}
	http.Error(w, msg, code)
}

// offersTools reports whether r is a turn of the agent's main loop: a
// request that offers the model tools.
func offersTools(r recordedRequest) bool { return r.Req != nil && len(r.Req.Tools) > 0 }

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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
