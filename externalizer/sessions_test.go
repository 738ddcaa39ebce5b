package externalizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in ../testdata/golden")

const (
	sessionsDir = "../testdata/sessions"
	goldenDir   = "../testdata/golden"
)

// line is one line of a transcript, copied out of the Reader's buffer.
type line struct {
	num       int
	text, eol []byte
}

func splitLines(data []byte) []line {
	var ls []line
	r := transcript.NewReader(bytes.NewReader(data))
	for {
		l, err := r.Next()
		if err != nil {
			return ls
		}
		ls = append(ls, line{l.Num, bytes.Clone(l.Text), bytes.Clone(l.EOL)})
	}
}

func (l line) start() int { return transcript.JSONStart(transcript.Line{Num: l.num, Text: l.text}) }

// parse returns the JSON object of l, or false for a line that is not one.
func (l line) parse() (transcript.Value, bool) {
	v, err := transcript.Parse(l.text, l.start())
	return v, err == nil && v.Kind() == transcript.Object
}

// markerOf returns the decoded marker of a migrated entry.
func markerOf(t testing.TB, root transcript.Value) (marker, bool) {
	t.Helper()
	at, ok := findMarker(root)
	if !ok {
		return marker{}, false
	}
	require.Equal(t, at.end, at.mem.Value.End, "the marker is not the last member")
	var mk marker
	require.NoError(t, markerAPI.Unmarshal(at.mem.Value.Raw(), &mk))
	return mk, true
}

// readSession returns the bytes of the session file name and its format:
// pi for a file of none detected, a pi session without a header.
func readSession(t testing.TB, name string) ([]byte, Format) {
	t.Helper()
	input, err := os.ReadFile(name)
	require.NoError(t, err)
	f, ok := detectFormat(input)
	if !ok {
		f = piFormat
	}
	return input, f
}

func sessionFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(sessionsDir, "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no sessions in %s; run go generate ./internal/sessiongen", sessionsDir)
	return files
}

// headerless are the pi sessions in testdata/sessions that have no
// session header, so that no format is detected; pi finds their sites.
var headerless = map[string]bool{"bom-big-first-line.jsonl": true}

// wantFormat returns the format of a file in testdata/sessions, which its
// name's prefix gives; pi sessions have none, or "generated-".
func wantFormat(name string) string {
	for prefix, format := range map[string]string{"claude-": "claude-code", "codex-": "codex", "chat-": "chat", "copilot-": "copilot", "gemini-": "gemini", "qwen-": "qwen"} {
		if strings.HasPrefix(name, prefix) {
			return format
		}
	}
	return "pi"
}

func TestSessions(t *testing.T) {
	for _, name := range sessionFiles(t) {
		input, err := os.ReadFile(name)
		require.NoError(t, err)
		base := filepath.Base(name)
		f, ok := detectFormat(input)
		if headerless[base] {
			require.False(t, ok, "%s: detected as %v", base, f)
			f = piFormat
		}
		require.True(t, ok || headerless[base], "%s: no format detected", base)
		require.Equal(t, wantFormat(base), f.Name(), "%s: detected format", base)
		for _, threshold := range []int{4096, 64, 1} {
			t.Run(fmt.Sprintf("%s/%d", base, threshold), func(t *testing.T) {
				out, store := roundTrip(t, f, threshold, input)
				checkMigrated(t, f, threshold, input, out, store)
				checkNoSiteMissed(t, f, threshold, out)
				checkShorter(t, input, out)
			})
		}
	}
}

// generated are the generated sessions of testdata/sessions: pi's, named
// generated-*, and those of the other formats.
var generated = []string{"generated-*.jsonl", "claude-session.jsonl", "claude-subagent.jsonl",
	"codex-rollout.jsonl", "codex-legacy.jsonl", "chat-messages.jsonl", "chat-conversations.jsonl"}

// TestGeneratedSessionsShrink guards against a migration that silently
// stops finding payloads: generated sessions are mostly tool output.
func TestGeneratedSessionsShrink(t *testing.T) {
	var files []string
	for _, pattern := range generated {
		matches, _ := filepath.Glob(filepath.Join(sessionsDir, pattern))
		require.NotEmpty(t, matches, pattern)
		files = append(files, matches...)
	}
	for _, name := range files {
		input, err := os.ReadFile(name)
		require.NoError(t, err)
		f, ok := detectFormat(input)
		require.True(t, ok, name)
		out, _ := roundTrip(t, f, 4096, input)
		assert.Less(t, len(out), len(input)*9/10, "%s: %d -> %d bytes", filepath.Base(name), len(input), len(out))
	}
}

// checkMigrated checks the migrated output out of input, line by line:
// same line endings; a line that was JSON still is; the marker records the
// original's hash; every replaced value keeps its JSON type; artifactRefs
// that were there survive; OpenClaw's synthetic results are untouched; and
// migrating again changes nothing.
func checkMigrated(t testing.TB, f Format, threshold int, input, out []byte, store memStore) {
	t.Helper()
	in, mig := splitLines(input), splitLines(out)
	require.Len(t, mig, len(in), "line count")
	x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Open: store.open, Put: func(a Artifact) error {
		return fmt.Errorf("a second migration stores artifact %s", a.Digest)
	}}
	refAt := Pointer{"message", "details", "artifactRef"}
	for i, a := range in {
		b := mig[i]
		n := a.num
		require.Equal(t, a.eol, b.eol, "line %d: end of line", n)
		again, err := x.Rewrite(b.text, b.start())
		require.NoError(t, err, "line %d: second migration", n)
		require.Nil(t, again.Line, "line %d: a second migration changed it", n)

		orig, isObj := a.parse()
		if isObj && isSynthetic(orig) {
			assert.Equal(t, string(a.text), string(b.text), "line %d: synthetic result changed", n)
		}
		if bytes.Equal(a.text, b.text) {
			continue
		}
		require.True(t, isObj, "line %d: changed, but it is no JSON object", n)
		require.Equal(t, a.text[:a.start()], b.text[:b.start()], "line %d: bytes before the JSON", n)
		if json.Valid(a.text[a.start():]) {
			assert.True(t, json.Valid(b.text[b.start():]), "line %d: no longer valid JSON", n)
		}
		root, ok := b.parse()
		require.True(t, ok, "line %d: migrated line does not parse", n)
		mk, ok := markerOf(t, root)
		require.True(t, ok, "line %d: changed without a marker", n)
		sum := sha256.Sum256(a.text)
		assert.Equal(t, hex.EncodeToString(sum[:]), mk.SHA256, "line %d: marker hash", n)
		for _, e := range mk.Edits {
			p, ok := format.ParsePointer(e.At)
			require.True(t, ok, "line %d: bad pointer %q", n, e.At)
			before, okBefore := p.Resolve(orig)
			after, okAfter := p.Resolve(root)
			require.True(t, okBefore && okAfter, "line %d: %q does not resolve (before %v, after %v)", n, e.At, okBefore, okAfter)
			if len(e.Added) > 0 {
				assert.Equal(t, transcript.Object, before.Kind(), "line %d: %q", n, e.At)
				assert.Equal(t, transcript.Object, after.Kind(), "line %d: %q", n, e.At)
				continue
			}
			assert.Equal(t, before.Kind(), after.Kind(), "line %d: %q changed its JSON type", n, e.At)
			if before.Kind() == transcript.Array && f.Name() != "pi" {
				checkTextBlock(t, f, after, fmt.Sprintf("line %d: %q", n, e.At))
			}
		}
		if ref, ok := refAt.Resolve(orig); ok {
			got, ok := refAt.Resolve(root)
			require.True(t, ok, "line %d: artifactRef lost", n)
			assert.Equal(t, string(ref.Raw()), string(got.Raw()), "line %d: artifactRef changed", n)
		}
	}
}

// checkShorter checks that every line the migration changed got shorter,
// but for an entry with a member called like the marker that is its own:
// such an entry is wrapped in a marker even when nothing moves.
func checkShorter(t testing.TB, input, out []byte) {
	t.Helper()
	in, got := splitLines(input), splitLines(out)
	require.Equal(t, len(in), len(got))
	for i, l := range in {
		if bytes.Equal(l.text, got[i].text) {
			continue
		}
		if root, ok := l.parse(); ok {
			if _, own := findMarker(root); own {
				continue
			}
		}
		assert.Less(t, len(got[i].text), len(l.text), "line %d grew", l.num)
	}
}

func isSynthetic(entry transcript.Value) bool {
	msg, _ := entry.Get("message")
	role, _ := msg.Get("role")
	synthetic, _ := Pointer{"details", "openclawSyntheticMissingToolResult"}.Resolve(msg)
	return role.IsString("toolResult") && string(synthetic.Raw()) == "true"
}

// checkTextBlock checks that an array payload of a format other than pi
// was replaced by one text block, whose type is the one the format's
// agent reads: "input_text" for Codex, "text" otherwise; or, for Gemini
// CLI, whose array payloads are a shell's screens, by one line of one
// token, [[{"text":...}]].
func checkTextBlock(t testing.TB, f Format, after transcript.Value, where string) {
	t.Helper()
	if f.Name() == "gemini" || f.Name() == "qwen" {
		line, _ := after.Index(0)
		token, _ := line.Index(0)
		text, _ := token.Get("text")
		assert.Equal(t, `[[`+string(token.Raw())+`]]`, string(after.Raw()), "%s: placeholder is no line of one token", where)
		assert.Equal(t, `{"text":`+string(text.Raw())+`}`, string(token.Raw()), "%s: placeholder token is no text", where)
		return
	}
	want := "text"
	if f.Name() == "codex" {
		want = "input_text"
	}
	n := 0
	after.Elems(func(_ int, e transcript.Value) bool {
		n++
		typ, _ := e.Get("type")
		txt, _ := e.Get("text")
		assert.True(t, e.Kind() == transcript.Object && typ.IsString(want) && txt.Kind() == transcript.String,
			"%s: placeholder element %s is no {\"type\":%q,\"text\":...} block", where, e.Raw(), want)
		return true
	})
	assert.Equal(t, 1, n, "%s: placeholder %.80s is not one block", where, after.Raw())
}

// checkNoSiteMissed checks that no payload of threshold bytes or more is
// left inline in a migrated transcript at a site of format f: values
// sites holds whole must be replaced when they are that large, and the
// values it searches must hold no string that large. Values an edit
// replaced, placeholders, are exempt, and so are the sites f finds that
// moving would not shorten their line (see Moves), which are small.
func checkNoSiteMissed(t testing.TB, f Format, threshold int, out []byte) {
	t.Helper()
	sites := siteCheckers[f.Name()]
	require.NotNil(t, sites, "no site checker for %s", f.Name())
	x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath}
	for _, l := range splitLines(out) {
		root, ok := l.parse()
		if !ok {
			continue
		}
		found := f.Sites(root, threshold, nil)
		moves, err := x.Moves(root, found, nil)
		require.NoError(t, err, "line %d", l.num)
		var exempt []transcript.Value
		for i, s := range found {
			if moves[i] {
				continue
			}
			if k := s.Value.Kind(); k == transcript.String || k == transcript.Array || k == transcript.Object {
				// Moving it would cost a placeholder and an edit, a few
				// hundred bytes with the tests' short store path: a
				// larger site kept is a site missed.
				assert.Less(t, s.Value.Len(), 2048, "line %d: %s kept inline", l.num, s.Path)
			}
			exempt = append(exempt, s.Value)
		}
		if mk, ok := markerOf(t, root); ok {
			for _, e := range mk.Edits {
				p, _ := format.ParsePointer(e.At)
				if v, ok := p.Resolve(root); ok && len(e.Parts) > 0 {
					exempt = append(exempt, v)
				}
			}
		}
		inline := func(what string, v transcript.Value) {
			for _, r := range exempt {
				if v.Start >= r.Start && v.End <= r.End {
					return
				}
			}
			t.Errorf("line %d: %s holds %d bytes inline at byte %d: %.60q", l.num, what, v.Len(), v.Start, v.Raw())
		}
		sites(root, siteCheck{
			whole: func(what string, v transcript.Value) {
				switch v.Kind() {
				case transcript.String, transcript.Array, transcript.Object:
					if v.Len() >= threshold {
						inline(what, v)
					}
				}
			},
			strings: func(what string, v transcript.Value) {
				walkStrings(v, func(s transcript.Value) {
					if s.Len() >= threshold {
						inline(what, s)
					}
				})
			},
		})
	}
}

// siteCheck is what a site checker reports the payload values of an entry
// to: a value that is a payload as a whole (a tool result's content, an
// image block), or one whose large strings are payloads (structured tool
// output).
type siteCheck struct {
	whole, strings func(what string, v transcript.Value)
}

// siteCheckers list, for each format, where its payloads are, as the spec
// says, independently of the format's site finder.
var siteCheckers = map[string]func(root transcript.Value, c siteCheck){
	"pi":          piPayloads,
	"claude-code": claudePayloads,
	"codex":       codexPayloads,
	"chat":        chatPayloads,
	"gemini":      geminiPayloads,
	"qwen":        qwenPayloads,
}

// qwenPayloads: the output and error of the functionResponse parts and
// the inlineData parts of a record's message, of its toolCallResult's
// responseParts and of each content of a compression's
// systemPayload.compressedHistory, where the text of a file embedded in
// full is one too; the toolCallResult's resultDisplay, whole when it is
// a string or an array, its strings when an object.
func qwenPayloads(root transcript.Value, c siteCheck) {
	parts := func(ps transcript.Value) {
		ps.Elems(func(_ int, p transcript.Value) bool {
			resp, _ := Pointer{"functionResponse", "response"}.Resolve(p)
			for _, k := range []string{"output", "error"} {
				v, _ := resp.Get(k)
				c.whole("functionResponse "+k, v)
			}
			if _, ok := p.Get("inlineData"); ok {
				c.whole("inlineData part", p)
			}
			return true
		})
	}
	msg, _ := Pointer{"message", "parts"}.Resolve(root)
	parts(msg)
	resp, _ := Pointer{"toolCallResult", "responseParts"}.Resolve(root)
	parts(resp)
	display, _ := Pointer{"toolCallResult", "resultDisplay"}.Resolve(root)
	if display.Kind() == transcript.Object {
		c.strings("resultDisplay", display)
	} else {
		c.whole("resultDisplay", display)
	}
	history, _ := Pointer{"systemPayload", "compressedHistory"}.Resolve(root)
	history.Elems(func(_ int, content transcript.Value) bool {
		ps, _ := content.Get("parts")
		parts(ps)
		ps.Elems(func(_ int, p transcript.Value) bool {
			if text, _ := p.Get("text"); strings.HasPrefix(text.Text(), "Recently accessed file (full current content embedded):") {
				c.whole("embedded file", text)
			}
			return true
		})
		return true
	})
}

// geminiPayloads: in each message record (a line's own, or those of the
// messages of a $set or a header), the output and error of every
// functionResponse part and the inlineData parts, in the content and in
// the tool calls' results, those parts' own parts too; a tool call's
// result given as a string; and its resultDisplay, whole when it is a
// string or an array (a shell's screen), its strings when an object.
func geminiPayloads(root transcript.Value, c siteCheck) {
	var parts func(ps transcript.Value)
	part := func(p transcript.Value) {
		if fr, ok := p.Get("functionResponse"); ok {
			resp, _ := fr.Get("response")
			for _, k := range []string{"output", "error"} {
				v, _ := resp.Get(k)
				c.whole("functionResponse "+k, v)
			}
			inner, _ := fr.Get("parts")
			parts(inner)
			binary, _ := resp.Get("__binary_injection__")
			parts(binary)
		}
		if _, ok := p.Get("inlineData"); ok {
			c.whole("inlineData part", p)
		}
	}
	parts = func(ps transcript.Value) {
		ps.Elems(func(_ int, p transcript.Value) bool {
			part(p)
			return true
		})
	}
	message := func(m transcript.Value) {
		content, _ := m.Get("content")
		parts(content)
		calls, _ := m.Get("toolCalls")
		calls.Elems(func(_ int, call transcript.Value) bool {
			result, _ := call.Get("result")
			switch result.Kind() {
			case transcript.String:
				c.whole("result", result)
			case transcript.Object:
				part(result)
			}
			parts(result)
			display, _ := call.Get("resultDisplay")
			if display.Kind() == transcript.Object {
				c.strings("resultDisplay", display)
			} else {
				c.whole("resultDisplay", display)
			}
			return true
		})
	}
	if _, ok := root.Get("id"); ok {
		message(root)
		return
	}
	msgs, _ := Pointer{"$set", "messages"}.Resolve(root)
	if msgs.Kind() != transcript.Array {
		msgs, _ = root.Get("messages")
	}
	msgs.Elems(func(_ int, m transcript.Value) bool {
		message(m)
		return true
	})
}

// piPayloads: tool result content and details (but an artifactRef),
// command output, and image blocks, in a message, a compaction's system
// message or a custom message; and what a context edit replaces a
// message's content with: a string, and the text and image blocks of an
// array.
func piPayloads(root transcript.Value, c siteCheck) {
	images := func(content transcript.Value) {
		content.Elems(func(_ int, e transcript.Value) bool {
			if typ, _ := e.Get("type"); typ.IsString("image") {
				c.whole("image block", e)
			}
			return true
		})
	}
	typ, _ := root.Get("type")
	switch {
	case typ.IsString("compaction"):
		sys, _ := root.Get("systemMessage")
		content, _ := sys.Get("content")
		images(content)
		return
	case typ.IsString("custom_message"):
		content, _ := root.Get("content")
		images(content)
		return
	case typ.IsString("context_edit"):
		content, _ := Pointer{"replacement", "content"}.Resolve(root)
		if content.Kind() == transcript.String {
			c.whole("replacement", content)
		}
		images(content)
		content.Elems(func(_ int, e transcript.Value) bool {
			if typ, _ := e.Get("type"); typ.IsString("text") {
				text, _ := e.Get("text")
				c.whole("replacement text", text)
			}
			return true
		})
		return
	case !typ.IsString("message"):
		return
	}
	msg, _ := root.Get("message")
	if msg.Kind() != transcript.Object || isSynthetic(root) {
		return
	}
	role, _ := msg.Get("role")
	content, _ := msg.Get("content")
	switch {
	case role.IsString("toolResult"):
		c.strings("content", content)
		details, _ := msg.Get("details")
		details.Members(func(m transcript.Member) bool {
			if last, _ := details.Get(m.Key.Text()); last.Start == m.Value.Start && !m.Key.IsString("artifactRef") {
				c.strings("details", m.Value)
			}
			return true
		})
	case role.IsString("bashExecution"):
		output, _ := msg.Get("output")
		c.strings("output", output)
	}
	images(content)
}

// claudePayloads: the content of tool_result blocks and image blocks in a
// message, also in a subagent's message of a progress line; the strings of
// toolUseResult; the other strings of a progress line's data (a command's
// output so far).
func claudePayloads(root transcript.Value, c siteCheck) {
	blocks := func(content transcript.Value) {
		content.Elems(func(_ int, e transcript.Value) bool {
			typ, _ := e.Get("type")
			switch {
			case typ.IsString("tool_result"):
				content, _ := e.Get("content")
				c.whole("tool_result content", content)
			case typ.IsString("image"):
				c.whole("image block", e)
			}
			return true
		})
	}
	typ, _ := root.Get("type")
	switch {
	case typ.IsString("user"), typ.IsString("assistant"):
		msg, _ := root.Get("message")
		content, _ := msg.Get("content")
		blocks(content)
		r, _ := root.Get("toolUseResult")
		c.strings("toolUseResult", r)
	case typ.IsString("progress"):
		data, _ := root.Get("data")
		m, _ := data.Get("message")
		inner, _ := m.Get("message")
		content, _ := inner.Get("content")
		blocks(content)
		data.Members(func(m transcript.Member) bool {
			if last, _ := data.Get(m.Key.Text()); last.Start == m.Value.Start && !m.Key.IsString("message") {
				c.strings("progress data", m.Value)
			}
			return true
		})
	}
}

// codexPayloads: the output of function and custom tool call outputs and
// the input_image items of messages, bare (legacy), in a response_item or
// in a compacted history; the output fields of exec_command_end; the
// images of a user_message event; the instructions a turn_context repeats.
func codexPayloads(root transcript.Value, c siteCheck) {
	output := func(item transcript.Value) {
		typ, _ := item.Get("type")
		switch {
		case typ.IsString("function_call_output"), typ.IsString("custom_tool_call_output"):
			out, _ := item.Get("output")
			c.whole("output", out)
		case typ.IsString("message"):
			content, _ := item.Get("content")
			content.Elems(func(_ int, e transcript.Value) bool {
				if t, _ := e.Get("type"); t.IsString("input_image") {
					c.whole("input_image", e)
				}
				return true
			})
		}
	}
	payload, ok := root.Get("payload")
	if !ok {
		output(root)
		return
	}
	typ, _ := root.Get("type")
	switch {
	case typ.IsString("response_item"):
		output(payload)
	case typ.IsString("event_msg"):
		if pt, _ := payload.Get("type"); pt.IsString("user_message") {
			images, _ := payload.Get("images")
			images.Elems(func(_ int, e transcript.Value) bool {
				c.whole("image", e)
				return true
			})
		}
		if pt, _ := payload.Get("type"); pt.IsString("exec_command_end") {
			for _, k := range []string{"stdout", "stderr", "aggregated_output", "formatted_output"} {
				if v, _ := payload.Get(k); v.Kind() == transcript.String {
					c.whole(k, v)
				}
			}
		}
	case typ.IsString("turn_context"):
		for _, k := range []string{"user_instructions", "developer_instructions"} {
			if v, _ := payload.Get(k); v.Kind() == transcript.String {
				c.whole(k, v)
			}
		}
	case typ.IsString("compacted"):
		history, _ := payload.Get("replacement_history")
		history.Elems(func(_ int, item transcript.Value) bool {
			output(item)
			return true
		})
	}
}

// chatPayloads: the content of tool (and legacy function) messages, on
// their own line or in a messages array.
func chatPayloads(root transcript.Value, c siteCheck) {
	message := func(m transcript.Value) {
		if role, _ := m.Get("role"); role.IsString("tool") || role.IsString("function") {
			content, _ := m.Get("content")
			c.whole("content", content)
		}
	}
	message(root)
	msgs, _ := root.Get("messages")
	msgs.Elems(func(_ int, m transcript.Value) bool {
		message(m)
		return true
	})
}

func walkStrings(v transcript.Value, fn func(transcript.Value)) {
	switch v.Kind() {
	case transcript.String:
		fn(v)
	case transcript.Object:
		v.Members(func(m transcript.Member) bool {
			walkStrings(m.Value, fn)
			return true
		})
	case transcript.Array:
		v.Elems(func(_ int, e transcript.Value) bool {
			walkStrings(e, fn)
			return true
		})
	}
}

// goldenCases are small hand-written sessions whose migrated form, at a
// threshold of 256, is kept in testdata/golden: pi's, and one of each
// other format.
var goldenCases = []string{
	"bom-header.jsonl",
	"crlf-line-endings.jsonl",
	"forged-placeholder.jsonl",
	"key-order.jsonl",
	"openclaw-artifactref.jsonl",
	"python-ensure-ascii.jsonl",
	"claude-placeholder-lookalikes.jsonl",
	"codex-escapes.jsonl",
	"chat-escapes.jsonl",
}

func TestGolden(t *testing.T) {
	for _, name := range goldenCases {
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(sessionsDir, name))
			require.NoError(t, err)
			f, ok := detectFormat(input)
			require.True(t, ok, "no format detected")
			require.Equal(t, wantFormat(name), f.Name())
			got, _ := roundTrip(t, f, 256, input)
			golden := filepath.Join(goldenDir, name)
			if *update {
				require.NoError(t, os.MkdirAll(goldenDir, 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./externalizer -update")
			if !bytes.Equal(got, want) {
				t.Errorf("migrated %s differs from %s (go test ./externalizer -update rewrites it):\n%s", name, golden, firstDiff(want, got))
			}
		})
	}
}

// firstDiff describes the first line where got differs from want.
func firstDiff(want, got []byte) string {
	w, g := splitLines(want), splitLines(got)
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b line
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a.text, b.text) || !bytes.Equal(a.eol, b.eol) {
			at := 0
			for at < min(len(a.text), len(b.text)) && a.text[at] == b.text[at] {
				at++
			}
			from := max(0, at-40)
			return fmt.Sprintf("line %d, byte %d:\nwant …%q\ngot  …%q", i+1, at,
				clip(a.text[from:], 160), clip(b.text[from:], 160))
		}
	}
	return "no difference"
}

func clip(b []byte, n int) string {
	return strings.ToValidUTF8(string(b[:min(len(b), n)]), "?")
}

// TestMovesAgreesWithRewrite: Moves reports the sites Rewrite moves,
// whatever the threshold, so that check and migrate agree.
func TestMovesAgreesWithRewrite(t *testing.T) {
	for _, name := range sessionFiles(t) {
		input, f := readSession(t, name)
		for _, threshold := range []int{4096, 256, 1} {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(name), threshold), func(t *testing.T) {
				store := memStore{}
				migrate := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath, Put: store.put, Open: store.open}
				look := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath}
				for _, l := range splitLines(input) {
					res, err := migrate.Rewrite(l.text, l.start())
					require.NoError(t, err)
					root, ok := l.parse()
					if !ok {
						continue
					}
					sites := f.Sites(root, threshold, nil)
					moves, err := look.Moves(root, sites, nil)
					require.NoError(t, err)
					if _, own := findMarker(root); own {
						continue // Rewrite wraps or keeps it
					}
					var want, got []string
					for i, s := range sites {
						if moves[i] {
							want = append(want, fmt.Sprintf("%s#%d", s.Path, s.Dup))
						}
					}
					if res.Line != nil {
						migrated, err := transcript.Parse(res.Line, l.start())
						require.NoError(t, err)
						mk, _ := markerOf(t, migrated)
						for _, e := range mk.Edits {
							if len(e.Parts) > 0 {
								got = append(got, fmt.Sprintf("%s#%d", e.At, e.Dup))
							}
						}
					}
					assert.Equal(t, want, got, "line %d", l.num)
				}
			})
		}
	}
}

// TestStandInBoundsMoves: the stand-in artifacts Moves measures a site
// with, instead of decoding and hashing it, never promise more than the
// real ones give: a site they say moves saves at least as much.
func TestStandInBoundsMoves(t *testing.T) {
	compared := 0
	for _, name := range sessionFiles(t) {
		input, f := readSession(t, name)
		for _, threshold := range []int{4096, 256, 64, 1} {
			x := &Externalizer{Format: f, Threshold: threshold, PathFor: testPath}
			for _, l := range splitLines(input) {
				root, ok := l.parse()
				if !ok {
					continue
				}
				f.Calls(root, x.addCall)
				sites := f.Sites(root, threshold, nil)
				holes, err := x.cut(sites, nil)
				require.NoError(t, err)
				for i := range sites {
					if holes[i] == nil {
						continue
					}
					s := &sites[i]
					low, err := x.measure(root, s, holes[i], nil, true, standIn(siteLength(s, nil)))
					require.NoError(t, err)
					real, err := x.measure(root, s, holes[i], nil, true, func(h hole) (Artifact, Form, error) { return x.artifact(h, s, nil) })
					require.NoError(t, err)
					assert.LessOrEqual(t, low.gain, real.gain, "%s/%d line %d: %s", filepath.Base(name), threshold, l.num, s.Path)
					compared++
				}
			}
		}
	}
	t.Logf("%d sites compared", compared)
}
