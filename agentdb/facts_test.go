package agentdb

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchRowOf(t *testing.T) {
	for _, tc := range []struct {
		name, event string
		want        *searchRow // timestamp left out
	}{
		{"string content, trimmed", `{"type":"message","id":" m1 ","message":{"role":"user","content":"  hi  "}}`,
			&searchRow{messageID: "m1", role: "user", text: "hi"}},
		{"blank string content, text member unread", `{"type":"message","id":"m","message":{"role":"user","content":" ","text":"x"}}`, nil},
		{"text member", `{"type":"message","id":"m","message":{"role":"assistant","content":[],"text":" x "}}`,
			&searchRow{messageID: "m", role: "assistant", text: "x"}},
		{"text blocks joined, blank and others skipped, not trimmed",
			`{"type":"message","id":"m","message":{"role":"user","content":[{"type":"text","text":" a "},{"type":"image","data":"x"},
			{"type":"input_text","text":"  "},{"type":"output_text","text":"b"},{"type":"text","text":7},"c",null]}}`,
			&searchRow{messageID: "m", role: "user", text: " a \nb"}},
		{"image only", `{"type":"message","id":"m","message":{"role":"user","content":[{"type":"image","data":"x"}]}}`, nil},
		{"tool result", `{"type":"message","id":"m","message":{"role":"toolResult","content":[{"type":"text","text":"x"}]}}`, nil},
		{"not a message", `{"type":"custom","id":"m","message":{"role":"user","content":"x"}}`, nil},
		{"blank id", `{"type":"message","id":"  ","message":{"role":"user","content":"x"}}`, nil},
		{"last member wins, as in JSON.parse", `{"type":"message","id":"a","id":"b","message":{"role":"user","content":"x"}}`,
			&searchRow{messageID: "b", role: "user", text: "x"}},
		{"JavaScript's white space", `{"type":"message","id":"m","message":{"role":"user","content":"\ufeff\u00a0\u2003x\u0085\u2029"}}`,
			&searchRow{messageID: "m", role: "user", text: "x\u0085"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := factsOf([]byte(tc.event))
			require.NoError(t, err)
			if f.search != nil {
				f.search.timestamp = nil
			}
			assert.Equal(t, tc.want, f.search)
		})
	}
	_, err := factsOf([]byte(`["not an entry"]`))
	assert.ErrorContains(t, err, "not a JSON object")
}

func TestSearchTimestamp(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want float64
		ok   bool
	}{
		{`1795132801000`, 1795132801000, true},
		{`"2026-11-20T00:00:01.500Z"`, 1795132801500, true},
		{`"2026-11-20T01:00:01+01:00"`, 1795132801000, true},
		{``, 42, true}, // no member: the row's created_at
		{`null`, 42, true},
		{`"yesterday"`, 0, false},
		{`1e400`, 0, false},
	} {
		got, ok := searchTimestamp(json.RawMessage(tc.raw), 42)
		assert.Equal(t, tc.ok, ok, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
}

func TestSameEntry(t *testing.T) {
	base := `{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","idempotencyKey":"k","content":[{"type":"image","data":"x"}]}}`
	of := func(s string) facts {
		f, err := factsOf([]byte(s))
		require.NoError(t, err)
		return f
	}
	for _, tc := range []struct {
		name, event string
		same        bool
	}{
		{"content replaced, marker added",
			`{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","idempotencyKey":"k","content":[{"type":"text","text":"x"}]},"transcriptTool":{"v":1}}`, true},
		{"members in another order",
			`{"id":"a","type":"message","timestamp":"t","parentId":"p","message":{"content":[],"idempotencyKey":"k","role":"user"}}`, true},
		{"another parent", `{"type":"message","id":"a","parentId":"q","timestamp":"t","message":{"role":"user","idempotencyKey":"k"}}`, false},
		{"a member added", `{"type":"message","id":"a","parentId":"p","timestamp":"t","label":"x","message":{"role":"user","idempotencyKey":"k"}}`, false},
		{"another idempotency key", `{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","idempotencyKey":"j"}}`, false},
		{"excluded from context",
			`{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"user","idempotencyKey":"k","excludeFromContext":true}}`, false},
		{"no message", `{"type":"message","id":"a","parentId":"p","timestamp":"t"}`, false},
	} {
		assert.Equal(t, tc.same, sameEntry(of(base), of(tc.event)), tc.name)
	}
}
