package benchgen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// File sizes are drawn as weights of the whole between these bounds.
const (
	minFileWeight = 1 << 14
	maxFileWeight = 1 << 26
)

// projects is the number of project directories of each format.
const projects = 6

// writeSessions writes o.Files session files under dir, o.Size bytes in
// all. Each file is given its share of what is left of the size, so the
// total comes within a few payloads of o.Size. Of every eight files two
// are Claude Code sessions and one a pi session written in Python's
// ensure_ascii style; the others are pi sessions as pi and OpenClaw write
// them.
func writeSessions(dir string, o Options) (Stats, error) {
	r := rand.New(rand.NewPCG(o.Seed, corpusStream))
	weights := make([]uint64, o.Files)
	var whole uint64
	for i := range weights {
		weights[i] = uint64(logNormal(r, fileMu, fileSigma, minFileWeight, maxFileWeight))
		whole += weights[i]
	}
	var st Stats
	start := time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)
	for i, w := range weights {
		var target int64
		if left := o.Size - st.Bytes; left > 0 {
			target = int64(share(uint64(left), w, whole))
		}
		whole -= w
		s := newSession(r.Uint64(), start.Add(time.Duration(i)*97*time.Minute))
		project := s.r.IntN(projects)
		var (
			name  string
			style = transcript.StyleJS
			body  = s.pi
		)
		switch i % 8 {
		case 3, 7:
			name = filepath.Join("claude", fmt.Sprintf("-home-dev-src-project%d", project), s.id+".jsonl")
			body = s.claude
			st.ClaudeFiles++
		case 5:
			style = transcript.StyleASCII
			fallthrough
		default:
			started := s.now.Format("2006-01-02T15-04-05-000Z")
			name = filepath.Join("pi", fmt.Sprintf("--home-dev-src-project%d--", project), started+"_"+s.id+".jsonl")
			st.PiFiles++
		}
		n, err := writeFile(filepath.Join(dir, name), style, &st, func(e *enc) {
			s.e = e
			body(target)
		})
		if err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += n
	}
	return st, nil
}

// session writes the entries of one transcript.
type session struct {
	r        *rand.Rand
	e        *enc
	now      time.Time
	id       string // the session's id
	last     string // id (pi) or uuid (Claude Code) of the last entry
	openclaw bool   // OpenClaw: exec results duplicated in details.aggregated
	agent    string // Claude Code: the subagent's id, in a subagent's transcript
	recent   []text // the last payloads, some of which come again
}

func newSession(seed uint64, start time.Time) *session {
	s := &session{r: rand.New(rand.NewPCG(seed, fileStream)), now: start}
	s.id = s.uuid()
	s.openclaw = s.r.IntN(2) == 0
	return s
}

// more reports whether the file has not reached target bytes and can still
// be written.
func (s *session) more(target int64) bool { return s.e.pos() < target && s.e.err() == nil }

// output returns the payload of a tool result of kind k: usually a new
// one, now and then one given before, as when a file is read again.
func (s *session) output(k kind) text {
	if len(s.recent) > 0 && s.r.IntN(25) == 0 {
		return s.recent[s.r.IntN(len(s.recent))]
	}
	t := text{seed: s.r.Uint64(), kind: k, size: payloadSize(s.r)}
	if len(s.recent) == 8 {
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, t)
	return t
}

// image returns an image payload whose base64 is about a payload's size.
func (s *session) image() picture {
	return picture{seed: s.r.Uint64(), size: payloadSize(s.r) * 3 / 4}
}

// tick advances the clock and returns the ISO time and the Unix
// milliseconds of the next entry.
func (s *session) tick() (string, int64) {
	s.now = s.now.Add(time.Duration(50+s.r.IntN(20000)) * time.Millisecond)
	return s.now.Format("2006-01-02T15:04:05.000Z"), s.now.UnixMilli()
}

func (s *session) ms() int64 { _, ms := s.tick(); return ms }

func (s *session) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	hexDigits = "0123456789abcdef"
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

func (s *session) uuid() string {
	h := s.chars(hexDigits, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func (s *session) toolCallID() string { return "toolu_01" + s.chars(alnum, 22) }

func (s *session) prose(n int) string { return words(s.r, n) }

// call is one tool call and the payload of its result.
type call struct {
	id, tool, path string
	out            text
	img            picture
	image          bool
}

// toolCalls returns one to three calls: reads of files and of images,
// commands, searches.
func (s *session) toolCalls() []call {
	calls := make([]call, 1+s.r.IntN(3))
	for i := range calls {
		c := call{id: s.toolCallID(), path: "/home/dev/" + filePath(s.r)}
		switch n := s.r.IntN(100); {
		case n < 5:
			c.tool, c.image, c.img = "read", true, s.image()
			c.path += ".png"
		case n < 50:
			c.tool, c.out = "read", s.output(kindCode)
		case n < 90:
			c.tool, c.out = "bash", s.output(kindLog)
		default:
			c.tool, c.out = "grep", s.output(kindLog)
		}
		calls[i] = c
	}
	return calls
}

const cwd = "/home/dev/src/projet-été"

// pi writes a pi v3 session of about target bytes: a header, then turns of
// tool calls and their results, with now and then a prompt (some with a
// screenshot) or an answer.
func (s *session) pi(target int64) {
	ts, _ := s.tick()
	s.e.line(obj{{"type", "session"}, {"version", 3}, {"id", s.id}, {"timestamp", ts}, {"cwd", cwd}})
	s.piMessage(obj{{"role", "user"}, {"content", arr{obj{{"type", "text"}, {"text", s.prose(10 + s.r.IntN(60))}}}}, {"timestamp", s.ms()}})
	for first := true; first || s.more(target); first = false {
		if s.r.IntN(6) == 0 {
			content := arr{obj{{"type", "text"}, {"text", s.prose(5 + s.r.IntN(80))}}}
			if s.r.IntN(10) == 0 {
				content = append(content, obj{{"type", "image"}, {"data", s.image()}, {"mimeType", "image/png"}})
			}
			s.piMessage(obj{{"role", "user"}, {"content", content}, {"timestamp", s.ms()}})
		}
		calls := s.toolCalls()
		var blocks arr
		for _, c := range calls {
			args := obj{{"path", c.path}}
			if c.tool == "bash" {
				args = obj{{"command", "go test ./... 2>&1 | tail -n 200"}, {"timeout", 120}}
			}
			blocks = append(blocks, obj{{"type", "toolCall"}, {"id", c.id}, {"name", c.tool}, {"arguments", args}})
		}
		s.piMessage(s.piAssistant(blocks, "toolUse"))
		for _, c := range calls {
			s.piMessage(s.piResult(c))
		}
		if s.r.IntN(3) == 0 {
			s.piMessage(s.piAssistant(arr{obj{{"type", "text"}, {"text", s.prose(10 + s.r.IntN(100))}}}, "stop"))
		}
	}
}

func (s *session) piMessage(m obj) {
	id := s.chars(hexDigits, 8)
	var parent any
	if s.last != "" {
		parent = s.last
	}
	s.last = id
	ts, _ := s.tick()
	s.e.line(obj{{"type", "message"}, {"id", id}, {"parentId", parent}, {"timestamp", ts}, {"message", m}})
}

func (s *session) piAssistant(content arr, stop string) obj {
	in, out := s.r.IntN(20000), s.r.IntN(2000)
	return obj{{"role", "assistant"}, {"content", content}, {"api", "anthropic-messages"}, {"provider", "anthropic"},
		{"model", "claude-sonnet-4-5"}, {"usage", obj{{"input", in}, {"output", out}, {"cacheRead", 0}, {"cacheWrite", 0}, {"totalTokens", in + out}}},
		{"stopReason", stop}, {"timestamp", s.ms()}}
}

// piResult is the toolResult message of c; in OpenClaw sessions half the
// command results repeat their output in details.aggregated.
func (s *session) piResult(c call) obj {
	content := arr{obj{{"type", "text"}, {"text", c.out}}}
	if c.image {
		content = arr{obj{{"type", "text"}, {"text", "Read image file [image/png]"}},
			obj{{"type", "image"}, {"data", c.img}, {"mimeType", "image/png"}}}
	}
	m := obj{{"role", "toolResult"}, {"toolCallId", c.id}, {"toolName", c.tool}, {"content", content}}
	if c.tool == "bash" && s.openclaw && s.r.IntN(2) == 0 {
		m = append(m, member{"details", s.execDetails(c.out, 1+s.r.IntN(90000))})
	}
	return append(m, member{"isError", false}, member{"timestamp", s.ms()})
}

func (s *session) execDetails(out text, durationMs int) obj {
	return obj{{"status", "completed"}, {"exitCode", 0}, {"durationMs", durationMs}, {"aggregated", out}, {"cwd", cwd}}
}

// claude writes a Claude Code session of about target bytes: a prompt,
// then tool calls, one line each, and their results, each on a user line
// whose toolUseResult repeats the output.
func (s *session) claude(target int64) {
	s.e.line(s.claudeLine(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", s.prose(10 + s.r.IntN(60))}}}}, nil))
	for first := true; first || s.more(target); first = false {
		if s.r.IntN(6) == 0 {
			s.e.line(s.claudeLine(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", s.prose(5 + s.r.IntN(80))}}}}, nil))
		}
		calls := s.toolCalls()
		for _, c := range calls {
			tool, input := "Read", obj{{"file_path", c.path}}
			switch c.tool {
			case "bash":
				tool, input = "Bash", obj{{"command", "npm test 2>&1"}, {"description", "Run the tests"}}
			case "grep":
				tool, input = "Grep", obj{{"pattern", pick(s.r, idents)}, {"output_mode", "content"}}
			}
			s.e.line(s.claudeAssistant(obj{{"type", "tool_use"}, {"id", c.id}, {"name", tool}, {"input", input}}, "tool_use"))
		}
		source := s.last
		for _, c := range calls {
			var content any = c.out
			var result obj
			switch {
			case c.image:
				content = arr{obj{{"type", "image"}, {"source", obj{{"type", "base64"}, {"media_type", "image/png"}, {"data", c.img}}}}}
				result = obj{{"type", "image"}, {"file", obj{{"base64", c.img}, {"type", "image/png"}, {"originalSize", pngLen(c.img.size)}}}}
			case c.tool == "bash":
				result = obj{{"stdout", c.out}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}}
			case c.tool == "grep":
				result = obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", arr{}}, {"content", c.out}, {"numLines", 1 + c.out.size/60}}
			default:
				n := 1 + c.out.size/60
				result = obj{{"type", "text"}, {"file", obj{{"filePath", c.path}, {"content", c.out}, {"numLines", n}, {"startLine", 1}, {"totalLines", n}}}}
			}
			block := obj{{"tool_use_id", c.id}, {"type", "tool_result"}, {"content", content}}
			s.e.line(s.claudeLine(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", arr{block}}}}},
				obj{{"toolUseResult", result}, {"sourceToolAssistantUUID", source}}))
		}
		if s.r.IntN(3) == 0 {
			s.e.line(s.claudeAssistant(obj{{"type", "text"}, {"text", s.prose(10 + s.r.IntN(100))}}, "end_turn"))
		}
	}
}

// claudeLine is a line of the session: the envelope Claude Code writes,
// body, the line's uuid and time, then tail.
func (s *session) claudeLine(body, tail obj) obj {
	var parent any
	if s.last != "" {
		parent = s.last
	}
	l := obj{{"parentUuid", parent}, {"isSidechain", s.agent != ""}, {"userType", "external"}, {"cwd", cwd},
		{"sessionId", s.id}, {"version", "2.1.6"}, {"gitBranch", "main"}}
	if s.agent != "" {
		l = append(l, member{"agentId", s.agent})
	}
	l = append(l, body...)
	s.last = s.uuid()
	ts, _ := s.tick()
	l = append(l, member{"uuid", s.last}, member{"timestamp", ts})
	return append(l, tail...)
}

func (s *session) claudeAssistant(block obj, stop string) obj {
	msg := obj{{"model", "claude-opus-4-5-20251101"}, {"id", "msg_01" + s.chars(alnum, 22)}, {"type", "message"},
		{"role", "assistant"}, {"content", arr{block}}, {"stop_reason", stop}, {"stop_sequence", nil},
		{"usage", obj{{"input_tokens", s.r.IntN(20000)}, {"output_tokens", s.r.IntN(2000)}}}}
	return s.claudeLine(obj{{"message", msg}, {"requestId", "req_011CV" + s.chars(alnum, 18)}, {"type", "assistant"}}, nil)
}

// writeBigLine writes a pi session whose third line, a command's result,
// is exactly size bytes long: its output of about size/2 bytes is in
// message.content and again in details.aggregated.
func writeBigLine(e *enc, seed uint64, size int64) {
	s := newSession(seed, time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC))
	s.e = e
	ts, _ := s.tick()
	e.line(obj{{"type", "session"}, {"version", 3}, {"id", s.id}, {"timestamp", ts}, {"cwd", cwd}})
	c := call{id: s.toolCallID(), tool: "bash"}
	s.piMessage(s.piAssistant(arr{obj{{"type", "toolCall"}, {"id", c.id}, {"name", "bash"},
		{"arguments", obj{{"command", "cat build.log"}}}}}, "toolUse"))
	id, parent := s.chars(hexDigits, 8), s.last
	ts, ms := s.tick()
	out := text{seed: s.r.Uint64(), kind: kindLog}
	entry := func(durationMs int) obj {
		m := obj{{"role", "toolResult"}, {"toolCallId", c.id}, {"toolName", c.tool},
			{"content", arr{obj{{"type", "text"}, {"text", out}}}}, {"details", s.execDetails(out, durationMs)},
			{"isError", false}, {"timestamp", ms}}
		return obj{{"type", "message"}, {"id", id}, {"parentId", parent}, {"timestamp", ts}, {"message", m}}
	}
	// The line without its output; a duration of one more digit makes the
	// rest even, so that the two copies fill it exactly.
	measure := newEnc(io.Discard, transcript.StyleJS, nil)
	measure.value(entry(10000))
	durationMs, rest := 10000, size-measure.pos()
	if rest%2 != 0 {
		durationMs, rest = 100000, rest-1
	}
	out.size = int(rest / 2)
	e.line(entry(durationMs))
}
