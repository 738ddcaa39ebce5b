package benchgen

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// ProjectVersion is the version of GenerateProject's output, part of
// ProjectStamp.
const ProjectVersion = 1

// ProjectFolder is the name of the project folder GenerateProject writes
// under DIR/sessions, as Claude Code names the folder of a working
// directory.
const ProjectFolder = "-home-dev-src-app"

// Bounds of the size in bytes of a project's distinct payloads.
const (
	minProjectPayload = 300
	maxProjectPayload = 250_000
)

// Project says what GenerateProject writes: one Claude Code project
// folder, as ~/.claude/projects/<project>/ holds it after weeks of work
// in one repository. Its sessions read the same files and run the same
// commands again and again, so that a few distinct payloads stand behind
// many tool results.
type Project struct {
	// Seed selects the folder.
	Seed uint64
	// Sessions is the number of session transcripts in the folder.
	Sessions int
	// Calls is the mean number of tool calls of a session.
	Calls int
	// Distinct is the number of distinct files and command outputs (one
	// in four) the tool calls return; the calls that return none of them
	// return short outputs of their own.
	Distinct int
	// PayloadSize is the median size in bytes of a distinct payload;
	// sizes are log-normal, a factor of about 2.5 for one standard
	// deviation.
	PayloadSize int
	// Subagents gives every fourth session a subagent, whose transcript
	// is <session>/subagents/agent-<id>.jsonl.
	Subagents bool
}

func (p Project) validate() error {
	switch {
	case p.Sessions < 1:
		return fmt.Errorf("benchgen: %d sessions: want at least 1", p.Sessions)
	case p.Calls < 1:
		return fmt.Errorf("benchgen: %d calls: want at least 1", p.Calls)
	case p.Distinct < 4:
		return fmt.Errorf("benchgen: %d distinct payloads: want at least 4", p.Distinct)
	case p.PayloadSize < minProjectPayload || p.PayloadSize > maxProjectPayload:
		return fmt.Errorf("benchgen: payloads of %d bytes: want %d to %d", p.PayloadSize, minProjectPayload, maxProjectPayload)
	}
	return nil
}

// ProjectStamp identifies the folder GenerateProject writes for p: equal
// stamps, equal bytes.
func ProjectStamp(p Project) string {
	return fmt.Sprintf("benchgen project v%d seed=%d sessions=%d calls=%d distinct=%d payload=%d subagents=%t",
		ProjectVersion, p.Seed, p.Sessions, p.Calls, p.Distinct, p.PayloadSize, p.Subagents)
}

// ProjectStats describes a generated project folder.
type ProjectStats struct {
	Sessions  int   // session transcripts
	Subagents int   // subagent transcripts
	Bytes     int64 // total size of the transcripts
	Results   int   // tool results
	// Repeated counts the tool results whose output is one of the
	// Distinct payloads (Edits among them: the file they changed is in
	// their toolUseResult).
	Repeated int
	Distinct int
	// Payloads and PayloadBytes count the payload strings written, each
	// of a tool result's two copies.
	Payloads     int
	PayloadBytes int64
}

// String describes the folder in one line.
func (s ProjectStats) String() string {
	return fmt.Sprintf("one Claude Code project folder of %d sessions and %d subagent transcripts, %.1f MB; "+
		"%d tool results, %d of them one of %d distinct files and command outputs, each twice on its line "+
		"(Read: line-numbered in tool_result, plain in toolUseResult; Bash: the same bytes twice); "+
		"%d payload strings making %.0f%% of the bytes",
		s.Sessions, s.Subagents, mb(s.Bytes), s.Results, s.Repeated, s.Distinct,
		s.Payloads, 100*float64(s.PayloadBytes)/float64(max(s.Bytes, 1)))
}

// GenerateProject writes the project folder for p into dir, which must not
// exist:
//
//	DIR/sessions/<ProjectFolder>/<uuid>.jsonl                        sessions
//	DIR/sessions/<ProjectFolder>/<uuid>/subagents/agent-<id>.jsonl   their subagents
//	DIR/description, DIR/stamp                                       as Generate writes them
func GenerateProject(dir string, p Project) (ProjectStats, error) {
	if err := p.validate(); err != nil {
		return ProjectStats{}, err
	}
	if err := newDir(dir); err != nil {
		return ProjectStats{}, err
	}
	folder := filepath.Join(dir, "sessions", ProjectFolder)
	r := rand.New(rand.NewPCG(p.Seed, corpusStream))
	w := newWorkspace(r, p)
	st := ProjectStats{Distinct: p.Distinct}
	start := time.Date(2025, 9, 1, 8, 0, 0, 0, time.UTC)
	for i := range p.Sessions {
		s := newSession(r.Uint64(), start.Add(time.Duration(i)*41*time.Minute))
		calls := 1 + s.r.IntN(2*p.Calls)
		if err := w.write(filepath.Join(folder, s.id+".jsonl"), s, calls, &st); err != nil {
			return st, err
		}
		st.Sessions++
		if !p.Subagents || i%4 != 3 {
			continue
		}
		sub := newSession(r.Uint64(), s.now)
		sub.id, sub.agent = s.id, sub.chars(hexDigits, 7)
		name := filepath.Join(folder, s.id, "subagents", "agent-"+sub.agent+".jsonl")
		if err := w.write(name, sub, 1+sub.r.IntN(p.Calls), &st); err != nil {
			return st, err
		}
		st.Subagents++
	}
	if err := writeText(filepath.Join(dir, "description"), st.String()+"\n"); err != nil {
		return st, err
	}
	return st, writeText(filepath.Join(dir, "stamp"), ProjectStamp(p)+"\n")
}

// source is a file of the workspace or a command run in it, and what
// reading or running it returns.
type source struct {
	name string // the file's path, or the command
	out  text
}

// workspace is what the sessions of a project share: its files and the
// commands run in it.
type workspace struct {
	files, commands []source
}

func newWorkspace(r *rand.Rand, p Project) *workspace {
	w := &workspace{}
	mu := int64(log2Fix(p.PayloadSize))
	for i := range p.Distinct {
		size := int(logNormal(r, mu, 13*fix/10, minProjectPayload, maxProjectPayload))
		if i%4 == 3 {
			cmd := fmt.Sprintf("go test ./%s/... 2>&1 | tail -n %d", pick(r, idents), 50+r.IntN(400))
			w.commands = append(w.commands, source{cmd, text{seed: r.Uint64(), kind: kindLog, size: size}})
		} else {
			path := fmt.Sprintf("/home/dev/src/app/%s/%d/%s", pick(r, idents), i, filePath(r))
			w.files = append(w.files, source{path, text{seed: r.Uint64(), kind: kindCode, size: size}})
		}
	}
	return w
}

// log2Fix returns the logarithm in base 2 of n in fixed point, to within
// the linear interpolation logNormal uses between powers of two.
func log2Fix(n int) int {
	e := 0
	for 2<<e <= n {
		e++
	}
	return e*fix + (n-1<<e)*fix>>e
}

// popular picks one of n sources, the first ones more often: the files
// a project's work is about are read much more than the others.
func popular(r *rand.Rand, n int) int { return min(r.IntN(n), r.IntN(n)) }

// write writes the session s of calls tool calls to the file name.
func (w *workspace) write(name string, s *session, calls int, st *ProjectStats) error {
	var counts Stats
	n, err := writeFile(name, transcript.StyleJS, &counts, func(e *enc) {
		s.e = e
		w.session(s, calls, st)
	})
	st.Bytes += n
	st.Payloads += counts.Payloads
	st.PayloadBytes += counts.PayloadBytes
	return err
}

// session writes a session's lines: a snapshot of the tracked files and
// a prompt, then tool calls, each answered on the next line, with now and
// then an answer or a new prompt, and the turn's duration last.
func (w *workspace) session(s *session, calls int, st *ProjectStats) {
	prompt := func() {
		if s.agent == "" {
			id, ts := s.uuid(), s.now.Format("2006-01-02T15:04:05.000Z")
			s.e.line(obj{{"type", "file-history-snapshot"}, {"messageId", id},
				{"snapshot", obj{{"messageId", id}, {"trackedFileBackups", obj{}}, {"timestamp", ts}}}, {"isSnapshotUpdate", false}})
		}
		s.e.line(s.claudeLine(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", s.prose(5 + s.r.IntN(60))}}}}, nil))
	}
	prompt()
	for i := range calls {
		if i > 0 && s.r.IntN(12) == 0 {
			prompt()
		}
		w.call(s, st)
		if s.r.IntN(4) == 0 {
			s.e.line(s.claudeAssistant(obj{{"type", "text"}, {"text", s.prose(10 + s.r.IntN(100))}}, "end_turn"))
		}
	}
	s.e.line(s.claudeLine(obj{{"type", "system"}, {"subtype", "turn_duration"}, {"durationMs", 1000 + s.r.IntN(600_000)}}, nil))
}

// call writes one tool call and its result: half of them Reads of the
// workspace's files, a fifth its commands, a tenth Edits of its files
// (whose toolUseResult holds the file as it was), and the rest searches
// and short commands whose output is their own.
func (w *workspace) call(s *session, st *ProjectStats) {
	id := s.toolCallID()
	var (
		tool    string
		input   obj
		content any
		result  obj
	)
	st.Results++
	switch n := s.r.IntN(10); {
	case n < 5:
		f := w.files[popular(s.r, len(w.files))]
		tool, input = "Read", obj{{"file_path", f.name}}
		numbered := f.out
		numbered.numbered = true
		lines := 1 + f.out.size/60
		content = numbered
		result = obj{{"type", "text"}, {"file", obj{{"filePath", f.name}, {"content", f.out}, {"numLines", lines}, {"startLine", 1}, {"totalLines", lines}}}}
		st.Repeated++
	case n < 7:
		c := w.commands[popular(s.r, len(w.commands))]
		tool, input = "Bash", obj{{"command", c.name}, {"description", "Run the tests"}}
		content = c.out
		result = obj{{"stdout", c.out}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}}
		st.Repeated++
	case n < 8:
		f := w.files[popular(s.r, len(w.files))]
		from, to := pick(s.r, idents), pick(s.r, idents)
		tool, input = "Edit", obj{{"file_path", f.name}, {"old_string", from}, {"new_string", to}}
		content = "The file " + f.name + " has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" + s.prose(20)
		result = obj{{"filePath", f.name}, {"oldString", from}, {"newString", to}, {"originalFile", f.out},
			{"structuredPatch", arr{}}, {"userModified", false}, {"replaceAll", false}}
		st.Repeated++
	case n < 9:
		out := text{seed: s.r.Uint64(), kind: kindLog, size: 40 + s.r.IntN(2000)}
		tool, input = "Grep", obj{{"pattern", pick(s.r, idents)}, {"output_mode", "content"}}
		content = out
		result = obj{{"mode", "content"}, {"numFiles", 0}, {"filenames", arr{}}, {"content", out}, {"numLines", 1 + out.size/60}}
	default:
		out := text{seed: s.r.Uint64(), kind: kindLog, size: 40 + s.r.IntN(600)}
		tool, input = "Bash", obj{{"command", "git status --short"}, {"description", "Show the working tree's status"}}
		content = out
		result = obj{{"stdout", out}, {"stderr", ""}, {"interrupted", false}, {"isImage", false}}
	}
	s.e.line(s.claudeAssistant(obj{{"type", "tool_use"}, {"id", id}, {"name", tool}, {"input", input}}, "tool_use"))
	source := s.last
	block := obj{{"tool_use_id", id}, {"type", "tool_result"}, {"content", content}}
	s.e.line(s.claudeLine(obj{{"type", "user"}, {"message", obj{{"role", "user"}, {"content", arr{block}}}}},
		obj{{"toolUseResult", result}, {"sourceToolAssistantUUID", source}}))
}
