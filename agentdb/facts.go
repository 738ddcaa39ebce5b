package agentdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"time"
	"unicode"

	"github.com/transcript-tool/transcript-tool/externalizer"
)

// facts is what OpenClaw derives from one entry into tables beside its
// row: its identity (transcript_event_identities) and what its search
// projection reads (session_transcript_active_events, the full-text rows).
type facts struct {
	// envelope holds the raw members of the entry but its message and
	// the exact-restore marker, which no projection of OpenClaw reads:
	// its type, id, parentId and timestamp among them.
	envelope map[string]string
	// idempotencyKey is the message's raw idempotencyKey member, which
	// identifies the entry too.
	idempotencyKey string
	// hasMessage and excluded are the message facts the active events
	// keep (hasTranscriptMessage, transcriptEventContextEligibility).
	hasMessage, excluded bool
	// search is the entry's full-text row, nil when it has none.
	search *searchRow
}

// searchRow is an entry's row in OpenClaw's full-text index of a session
// (extractTranscriptIndexEntry): the text of a user or assistant message.
type searchRow struct {
	messageID, role, text string
	// timestamp is the entry's raw timestamp member.
	timestamp json.RawMessage
}

// factsOf returns the facts of the entry whose JSON is event, which must
// be an object. Members are read as JavaScript's JSON.parse reads them: a
// member given twice has its last value.
func factsOf(event []byte) (facts, error) {
	var f facts
	var entry map[string]json.RawMessage
	if t := bytes.TrimLeft(event, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return f, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(event, &entry); err != nil {
		return f, err
	}
	var message map[string]json.RawMessage
	raw, has := entry["message"]
	if has {
		_ = json.Unmarshal(raw, &message) // nil unless an object
	}
	f.idempotencyKey = string(message["idempotencyKey"])
	f.envelope = map[string]string{}
	for k, v := range entry {
		if k != "message" && k != externalizer.MarkerKey {
			f.envelope[k] = string(v)
		}
	}
	f.hasMessage = has
	f.excluded = string(bytes.TrimSpace(message["excludeFromContext"])) == "true"
	f.search = searchOf(entry, message)
	return f, nil
}

// searchOf returns the full-text row of an entry whose members are entry
// and whose message's are message, as extractTranscriptIndexEntry makes
// it, or nil.
func searchOf(entry, message map[string]json.RawMessage) *searchRow {
	var typ, id, role string
	if json.Unmarshal(entry["type"], &typ) != nil || typ != "message" ||
		json.Unmarshal(entry["id"], &id) != nil || message == nil ||
		json.Unmarshal(message["role"], &role) != nil || (role != "user" && role != "assistant") {
		return nil
	}
	id = jsTrim(id)
	text := messageText(message)
	if id == "" || text == "" {
		return nil
	}
	return &searchRow{messageID: id, role: role, text: text, timestamp: entry["timestamp"]}
}

// messageText returns the searchable text of a message (readMessageText):
// its content when a string, else its text member when a string, else
// its text blocks that are not blank, joined by line breaks.
func messageText(message map[string]json.RawMessage) string {
	var s string
	if json.Unmarshal(message["content"], &s) == nil && isString(message["content"]) {
		return jsTrim(s)
	}
	if json.Unmarshal(message["text"], &s) == nil && isString(message["text"]) {
		return jsTrim(s)
	}
	var blocks []json.RawMessage
	if json.Unmarshal(message["content"], &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		var block map[string]json.RawMessage
		var typ, text string
		if json.Unmarshal(b, &block) != nil || block == nil || json.Unmarshal(block["type"], &typ) != nil ||
			(typ != "text" && typ != "input_text" && typ != "output_text") ||
			!isString(block["text"]) || json.Unmarshal(block["text"], &text) != nil || jsTrim(text) == "" {
			continue
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n")
}

// isString reports whether raw is a JSON string.
func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// jsTrim trims s as JavaScript's String.prototype.trim does: white space
// and line terminators as ECMAScript defines them.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0xfeff, 0x2028, 0x2029:
			return true
		}
		return unicode.Is(unicode.Zs, r)
	})
}

// sameEntry reports whether b may replace a in a row: the same entry,
// with the same members but its message and the marker, the same message
// identity and the same context eligibility. Such a rewrite keeps the
// entry's identity row and its active event as they are, by OpenClaw's
// own reading (transcriptRewritePreservesProjection, which compares the
// marker too but reads it nowhere); only its full-text row may change.
// Migrating and restoring a line make no other rewrite.
func sameEntry(a, b facts) bool {
	return maps.Equal(a.envelope, b.envelope) && a.idempotencyKey == b.idempotencyKey &&
		a.hasMessage == b.hasMessage && a.excluded == b.excluded
}

// sameSearch reports whether two entries have the same full-text row.
func sameSearch(a, b *searchRow) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.messageID == b.messageID && a.role == b.role && a.text == b.text && bytes.Equal(a.timestamp, b.timestamp)
}

// searchTimestamp returns the timestamp of a full-text row whose entry's
// raw timestamp member is raw, as OpenClaw derives it: the member when a
// number, the time a string gives when Date.parse reads it, else
// createdAt (the row's created_at). It returns false for a string that
// is not an RFC 3339 time, which JavaScript may read otherwise.
func searchTimestamp(raw json.RawMessage, createdAt float64) (float64, bool) {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		var n float64
		err := json.Unmarshal(t, &n) // fails beyond float64, where JavaScript has Infinity
		return n, err == nil
	case !isString(t):
		return createdAt, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return float64(tm.UnixMilli()), true
}
