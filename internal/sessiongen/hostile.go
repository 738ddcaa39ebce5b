package sessiongen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash/fnv"
	"strings"
)

// Hostile returns small transcripts, each built around one thing a
// transcript tool must survive: line endings, byte order marks, lines that
// are not JSON, escaping styles, numbers no float holds, duplicate keys,
// deep nesting, invalid UTF-8, and genuine content that looks like what the
// tool itself writes. Each file is named for what it tests; every one holds
// payloads large enough to be externalized at the default threshold.
func Hostile() []File {
	cases := []struct {
		name string
		make func(h *hostile) [][]byte
	}{
		{"crlf-line-endings.jsonl", (*hostile).crlf},
		{"bom-header.jsonl", (*hostile).bomHeader},
		{"bom-big-first-line.jsonl", (*hostile).bomBigFirstLine},
		{"blank-lines.jsonl", (*hostile).blankLines},
		{"non-json-lines.jsonl", (*hostile).nonJSON},
		{"torn-last-line.jsonl", (*hostile).tornLastLine},
		{"no-final-newline.jsonl", (*hostile).noFinalNewline},
		{"python-ensure-ascii.jsonl", (*hostile).pythonASCII},
		{"slash-escapes-upper-hex.jsonl", (*hostile).slashUpperHex},
		{"lone-surrogates.jsonl", (*hostile).loneSurrogates},
		{"duplicate-keys.jsonl", (*hostile).duplicateKeys},
		{"numbers.jsonl", (*hostile).numbers},
		{"forged-placeholder.jsonl", (*hostile).forgedPlaceholder},
		{"foreign-marker-member.jsonl", (*hostile).foreignMarker},
		{"openclaw-artifactref.jsonl", (*hostile).openclawArtifactRef},
		{"openclaw-synthetic.jsonl", (*hostile).openclawSynthetic},
		{"key-order.jsonl", (*hostile).keyOrder},
		{"deep-nesting.jsonl", (*hostile).deepNesting},
		{"invalid-utf8.jsonl", (*hostile).invalidUTF8},
		{"image-blocks.jsonl", (*hostile).imageBlocks},
		{"content-shapes.jsonl", (*hostile).contentShapes},
		{"whitespace.jsonl", (*hostile).whitespace},
		{"escaped-keys.jsonl", (*hostile).escapedKeys},
		{"claude-tool-result-shapes.jsonl", (*hostile).claudeToolResultShapes},
		{"claude-placeholder-lookalikes.jsonl", (*hostile).claudePlaceholderLookalikes},
		{"claude-progress.jsonl", (*hostile).claudeProgress},
		{"claude-tool-use-results.jsonl", (*hostile).claudeToolUseResults},
		{"claude-tool-use-result-arrays.jsonl", (*hostile).claudeToolUseResultArrays},
		{"claude-escapes.jsonl", (*hostile).claudeEscapes},
		{"codex-output-shapes.jsonl", (*hostile).codexOutputShapes},
		{"codex-exec-events.jsonl", (*hostile).codexExecEvents},
		{"codex-compacted.jsonl", (*hostile).codexCompacted},
		{"codex-legacy-items.jsonl", (*hostile).codexLegacy},
		{"codex-escapes.jsonl", (*hostile).codexEscapes},
		{"chat-content-shapes.jsonl", (*hostile).chatContentShapes},
		{"chat-messages-array.jsonl", (*hostile).chatMessagesArray},
		{"chat-escapes.jsonl", (*hostile).chatEscapes},
	}
	files := make([]File, len(cases))
	for i, c := range cases {
		// Seeded by name, so that adding a case leaves the others as they are.
		seed := fnv.New64a()
		seed.Write([]byte(c.name))
		h := &hostile{g: newGen(Options{Seed: seed.Sum64(), MinPayload: 1, MaxPayload: 1}), name: c.name}
		// Each case returns its lines with their end-of-line bytes.
		files[i] = File{c.name, bytes.Join(c.make(h), nil)}
	}
	return files
}

// hostile builds the lines of one hostile case.
type hostile struct {
	g    *gen
	name string
}

// bigSize is the size of the large texts: over the default threshold of
// 4096 JSON bytes even before escaping.
const bigSize = 4400

func (h *hostile) big() string    { return h.g.code(bigSize) }
func (h *hostile) bigLog() string { return h.g.log(bigSize) }

func lf(b []byte) []byte { return append(b, '\n') }

func lines(eol string, ls ...[]byte) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = append(append([]byte{}, l...), eol...)
	}
	return out
}

func (h *hostile) header() obj {
	return obj{{"type", "session"}, {"version", 3}, {"id", "hostile-" + strings.TrimSuffix(h.name, ".jsonl")},
		{"timestamp", "2025-07-01T10:00:00.000Z"}, {"cwd", "/tmp/hostile"}}
}

// entry wraps a message in a v3 message entry.
func (h *hostile) entry(msg any) obj {
	return obj{{"type", "message"}, {"id", h.g.hex(8)}, {"parentId", nil}, {"timestamp", "2025-07-01T10:00:00.000Z"}, {"message", msg}}
}

func text(s string) obj { return obj{{"type", "text"}, {"text", s}} }

// result is a toolResult message; details nil is left out.
func (h *hostile) result(tool string, content, details any) obj {
	m := obj{{"role", "toolResult"}, {"toolCallId", h.g.toolCallID()}, {"toolName", tool}, {"content", content}}
	if details != nil {
		m = append(m, member{"details", details})
	}
	return append(m, member{"isError", false}, member{"timestamp", 1751364000000})
}

func (h *hostile) bigResult() obj { return h.entry(h.result("read", arr{text(h.big())}, nil)) }

func (h *hostile) bash(out any) obj {
	return h.entry(obj{{"role", "bashExecution"}, {"command", "make test"}, {"output", out},
		{"exitCode", 0}, {"cancelled", false}, {"truncated", false}, {"timestamp", 1751364000000}})
}

func (h *hostile) user(content ...any) obj {
	return h.entry(obj{{"role", "user"}, {"content", arr(content)}, {"timestamp", 1751364000000}})
}

func (h *hostile) png() string {
	data, _ := h.g.image(3600)
	return base64.StdEncoding.EncodeToString(data)
}

func imageOf(data, mime string) obj {
	return obj{{"type", "image"}, {"data", data}, {"mimeType", mime}}
}

func (h *hostile) crlf() [][]byte {
	call := h.g.toolCallID()
	body := strings.ReplaceAll(h.big(), "\n", "\r\n")
	return lines("\r\n",
		js.line(h.header()),
		js.line(h.user(text("read the file\r\nplease"))),
		js.line(h.entry(obj{{"role", "assistant"}, {"content", arr{obj{{"type", "toolCall"}, {"id", call}, {"name", "read"}, {"arguments", obj{{"path", "/tmp/a.txt"}}}}}}, {"stopReason", "toolUse"}})),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", call}, {"toolName", "read"}, {"content", arr{text(body)}}, {"isError", false}})),
		js.line(h.entry(h.result("bash", arr{text("ok\r\n")}, nil))),
		js.line(h.bash(h.bigLog())),
	)
}

func (h *hostile) bomHeader() [][]byte {
	return lines("\n",
		append(bomBytes(), js.line(h.header())...),
		js.line(h.bigResult()),
	)
}

func (h *hostile) bomBigFirstLine() [][]byte {
	return lines("\n",
		append(bomBytes(), js.line(h.bigResult())...),
		js.line(h.entry(h.result("bash", arr{text(h.bigLog())}, obj{{"aggregated", h.bigLog()}}))),
	)
}

func bomBytes() []byte { return []byte{0xEF, 0xBB, 0xBF} }

func (h *hostile) blankLines() [][]byte {
	return [][]byte{
		[]byte("\n"),
		lf(js.line(h.header())),
		[]byte("\n\n"),
		lf(js.line(h.bigResult())),
		[]byte("   \t\n"),
		[]byte("\r\n"),
		lf(js.line(h.bash(h.bigLog()))),
		[]byte("\n\n\n"),
	}
}

func (h *hostile) nonJSON() [][]byte {
	big := js.line(h.bigResult())
	return lines("\n",
		js.line(h.header()),
		js.line(h.bigResult()),
		[]byte(`this is not JSON: {"role":"toolResult","content":`),
		append([]byte("garbage before "), big...),
		append(append([]byte{}, big...), big...),
		append(append([]byte("["), big...), ']'),
		[]byte(`"a JSON string on its own"`),
		[]byte("42"),
		[]byte("null"),
		js.line(h.bash(h.bigLog())),
	)
}

func (h *hostile) tornLastLine() [][]byte {
	torn := js.line(h.bigResult())
	return [][]byte{
		lf(js.line(h.header())),
		lf(js.line(h.bigResult())),
		torn[:len(torn)/2],
	}
}

func (h *hostile) noFinalNewline() [][]byte {
	return [][]byte{
		lf(js.line(h.header())),
		lf(js.line(h.bigResult())),
		js.line(h.entry(h.result("bash", arr{text(h.bigLog())}, obj{{"aggregated", h.bigLog()}}))),
	}
}

// intl is text with characters outside ASCII, the BMP and the usual
// line breaks.
const intl = "naïve café, déjà vu; 日本語のテキスト; emoji 🎉🚀👩‍💻 𝄞; \u2028 \u2029 \u007f \u0085 end\n"

func (h *hostile) pythonASCII() [][]byte {
	body := strings.Repeat(intl, 8) + h.big()
	return lines("\n",
		python.line(h.header()),
		python.line(h.user(text("résumé ✓"), imageOf(h.png(), "image/png"))),
		python.line(h.entry(h.result("read", arr{text(body)}, nil))),
		python.line(h.entry(h.result("bash", arr{text(body)}, obj{{"status", "completed"}, {"aggregated", body}}))),
		python.line(h.entry(h.result("edit", arr{text("Successfully replaced text in é.go.")}, obj{{"diff", "+ " + body}}))),
		python.line(h.bash(body)),
	)
}

func (h *hostile) slashUpperHex() [][]byte {
	body := "https://example.com/path/to/é/file\n" + strings.Repeat(intl, 4) + h.big()
	// One upper-case escape among a text written by JSON.stringify.
	oneUpper := js.line(h.entry(h.result("read", arr{text("café\n" + body)}, nil)))
	oneUpper = bytes.Replace(oneUpper, []byte("é"), []byte(`\u00E9`), 1)
	return lines("\n",
		js.line(h.header()),
		writer{comma: ",", colon: ":", slash: true, upper: true, ascii: true}.line(h.entry(h.result("read", arr{text(body)}, nil))),
		writer{comma: ",", colon: ":", slash: true}.line(h.entry(h.result("bash", arr{text(body)}, obj{{"aggregated", body}}))),
		writer{comma: ",", colon: ":", upper: true, ascii: true}.line(h.bash(body)),
		oneUpper,
		writer{comma: ",", colon: ":", slash: true}.line(h.user(text("screenshot"), imageOf(h.png(), "image/png"))),
	)
}

// escaped returns a string literal of before, then the escape sequence
// esc as it is, then after.
func escaped(before, esc, after string) rawJSON {
	a, b := js.str(nil, before), js.str(nil, after)
	return rawJSON(string(a[:len(a)-1]) + esc + string(b[1:]))
}

func (h *hostile) loneSurrogates() [][]byte {
	return lines("\n",
		js.line(h.header()),
		js.line(h.entry(h.result("read", arr{obj{{"type", "text"}, {"text", escaped(h.big(), `\ud800`, h.big())}}}, nil))),
		js.line(h.entry(h.result("edit", arr{text("ok")}, obj{{"diff", escaped(h.big(), `\udc00`, "")}}))),
		js.line(h.entry(h.result("bash", arr{obj{{"type", "text"}, {"text", escaped(h.bigLog(), `\udc00\ud800`, "reversed pair")}}}, nil))),
		js.line(h.bash(escaped(h.bigLog(), `\ud83d\ude00 \ud83d`, ""))),
	)
}

func (h *hostile) duplicateKeys() [][]byte {
	id := func() string { return h.g.toolCallID() }
	return lines("\n",
		js.line(h.header()),
		// The last "content" wins in JavaScript: a large one first, then a small one.
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", id()}, {"toolName", "read"},
			{"content", arr{text(h.big())}}, {"content", arr{text("small")}}, {"isError", false}})),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", id()}, {"toolName", "read"},
			{"content", arr{text("small")}}, {"content", arr{text(h.big())}}, {"isError", false}})),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", id()}, {"toolName", "read"},
			{"content", arr{text(h.big())}}, {"content", arr{text(h.big())}}, {"isError", false}})),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", id()}, {"toolName", "bash"}, {"content", arr{text("ok")}},
			{"details", obj{{"aggregated", h.bigLog()}}}, {"details", obj{{"diff", h.big()}, {"diff", "small"}}}, {"isError", false}})),
		js.line(h.entry(obj{{"role", "user"}, {"toolCallId", id()}, {"toolName", "bash"}, {"role", "toolResult"},
			{"content", arr{text(h.bigLog())}}, {"isError", false}})),
		js.line(obj{{"type", "message"}, {"timestamp", "2025-07-01T10:00:00.000Z"},
			{"message", h.result("read", arr{text(h.big())}, nil)}, {"message", h.result("read", arr{text("later")}, nil)}}),
	)
}

func (h *hostile) numbers() [][]byte {
	digits := strings.Repeat("1234567890", 500)
	return lines("\n",
		js.line(h.header()),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", h.g.toolCallID()}, {"toolName", "bash"},
			{"content", arr{text(h.bigLog())}},
			{"details", obj{{"totalBytes", rawJSON("1E+400")}, {"ratio", rawJSON("-0.0")}, {"n", rawJSON("-0")},
				{"tiny", rawJSON("1.0e-400")}, {"x", rawJSON("0.1e1")}, {"aggregated", h.bigLog()}, {"id", rawJSON("12345678901234567890123")}}},
			{"isError", false}, {"timestamp", rawJSON("12345678901234567890123")}})),
		js.line(h.entry(obj{{"role", "bashExecution"}, {"command", "seq"}, {"output", h.bigLog()},
			{"exitCode", rawJSON("-0.0")}, {"cancelled", false}, {"truncated", false}, {"timestamp", rawJSON("1E+400")}})),
		js.line(h.entry(h.result("read", rawJSON(digits), obj{{"huge", rawJSON("-" + digits + ".5e-99999")}}))),
		js.line(h.bash(rawJSON(digits))),
	)
}

// placeholder is the text transcript-tool and OpenClaw put in place of a
// tool result, for artifact id and path.
func placeholder(id, tool, path string) string {
	return "[Tool result omitted: stored as artifact]\nid: " + id + "\ntool: " + tool +
		"\nsize: 12345 bytes\nsummary: package main (310 lines)\npath: " + path
}

func artifactRef(id, tool, path string, hash any) obj {
	ref := obj{{"id", id}, {"type", "tool-result"}, {"toolName", tool}, {"createdAt", "2025-07-01T10:00:00.000Z"},
		{"sizeBytes", 12345}, {"summary", "package main (310 lines)"}, {"path", path}}
	if hash != nil {
		ref = append(ref, member{"hash", hash})
	}
	return ref
}

func (h *hostile) forgedPlaceholder() [][]byte {
	sum := sha256.Sum256([]byte("a forged artifact that no store holds"))
	id := hex.EncodeToString(sum[:])
	path := "artifacts/objects/" + id[:2] + "/" + id
	forged := obj{{"artifactRef", artifactRef(id, "read", path, "sha256:"+id)}, {"artifactVersion", 1}}
	exact := placeholder(id, "read", path)
	return lines("\n",
		js.line(h.header()),
		// A genuine result whose text is exactly a placeholder, and a forged artifactRef.
		js.line(h.entry(h.result("read", arr{text(exact)}, forged))),
		// The same, large: the forged artifactRef must survive and no second one be added.
		js.line(h.entry(h.result("read", arr{text(exact + "\n" + h.big())}, append(forged[:2:2], member{"aggregated", h.big()})))),
		// A placeholder as a plain string content and no details.
		js.line(h.entry(h.result("read", exact+"\n"+h.big(), nil))),
		// Command output that looks like a plain placeholder.
		js.line(h.bash("[Omitted 12345 bytes (text/plain; charset=utf-8): artifact "+id+" at "+path+"]\n"+h.bigLog())),
		// A member that looks like a marker, nested where no marker is.
		js.line(h.entry(h.result("read", arr{text(h.big())}, obj{{"transcriptTool", obj{{"v", 1}, {"sha256", id}, {"edits", arr{}}}}}))),
	)
}

// foreignMarker has entries of their own with a top-level member named
// like transcript-tool's marker, none of them a marker it could have
// written.
func (h *hostile) foreignMarker() [][]byte {
	big := func(extra ...member) obj {
		return append(h.bigResult(), extra...)
	}
	first := append(obj{{"transcriptTool", 1}}, h.bigResult()...)
	return lines("\n",
		js.line(h.header()),
		js.line(big(member{"transcriptTool", "an entry's own member"})),
		js.line(first),
		js.line(big(member{"transcriptTool", obj{{"v", 2}, {"sha256", strings.Repeat("0", 64)}, {"edits", arr{}}}})),
		js.line(big(member{"transcriptTool", obj{{"v", 1}, {"sha256", "not hex"}}}, member{"transcriptTool", nil})),
		js.line(obj{{"type", "note"}, {"transcriptTool", obj{{"v", 1}, {"sha256", "00"}, {"edits", arr{}}}}}),
	)
}

func (h *hostile) openclawArtifactRef() [][]byte {
	id := "art_01J9ZQ4M8X7C6V5B4N3M2K1J0H"
	path := "/home/dev/.openclaw/agents/main/sessions/artifacts/" + id + ".json"
	ref := artifactRef(id, "exec", path, nil)
	return lines("\n",
		js.line(h.header()),
		// A result OpenClaw itself already moved out.
		js.line(h.entry(h.result("exec", arr{text(placeholder(id, "exec", path))}, obj{{"artifactRef", ref}, {"artifactVersion", 1}}))),
		// OpenClaw exec details beside an artifactRef, with large fields.
		js.line(h.entry(h.result("exec", arr{text(h.bigLog())}, obj{{"status", "completed"}, {"exitCode", 0}, {"durationMs", 1234},
			{"aggregated", h.bigLog()}, {"cwd", "/home/dev"}, {"artifactRef", ref}}))),
		// artifactRef without artifactVersion, and the other way round.
		js.line(h.entry(h.result("exec", arr{text(h.bigLog())}, obj{{"artifactRef", ref}}))),
		js.line(h.entry(h.result("exec", arr{text(h.bigLog())}, obj{{"artifactVersion", 1}}))),
		// An artifactRef that is not an object, and details that are not an object.
		js.line(h.entry(h.result("exec", arr{text(h.bigLog())}, obj{{"artifactRef", id}}))),
		js.line(h.entry(h.result("exec", arr{text(h.bigLog())}, "details as a string"))),
	)
}

func (h *hostile) openclawSynthetic() [][]byte {
	note := "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.\n"
	synthetic := func(flag any) obj {
		return h.entry(obj{{"role", "toolResult"}, {"toolCallId", h.g.toolCallID()}, {"toolName", "bash"},
			{"content", arr{text(note + h.bigLog())}}, {"details", obj{{"openclawSyntheticMissingToolResult", flag}, {"aggregated", h.bigLog()}}},
			{"isError", true}, {"timestamp", 1751364000000}})
	}
	return lines("\n",
		js.line(h.header()),
		js.line(synthetic(true)),
		// Only a JSON true marks a synthetic result; these are ordinary ones.
		js.line(synthetic(false)),
		js.line(synthetic("true")),
		js.line(h.entry(obj{{"role", "toolResult"}, {"toolCallId", h.g.toolCallID()}, {"toolName", "bash"},
			{"content", arr{text(h.bigLog())}}, {"details", obj{{"openclawSyntheticMissingToolResult", true}, {"openclawSyntheticMissingToolResult", false}}},
			{"isError", true}})),
	)
}

func (h *hostile) keyOrder() [][]byte {
	return lines("\n",
		js.line(h.header()),
		// content after details, role last.
		js.line(h.entry(obj{{"details", obj{{"diff", h.big()}}}, {"content", arr{text(h.big())}}, {"isError", false},
			{"toolName", "edit"}, {"toolCallId", h.g.toolCallID()}, {"role", "toolResult"}})),
		// type after message, timestamp first.
		js.line(obj{{"timestamp", "2025-07-01T10:00:00.000Z"}, {"message", h.result("read", arr{text(h.big())}, obj{{"truncation", obj{{"truncated", true}, {"content", h.big()}}}})}, {"type", "message"}}),
		js.line(h.entry(obj{{"output", h.bigLog()}, {"command", "ls"}, {"role", "bashExecution"}})),
		js.line(h.entry(obj{{"content", arr{obj{{"mimeType", "image/png"}, {"data", h.png()}, {"type", "image"}}}}, {"role", "user"}})),
	)
}

// nest returns depth opening brackets around inner and the closing ones.
func nest(depth int, open, close, inner string) rawJSON {
	return rawJSON(strings.Repeat(open, depth) + inner + strings.Repeat(close, depth))
}

func (h *hostile) deepNesting() [][]byte {
	big := string(js.str(nil, h.big()))
	return lines("\n",
		js.line(h.header()),
		// Deeper than any parser should follow: the line is kept as it is.
		js.line(h.entry(h.result("read", arr{text(h.big()), nest(1000, "[", "]", "1")}, nil))),
		js.line(h.entry(h.result("read", arr{text("x")}, obj{{"jsonOutputs", nest(1000, `{"a":`, "}", big)}}))),
		// Depth 512 in all (entry, message, content and 509 arrays), then 513.
		js.line(h.entry(h.result("read", nest(509, "[", "]", big), nil))),
		js.line(h.entry(h.result("read", nest(510, "[", "]", big), nil))),
		// Deep but not too deep, with large strings at several depths.
		js.line(h.entry(h.result("read", arr{nest(200, "[", "]", big+","+string(nest(200, `{"k":`, "}", big)))}, nil))),
		// Unbalanced: never closed.
		[]byte(`{"type":"message","message":{"role":"toolResult","content":`+strings.Repeat("[", 1000)+big),
	)
}

func (h *hostile) invalidUTF8() [][]byte {
	bad := "\xff\xfe truncated \xe6\x97 overlong \xc0\xaf surrogate \xed\xa0\x80 lone continuation \x80"
	return lines("\n",
		js.line(h.header()),
		js.line(h.entry(h.result("read", arr{text(h.big() + bad + h.big())}, nil))),
		// Invalid bytes in the small JSON around a large string.
		js.line(h.entry(h.result("re\xffad", arr{obj{{"type", "te\xffxt"}, {"text", h.big()}}}, nil))),
		js.line(h.entry(h.result("edit", arr{text("ok")}, obj{{"diff\xff", h.big()}, {"aggregated\xff\xfe", bad + h.big()}}))),
		js.line(h.user(imageOf(h.png(), "image/\xffpng"))),
		js.line(obj{{"type", "message"}, {"id", "\xff\xfe"}, {"timestamp", "2025-07-01T10:00:00\xff"},
			{"message", h.result("bash", arr{text(h.bigLog())}, nil)}}),
		js.line(h.bash(bad+h.bigLog())),
	)
}

func (h *hostile) imageBlocks() [][]byte {
	png := h.png()
	nonCanonical := nonCanonicalBase64(png)
	wrapped := ""
	for i := 0; i < len(png); i += 76 {
		wrapped += png[i:min(i+76, len(png))] + "\n"
	}
	return lines("\n",
		js.line(h.header()),
		js.line(h.user(text("what is this?"), imageOf(png, "image/png"))),
		js.line(h.user(imageOf(nonCanonical, "image/png"))),
		js.line(h.user(imageOf("data:image/png;base64,"+png, "image/png"))),
		js.line(h.user(obj{{"type", "image"}, {"data", png}})),
		js.line(h.user(imageOf(png, "image/png; charset=binary"))),
		js.line(h.user(imageOf(strings.TrimRight(png, "="), "image/png"))),
		js.line(h.user(imageOf(wrapped, "image/png"))),
		js.line(h.user(imageOf(png, "image/jpeg"))),
		js.line(h.user(obj{{"type", "image"}, {"data", png}, {"data", png[:100]}, {"mimeType", "image/png"}})),
		js.line(h.user(obj{{"type", "image"}, {"data", rawJSON(strings.Repeat("9", 5000))}, {"mimeType", "image/png"}})),
		js.line(h.user(obj{{"type", "image"}, {"data", arr{png[:3000], png[3000:]}}, {"mimeType", "image/png"}})),
		js.line(h.entry(obj{{"role", "assistant"}, {"content", arr{text("here"), imageOf(png, "image/png")}}, {"stopReason", "stop"}})),
		js.line(h.entry(h.result("read", arr{text("Read image file [image/png]"), imageOf(png, "image/png")}, nil))),
		js.line(h.entry(h.result("read", arr{text(h.big()), imageOf(png, "image/png"), imageOf(png, "image/png")}, nil))),
	)
}

func (h *hostile) contentShapes() [][]byte {
	return lines("\n",
		js.line(h.header()),
		js.line(h.entry(h.result("read", h.big(), nil))),
		js.line(h.entry(h.result("edit", nil, obj{{"diff", h.big()}}))),
		js.line(h.entry(h.result("read", text(h.big()), nil))),
		js.line(h.entry(h.result("read", arr{}, obj{{"truncation", obj{{"content", h.big()}}}}))),
		js.line(h.entry(h.result("read", arr{text("ok")}, h.big()))),
		js.line(h.entry(h.result("read", arr{text("ok")}, arr{h.big()}))),
		js.line(h.entry(h.result("read", arr{text("ok")}, obj{{"jsonOutputs", arr{obj{{"out", h.big()}}, h.big()}}}))),
		js.line(h.entry(obj{{"role", "toolResult"}, {"content", arr{text(h.big()), text(h.big())}}})),
		js.line(h.bash(arr{h.bigLog(), h.bigLog()})),
		js.line(h.bash(obj{{"stdout", h.bigLog()}})),
		js.line(h.bash(nil)),
		js.line(obj{{"type", "message"}, {"message", h.big()}}),
		js.line(obj{{"type", "message"}, {"message", arr{h.result("read", arr{text(h.big())}, nil)}}}),
	)
}

func (h *hostile) whitespace() [][]byte {
	loose := writer{comma: " ,\t", colon: " : "}
	return lines("\n",
		append([]byte("  "), loose.line(h.header())...),
		append([]byte("\t"), append(loose.line(h.bigResult()), " \t "...)...),
		loose.line(h.bash(h.bigLog())),
		append(loose.line(h.entry(h.result("bash", arr{text(h.bigLog())}, obj{{"aggregated", h.bigLog()}}))), "\r\r"...),
	)
}

func (h *hostile) escapedKeys() [][]byte {
	line := js.line(h.entry(h.result("read", arr{text(h.big())}, obj{{"a/b~c", h.big()}, {"", h.bigLog()}, {"x\u2028y", h.big()}, {"~1", h.big()}})))
	for _, r := range [][2]string{
		{`"content":`, `"con\u0074ent":`},
		{`"role":"toolResult"`, `"\u0072ole":"tool\u0052esult"`},
		{`"type":"message"`, `"type":"m\u0065ssage"`},
		{`"~1":`, `"\u007e1":`},
	} {
		line = bytes.Replace(line, []byte(r[0]), []byte(r[1]), 1)
	}
	return lines("\n",
		js.line(h.header()),
		line,
		bytes.Replace(js.line(h.user(imageOf(h.png(), "image/png"))), []byte(`"data":`), []byte(`"d\u0061ta":`), 1),
	)
}

// nonCanonicalBase64 returns b64 re-encoded so that the unused bits of its
// last digit are not zero: it still decodes, but encoding the decoded bytes
// does not give it back.
func nonCanonicalBase64(b64 string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		panic(err)
	}
	if len(data)%3 == 0 {
		data = append(data, 0) // padding leaves unused bits
	}
	enc := []byte(base64.StdEncoding.EncodeToString(data))
	i := bytes.LastIndexFunc(enc, func(r rune) bool { return r != '=' })
	enc[i] = alphabet[strings.IndexByte(alphabet, enc[i])^1]
	return string(enc)
}

// BigLine returns a transcript for memory measurements: a session header,
// one tool result whose line is about size bytes (its text stored twice,
// in content and in details.aggregated, as OpenClaw does), a line that is
// not JSON, and a torn last line.
func BigLine(size int) File {
	h := &hostile{g: newGen(Options{Seed: 1, MinPayload: 1, MaxPayload: 1}), name: "big-line.jsonl"}
	text := h.g.log(size / 2)
	line := js.line(h.entry(h.result("bash", arr{obj{{"type", "text"}, {"text", text}}},
		obj{{"aggregated", text}})))
	torn := js.line(h.bigResult())
	data := bytes.Join([][]byte{
		lf(js.line(h.header())),
		lf(line),
		lf([]byte("this line is not JSON")),
		torn[:len(torn)/2],
	}, nil)
	return File{h.name, data}
}
