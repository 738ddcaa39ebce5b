// Package sessiongen writes synthetic session transcripts for tests, in
// every format transcript-tool knows: pi / OpenClaw (Generate), Claude
// Code main sessions and subagent files (GenerateClaude), Codex rollouts,
// current and legacy (GenerateCodex), and chat-completions logs
// (GenerateChat). They hold every entry type and every payload site of
// their format, tool output of chosen sizes full of the characters that
// trip up JSON handling, and real PNG images.
//
// # Determinism
//
// The generators are pure functions of their arguments: the same seed
// gives the same bytes, on every platform, so generated files can be
// committed as test data and regenerated with
//
//	go generate ./internal/sessiongen
//
// Hostile returns small hand-made files, one per edge case, that no
// well-behaved writer produces but real transcripts contain; those of the
// other formats are named for theirs (claude-, codex-, chat-).
package sessiongen

//go:generate go run ./cmd/gensessions -out ../../testdata/sessions

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
)

// Options says what Generate writes.
type Options struct {
	// Seed selects the session; the same Options give the same bytes.
	Seed uint64
	// Entries is how many entries follow the session header (at least).
	Entries int
	// Version is the pi session version: 1 writes entries without ids as
	// early pi did, 3 writes a versioned header and entries linked by id
	// and parentId as pi v3 and OpenClaw do.
	Version int
	// MinPayload and MaxPayload bound the size in bytes of tool output,
	// command output and images; sizes are spread log-uniformly between
	// them, so small results are common and large ones present.
	MinPayload, MaxPayload int
}

// File is a transcript and the name it is stored under.
type File struct {
	Name string
	Data []byte
}

// Sessions returns the generated sessions kept in testdata/sessions: pi
// sessions, then those of the other formats, named for their format.
func Sessions() []File {
	pi := func(o Options) func() []byte { return func() []byte { return Generate(o) } }
	set := []struct {
		name string
		make func() []byte
	}{
		{"generated-v3-openclaw.jsonl", pi(Options{Seed: 1, Entries: 120, Version: 3, MinPayload: 16, MaxPayload: 32000})},
		{"generated-v1.jsonl", pi(Options{Seed: 2, Entries: 100, Version: 1, MinPayload: 16, MaxPayload: 20000})},
		{"generated-near-threshold.jsonl", pi(Options{Seed: 3, Entries: 60, Version: 3, MinPayload: 3000, MaxPayload: 6000})},
		{"claude-session.jsonl", func() []byte {
			return GenerateClaude(Options{Seed: 11, Entries: 80, MinPayload: 16, MaxPayload: 12000}, false)
		}},
		{"claude-subagent.jsonl", func() []byte {
			return GenerateClaude(Options{Seed: 12, Entries: 30, MinPayload: 16, MaxPayload: 6000}, true)
		}},
		{"codex-rollout.jsonl", func() []byte {
			return GenerateCodex(Options{Seed: 21, Entries: 60, MinPayload: 16, MaxPayload: 10000}, false)
		}},
		{"codex-legacy.jsonl", func() []byte {
			return GenerateCodex(Options{Seed: 22, Entries: 40, MinPayload: 16, MaxPayload: 8000}, true)
		}},
		{"chat-messages.jsonl", func() []byte {
			return GenerateChat(Options{Seed: 31, Entries: 50, MinPayload: 16, MaxPayload: 12000}, false)
		}},
		{"chat-conversations.jsonl", func() []byte {
			return GenerateChat(Options{Seed: 32, Entries: 12, MinPayload: 16, MaxPayload: 12000}, true)
		}},
	}
	files := make([]File, len(set))
	for i, s := range set {
		files[i] = File{s.name, s.make()}
	}
	return files
}

// Generate returns a session transcript: a header line, then at least
// o.Entries entries. The first entries go through every kind of entry, and
// every shape of tool result, once, so even a short session has them all;
// the rest are drawn at random.
func Generate(o Options) []byte {
	if o.Version != 1 {
		o.Version = 3
	}
	g := newGen(o)
	g.header()
	for i := 0; i < int(numEvents) || g.n < o.Entries; i++ {
		if i < int(numEvents) {
			g.emit(event(i), true)
		} else {
			g.emit(g.pick(), false)
		}
	}
	return g.buf.Bytes()
}

// event is a kind of thing that happens in a session; some write several
// entries.
type event int

const (
	evToolTurn event = iota // assistant tool calls and their results
	evUser
	evUserImage
	evAssistantText
	evBashExecution
	evModelChange
	evThinkingChange
	evCompaction
	evSynthetic
	numEvents
)

// weights are the odds of each event after the first round.
var weights = [numEvents]int{
	evToolTurn: 12, evUser: 3, evUserImage: 1, evAssistantText: 2, evBashExecution: 1,
	evModelChange: 1, evThinkingChange: 1, evCompaction: 1, evSynthetic: 1,
}

type gen struct {
	o      Options
	r      *rand.Rand
	buf    bytes.Buffer
	n      int // entries written after the header
	now    time.Time
	parent string // id of the last entry (v3)
	w      writer // how lines are encoded
}

func newGen(o Options) *gen {
	o.MinPayload = max(o.MinPayload, 1)
	o.MaxPayload = max(o.MaxPayload, o.MinPayload)
	return &gen{
		o:   o,
		r:   rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		now: time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC).Add(time.Duration(o.Seed%1000) * time.Hour),
		w:   js,
	}
}

func (g *gen) pick() event { return event(g.weighted(weights[:])) }

// weighted returns an index into odds, drawn with those odds.
func (g *gen) weighted(odds []int) int {
	total := 0
	for _, w := range odds {
		total += w
	}
	n := g.r.IntN(total)
	for i, w := range odds {
		if n < w {
			return i
		}
		n -= w
	}
	return 0
}

// emit writes the entries of event e; first is true for the first round,
// which shows every variant and a large payload of each kind.
func (g *gen) emit(e event, first bool) {
	switch e {
	case evToolTurn:
		g.toolTurn(first)
	case evUser:
		g.message(g.userMessage(false))
	case evUserImage:
		g.message(g.userMessage(true))
	case evAssistantText:
		g.message(g.assistant(arr{obj{{"type", "text"}, {"text", g.prose(g.r.IntN(600) + 20)}}}, "stop"))
	case evBashExecution:
		g.bashExecution(first)
	case evModelChange:
		models := []string{"claude-opus-4-5", "claude-sonnet-4-5", "gpt-5.1-codex", "gemini-2.5-pro"}
		g.entry("model_change", member{"provider", "anthropic"}, member{"modelId", models[g.r.IntN(len(models))]})
	case evThinkingChange:
		levels := []string{"off", "minimal", "low", "medium", "high"}
		g.entry("thinking_level_change", member{"thinkingLevel", levels[g.r.IntN(len(levels))]})
	case evCompaction:
		g.compaction()
	case evSynthetic:
		g.synthetic()
	}
}

// tick advances the clock and returns the ISO time and the Unix
// milliseconds of the next entry.
func (g *gen) tick() (string, int64) {
	g.now = g.now.Add(time.Duration(50+g.r.IntN(20000)) * time.Millisecond)
	return g.now.Format("2006-01-02T15:04:05.000Z"), g.now.UnixMilli()
}

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func (g *gen) toolCallID() string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("toolu_01")
	for range 22 {
		b = append(b, alnum[g.r.IntN(len(alnum))])
	}
	return string(b)
}

func (g *gen) write(v obj) {
	g.buf.Write(g.w.line(v))
	g.buf.WriteByte('\n')
}

func (g *gen) header() {
	ts, _ := g.tick()
	h := obj{{"type", "session"}}
	if g.o.Version == 3 {
		h = append(h, member{"version", 3})
	}
	h = append(h, member{"id", g.uuid()}, member{"timestamp", ts}, member{"cwd", "/home/dev/src/projet-été"})
	if g.o.Version == 1 {
		h = append(h, member{"provider", "anthropic"}, member{"modelId", "claude-sonnet-4-5"}, member{"thinkingLevel", "off"})
	}
	g.write(h)
}

// entry writes one entry of type typ with the given members after the
// common ones.
func (g *gen) entry(typ string, members ...member) {
	ts, _ := g.tick()
	e := obj{{"type", typ}}
	if g.o.Version == 3 {
		id := g.hex(8)
		var parent any
		if g.parent != "" {
			parent = g.parent
		}
		e = append(e, member{"id", id}, member{"parentId", parent})
		g.parent = id
	}
	e = append(e, member{"timestamp", ts})
	g.write(append(e, members...))
	g.n++
}

func (g *gen) message(m obj) { g.entry("message", member{"message", m}) }

func (g *gen) ms() int64 { _, ms := g.tick(); return ms }

// size draws a payload size.
func (g *gen) size() int {
	lo, hi := math.Log(float64(g.o.MinPayload)), math.Log(float64(g.o.MaxPayload))
	return int(math.Exp(lo + g.r.Float64()*(hi-lo)))
}

func (g *gen) userMessage(withImage bool) obj {
	content := arr{obj{{"type", "text"}, {"text", g.prose(g.r.IntN(400) + 10)}}}
	if withImage {
		content = append(content, g.imageBlock())
	}
	return obj{{"role", "user"}, {"content", content}, {"timestamp", g.ms()}}
}

func (g *gen) imageBlock() obj {
	data, mime := g.image(min(g.size(), 24000))
	return obj{{"type", "image"}, {"data", base64.StdEncoding.EncodeToString(data)}, {"mimeType", mime}}
}

// image returns a PNG of noise of about n bytes.
func (g *gen) image(n int) ([]byte, string) {
	side := max(1, int(math.Sqrt(float64(n)/3)))
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			v := g.r.Uint32()
			img.SetNRGBA(x, y, color.NRGBA{uint8(v), uint8(v >> 8), uint8(v >> 16), 255})
		}
	}
	var b bytes.Buffer
	// Noise does not compress; stored blocks keep the bytes independent of
	// the compressor's version.
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&b, img); err != nil {
		panic(err) // writing to memory does not fail
	}
	return b.Bytes(), "image/png"
}

func (g *gen) assistant(content arr, stop string) obj {
	in, out := g.r.IntN(20000), g.r.IntN(2000)
	return obj{
		{"role", "assistant"}, {"content", content},
		{"api", "anthropic-messages"}, {"provider", "anthropic"}, {"model", "claude-sonnet-4-5"},
		{"usage", obj{
			{"input", in}, {"output", out}, {"cacheRead", 0}, {"cacheWrite", 0}, {"totalTokens", in + out},
			{"cost", obj{{"input", float64(in) * 3e-6}, {"output", float64(out) * 1.5e-5}, {"cacheRead", 0}, {"cacheWrite", 0}, {"total", float64(in)*3e-6 + float64(out)*1.5e-5}}},
		}},
		{"stopReason", stop}, {"timestamp", g.ms()},
	}
}

// call is one tool call of an assistant turn.
type call struct {
	id, tool string
	args     obj
	variant  variant
}

// variant is the shape of a tool result.
type variant int

const (
	plain      variant = iota
	failed             // isError: true
	imageRead          // read of an image file: text and image blocks
	truncated          // details.truncation.content repeats the output
	aggregated         // OpenClaw exec details: details.aggregated repeats the output
	numVariants
)

// variants are the odds of each variant per tool.
var variants = map[string][numVariants]int{
	"read":  {plain: 8, failed: 2, imageRead: 2, truncated: 4},
	"bash":  {plain: 4, failed: 2, truncated: 4, aggregated: 4},
	"edit":  {plain: 7, failed: 1},
	"write": {plain: 7, failed: 1},
}

var tools = []string{"read", "bash", "edit", "write"}

func (g *gen) variant(tool string) variant {
	odds := variants[tool]
	return variant(g.weighted(odds[:]))
}

// toolTurn writes an assistant message with tool calls and their results.
// The first turn of a session calls every tool in every variant.
func (g *gen) toolTurn(first bool) {
	var calls []call
	if first {
		for _, tool := range tools {
			for v, w := range variants[tool] {
				if w > 0 {
					calls = append(calls, call{tool: tool, variant: variant(v)})
				}
			}
		}
	} else {
		for range 1 + g.r.IntN(3) {
			tool := tools[g.r.IntN(len(tools))]
			calls = append(calls, call{tool: tool, variant: g.variant(tool)})
		}
	}
	content := arr{}
	if g.r.IntN(3) == 0 {
		content = append(content, obj{{"type", "thinking"}, {"thinking", g.prose(g.r.IntN(800) + 40)}, {"thinkingSignature", g.hex(64)}})
	}
	for i := range calls {
		c := &calls[i]
		c.id = g.toolCallID()
		path := g.path()
		switch c.tool {
		case "read":
			c.args = obj{{"path", path}}
		case "bash":
			c.args = obj{{"command", g.command()}, {"timeout", 120}}
		case "edit":
			c.args = obj{{"path", path}, {"oldText", g.code(g.r.IntN(300) + 20)}, {"newText", g.code(g.r.IntN(300) + 20)}}
		case "write":
			c.args = obj{{"path", path}, {"content", g.code(g.r.IntN(3000) + 20)}}
		}
		content = append(content, obj{{"type", "toolCall"}, {"id", c.id}, {"name", c.tool}, {"arguments", c.args}})
	}
	g.message(g.assistant(content, "toolUse"))
	for _, c := range calls {
		g.message(g.toolResult(c))
	}
}

// toolResult returns the result of c in the shape pi and OpenClaw write
// for that tool and variant.
func (g *gen) toolResult(c call) obj {
	var (
		text    string
		content arr
		details obj
		isError = c.variant == failed
	)
	path, _ := c.args[0].v.(string)
	switch c.tool {
	case "read":
		switch c.variant {
		case failed:
			text = "ENOENT: no such file or directory, access '" + path + "'"
		case imageRead:
			data, mime := g.image(min(g.size(), 24000))
			content = arr{
				obj{{"type", "text"}, {"text", "Read image file [" + mime + "]"}},
				obj{{"type", "image"}, {"data", base64.StdEncoding.EncodeToString(data)}, {"mimeType", mime}},
			}
		default:
			text = g.code(g.size())
			if c.variant == truncated {
				details = obj{{"truncation", g.truncation(text)}}
			}
		}
	case "bash":
		text = g.log(g.size())
		switch c.variant {
		case failed:
			text += "\n\nCommand exited with code 1"
		case truncated:
			details = obj{{"truncation", g.truncation(text)}, {"fullOutputPath", "/tmp/pi-bash-" + g.hex(8) + ".log"}}
		case aggregated:
			details = obj{{"status", "completed"}, {"exitCode", 0}, {"durationMs", g.r.IntN(90000)},
				{"aggregated", text}, {"cwd", "/home/dev/src"}}
		}
	case "edit":
		if isError {
			text = "Could not find the exact text in " + path + ". The old text must match exactly including all whitespace and newlines."
		} else {
			text = fmt.Sprintf("Successfully replaced text in %s. Changed %d characters to %d characters.", path, g.r.IntN(5000), g.r.IntN(5000))
			details = obj{{"diff", g.diff(g.size())}}
		}
	case "write":
		body, _ := c.args[1].v.(string)
		text = fmt.Sprintf("Successfully wrote %d bytes to %s", len(body), path)
		if isError {
			text = "EACCES: permission denied, open '" + path + "'"
		}
	}
	if content == nil {
		content = arr{obj{{"type", "text"}, {"text", text}}}
	}
	m := obj{{"role", "toolResult"}, {"toolCallId", c.id}, {"toolName", c.tool}, {"content", content}}
	if details != nil {
		m = append(m, member{"details", details})
	}
	return append(m, member{"isError", isError}, member{"timestamp", g.ms()})
}

func (g *gen) truncation(text string) obj {
	lines := strings.Count(text, "\n") + 1
	return obj{
		{"content", text}, {"truncated", true}, {"truncatedBy", "lines"},
		{"totalLines", lines + g.r.IntN(5000)}, {"totalBytes", len(text) + g.r.IntN(200000)},
		{"outputLines", lines}, {"outputBytes", len(text)},
		{"lastLinePartial", false}, {"firstLineExceedsLimit", false},
	}
}

func (g *gen) bashExecution(large bool) {
	n := g.size()
	if large {
		n = max(n, 4096+g.r.IntN(4096))
	}
	out := g.log(n)
	m := obj{{"role", "bashExecution"}, {"command", g.command()}, {"output", out}, {"exitCode", g.r.IntN(3)},
		{"cancelled", false}, {"truncated", len(out) > 30000}}
	if len(out) > 30000 {
		m = append(m, member{"fullOutputPath", "/tmp/pi-bash-" + g.hex(8) + ".log"})
	}
	g.message(append(m, member{"timestamp", g.ms()}))
}

func (g *gen) compaction() {
	summary := "# Context Checkpoint\n\n## Goal\n" + g.prose(g.r.IntN(3000)+200)
	tokens := member{"tokensBefore", 50000 + g.r.IntN(150000)}
	if g.o.Version == 3 {
		g.entry("compaction", member{"summary", summary}, member{"firstKeptEntryId", g.parent}, tokens)
		return
	}
	g.entry("compaction", member{"summary", summary}, member{"firstKeptEntryIndex", g.n / 2}, tokens)
}

// synthetic writes a tool call whose result went missing and the result
// OpenClaw inserts to repair the transcript. Half of them carry large text
// so that a migration that does not leave them alone is caught.
func (g *gen) synthetic() {
	c := call{id: g.toolCallID(), tool: "bash", args: obj{{"command", g.command()}}}
	g.message(g.assistant(arr{obj{{"type", "toolCall"}, {"id", c.id}, {"name", c.tool}, {"arguments", c.args}}}, "toolUse"))
	text := "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."
	details := obj{{"openclawSyntheticMissingToolResult", true}}
	if g.r.IntN(2) == 0 {
		text += "\n" + g.log(g.size()+4096)
		details = append(details, member{"aggregated", text})
	}
	g.message(obj{{"role", "toolResult"}, {"toolCallId", c.id}, {"toolName", c.tool},
		{"content", arr{obj{{"type", "text"}, {"text", text}}}}, {"details", details},
		{"isError", true}, {"timestamp", g.ms()}})
}

var (
	words = strings.Fields(`the session tool result file line error value config build test
		cache index payload artifact token model agent store hash commit branch merge request
		naïve café déjà 日本語 テスト 中文 Ünïcödé señor Ελληνικά русский 🎉 🚀 👩‍💻`)
	dirs  = []string{"src", "internal/store", "pkg/api", "docs", "test/fixtures", "web/static", "données"}
	exts  = []string{".go", ".ts", ".py", ".md", ".json", ".rs", ".txt"}
	spice = []string{
		"naïve café — déjà vu; 日本語のテキスト; emoji 🎉🚀👩‍💻 and 𝄞",
		"line separator \u2028 and paragraph separator \u2029 inside one line",
		"control bytes: \x00 \x01 \x07 \x1b[31mred\x1b[0m \x7f end",
		`json inside: {"a": "b\\c", "path": "C:\\Users\\dev", "q": "\"quoted\""}`,
		"<script>alert('&amp; \"html\"')</script> </div>",
		"tab\tseparated\tvalues\t1\t2.5\t-3",
		"carriage\rreturn and CRLF\r",
		"byte order mark \uFEFF in the middle, replacement char \uFFFD",
		"unicode escapes written out: \\u00e9 \\ud83d\\ude00 \\n",
		"slashes: https://example.com/a/b?c=d&e=f </script>",
	}
)

func (g *gen) word() string { return words[g.r.IntN(len(words))] }

func (g *gen) path() string {
	return "/home/dev/" + dirs[g.r.IntN(len(dirs))] + "/" + g.word() + "_" + g.hex(3) + exts[g.r.IntN(len(exts))]
}

func (g *gen) command() string {
	cmds := []string{"go test ./...", "npm run build 2>&1 | tail -50", "rg -n 'TODO' src/", "ls -la", `grep -r "é" . | head`, "cat " + g.path()}
	return cmds[g.r.IntN(len(cmds))]
}

func (g *gen) prose(n int) string {
	return g.lines(n, func() string {
		var b strings.Builder
		for range 4 + g.r.IntN(12) {
			b.WriteString(g.word())
			b.WriteByte(' ')
		}
		return b.String()
	})
}

func (g *gen) code(n int) string { return g.lines(n, g.codeLine) }

func (g *gen) codeLine() string {
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("\tif err := load%d(ctx, %q); err != nil {", g.r.IntN(100), g.path())
	case 1:
		return fmt.Sprintf("\t\treturn fmt.Errorf(\"%s %%w: \\\"%s\\\"\", err)", g.word(), g.word())
	case 2:
		return fmt.Sprintf("// %s handles the %s case, see C:\\src\\%s\\%d", g.word(), g.word(), g.word(), g.r.IntN(9))
	case 3:
		return fmt.Sprintf("const re%d = /^[a-z]+\\/\\d{%d}$/u; // %s", g.r.IntN(50), g.r.IntN(9), g.word())
	case 4:
		return "}"
	}
	return fmt.Sprintf("\tvar %s_%d = %q", g.word(), g.r.IntN(1000), g.word()+" "+g.word())
}

func (g *gen) log(n int) string {
	return g.lines(n, func() string {
		switch g.r.IntN(4) {
		case 0:
			return fmt.Sprintf("\x1b[32m✓\x1b[0m %s %s (%dms)", g.word(), g.word(), g.r.IntN(900))
		case 1:
			return fmt.Sprintf("%s:%d:%d: %s %s", g.path(), g.r.IntN(900), g.r.IntN(80), g.word(), g.word())
		case 2:
			return fmt.Sprintf("-rw-r--r--  1 dev  staff  %7d Jun  1 09:%02d %s", g.r.IntN(1<<20), g.r.IntN(60), g.word())
		}
		return fmt.Sprintf("[%s] %s\t%s", g.now.Format(time.TimeOnly), g.word(), g.word())
	})
}

func (g *gen) diff(n int) string {
	return g.lines(n, func() string {
		sign := []string{"+", "-", " "}[g.r.IntN(3)]
		return fmt.Sprintf("%s%4d %s", sign, g.r.IntN(2000), g.codeLine())
	})
}

// lines returns about n bytes of lines from next, with a spice line now
// and then, cut to at most n bytes on a character boundary.
func (g *gen) lines(n int, next func() string) string {
	var b strings.Builder
	for b.Len() < n {
		if g.r.IntN(10) == 0 {
			b.WriteString(spice[g.r.IntN(len(spice))])
		} else {
			b.WriteString(next())
		}
		b.WriteByte('\n')
	}
	s := b.String()[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
