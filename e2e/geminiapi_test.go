package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// newGeminiAPI starts a stand-in for Google's Gemini API
// (generateContent and streamGenerateContent, as Gemini CLI calls them
// with GOOGLE_GEMINI_BASE_URL), answering main-loop requests with script;
// it stops when t ends. Each request's contents are read as a
// messagesRequest (model turns as assistant messages, text parts as text
// blocks, functionCall and functionResponse parts as tool_use and
// tool_result blocks named by the call's id, or its name when the agent
// sends none), so that the workload's script and checkResumes serve it as
// they serve the Messages API.
//
// Requests that offer no tools (a title, the next-speaker check, which
// asks for JSON) get a short answer, countTokens an estimate.
func newGeminiAPI(t *testing.T, script func(req *messagesRequest) turn) *standIn {
	s := &standIn{main: offersTools, script: script}
	s.start(t, parseGenerate, s.answerGenerate)
	return s
}

// geminiPart is one part of a content of the Gemini API.
type geminiPart struct {
	Text         *string `json:"text,omitempty"`
	Thought      bool    `json:"thought,omitempty"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Response struct {
			Output json.RawMessage `json:"output"`
			Error  json.RawMessage `json:"error"`
		} `json:"response"`
	} `json:"functionResponse,omitempty"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
	} `json:"inlineData,omitempty"`
}

// geminiRequest is the part of a generateContent body the stand-in reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// messages returns r as a messagesRequest.
func (r geminiRequest) messages() *messagesRequest {
	var m messagesRequest
	for _, tool := range r.Tools {
		for _, d := range tool.FunctionDeclarations {
			m.Tools = append(m.Tools, struct {
				Name string `json:"name"`
			}{d.Name})
		}
	}
	for _, c := range r.Contents {
		var blocks []apiBlock
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				blocks = append(blocks, apiBlock{Type: "tool_use", ID: callName(p.FunctionCall.ID, p.FunctionCall.Name),
					Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				b := apiBlock{Type: "tool_result", ToolUseID: callName(fr.ID, fr.Name), Content: fr.Response.Output}
				if fr.Name == "run_shell_command" {
					b.Content = shellOutput(b.Content)
				}
				if len(fr.Response.Error) > 0 {
					b.Content, b.IsError = fr.Response.Error, true
				}
				blocks = append(blocks, b)
			case p.InlineData != nil:
				blocks = append(blocks, apiBlock{Type: "image"})
			case p.Text != nil && !p.Thought:
				blocks = append(blocks, apiBlock{Type: "text", Text: *p.Text})
			}
		}
		content, _ := json.Marshal(blocks)
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		m.Messages = append(m.Messages, apiMessage{Role: role, Content: content})
	}
	return &m
}

// shellOutput returns the output of a command as run_shell_command
// returns it, the JSON string "<untrusted_context>\nOutput: OUTPUT\nProcess
// Group PGID: N\n</untrusted_context>" in which OUTPUT's own closing tags
// are escaped, as the JSON string of OUTPUT; any other output as it is.
func shellOutput(output json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(output, &s) != nil {
		return output
	}
	const head, tail = "<untrusted_context>\nOutput: ", "\n</untrusted_context>"
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		return output
	}
	s = s[len(head) : len(s)-len(tail)]
	if i := strings.LastIndex(s, "\nProcess Group PGID: "); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, "&lt;/untrusted_context&gt;", "</untrusted_context>")
	b, _ := json.Marshal(s)
	return b
}

// callName is how a call is named: its id, or its name when it has none.
func callName(id, name string) string {
	if id != "" {
		return id
	}
	return name
}

// parseGenerate reads the body of a generateContent or
// streamGenerateContent request as a messagesRequest.
func parseGenerate(r *http.Request, rec *recordedRequest) {
	var req geminiRequest
	generate := strings.HasSuffix(r.URL.Path, ":generateContent") || strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if generate && json.Unmarshal(rec.Body, &req) == nil {
		rec.Req = req.messages()
	}
}

func (s *standIn) answerGenerate(w http.ResponseWriter, r *http.Request, rec recordedRequest, seq int) {
	switch {
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": len(rec.Body)/4 + 1})
	case rec.Req != nil:
		tr := s.reply(rec, geminiAside(rec.Body))
		var parts []map[string]any
		if tr.Text != "" {
			parts = append(parts, map[string]any{"text": tr.Text})
		}
		for _, c := range tr.Tools {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Input}})
		}
		resp := map[string]any{
			"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": len(rec.Body) / 4, "candidatesTokenCount": 10,
				"totalTokenCount": len(rec.Body)/4 + 10},
			"modelVersion": "stand-in", "responseId": fmt.Sprintf("resp-%d", seq),
		}
		if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			writeJSON(w, resp)
			return
		}
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err) // the stand-in's own values always marshal
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", b)
	default:
		http.NotFound(w, r)
	}
}

// geminiAside is the answer to a request of Gemini CLI's own, whose body
// is body: the JSON its check of who speaks next and its router ask for,
// else a short text.
func geminiAside(body []byte) string {
	var req struct {
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	if json.Unmarshal(body, &req) == nil && req.GenerationConfig.ResponseMimeType == "application/json" {
		return `{"reasoning":"stand-in","next_speaker":"user","model_choice":"flash"}`
	}
	return "Stand-in"
}
