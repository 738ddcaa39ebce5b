package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The prompts of the two exchanges the stand-in model scripts: the first
// makes the agent write a session with large tool outputs, the second,
// after a resume, makes it open a placeholder's path with its own tools.
const (
	setupPrompt  = "E2E setup: run the workload."
	recallPrompt = "E2E recall: open the stored shell output again."
)

// placeholderHead starts the text a migrated tool result becomes.
const placeholderHead = "[Tool result omitted: stored as artifact]"

// workload is what an agent is made to do in the session it writes: a
// shell command with ~48 KB of output, a read of a ~40 KB text file, a
// read of a PNG and a command that fails; then, for an agent that asks
// for them, more outputs of ~40 KB each. Each output is far over
// migrate's default threshold, and the shell output ends with a marker
// found nowhere else (not in its first line, which a placeholder's
// summary shows), so finding the marker proves the artifact's bytes were
// read.
type workload struct {
	Dir          string // the project folder, the agent's working directory
	BigFile      string // a ~40 KB text file in Dir
	Image        string // a PNG in Dir
	ShellCommand string // prints ~48 KB, Marker on its last line
	FailCommand  string // exits with status 3
	Marker       string
	More         []moreOutput
}

// moreOutput is one more large output of a workload: a read of File or
// the output of Command, each ~40 KB and unlike any other, so that each
// is an artifact of its own.
type moreOutput struct{ File, Command string }

// newWorkload writes the workload's files into a new project folder
// under root, with more further outputs, files and commands in turn.
func newWorkload(t *testing.T, root string, more int) workload {
	t.Helper()
	w := workload{Dir: filepath.Join(root, "project"), Marker: "E2E-MARKER-5f0c9a1e"}
	require.NoError(t, os.MkdirAll(w.Dir, 0o755))
	var big strings.Builder
	for i := 1; big.Len() < 40<<10; i++ {
		fmt.Fprintf(&big, "line %04d of the big file, filler to make the line about eighty bytes long\n", i)
	}
	w.BigFile = filepath.Join(w.Dir, "big.txt")
	require.NoError(t, os.WriteFile(w.BigFile, []byte(big.String()), 0o644))
	w.Image = filepath.Join(w.Dir, "image.png")
	require.NoError(t, os.WriteFile(w.Image, noisePNG(t, 64, 64), 0o644))
	// 600 lines of 80 bytes: under the 50 KB and 2000 lines pi's bash
	// keeps, so the whole output is in the session. The marker is split in
	// the command so that only the output holds it whole.
	// No command substitution, which Gemini CLI refuses to run.
	w.ShellCommand = `seq -f 'shell output line %04g of the e2e workload, padded with dots to 80 bytes.......' 1 600; echo "E2E-MARKER-""5f0c9a1e"`
	w.FailCommand = "ls /nonexistent-e2e-dir; exit 3"
	for i := range more {
		if i%2 == 1 {
			w.More = append(w.More, moreOutput{Command: fmt.Sprintf("seq -f 'listing %d, row %%04g: a long listing of the e2e workload, padded to 80 bytes' 1 500", i)})
			continue
		}
		var b strings.Builder
		for n := 1; b.Len() < 40<<10; n++ {
			fmt.Fprintf(&b, "module %d, line %04d: a source file the agent read, long enough to be a payload\n", i, n)
		}
		path := filepath.Join(w.Dir, fmt.Sprintf("module-%d.txt", i))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		w.More = append(w.More, moreOutput{File: path})
	}
	return w
}

// noisePNG returns a w×h PNG of random pixels: it does not compress, so
// its base64 form in a transcript is well over the migration threshold.
func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewSource(1))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(rng.Intn(256)), uint8(rng.Intn(256)), uint8(rng.Intn(256)), 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// agentTools is how an agent names its shell and read-file tools and
// what input they take.
type agentTools struct {
	Shell func(command string) toolCall
	Read  func(path string) toolCall
}

// script is the stand-in model's side of both exchanges. In the setup it
// runs the workload one tool call at a time, its further outputs last.
// In the recall it takes the path: of the first placeholder in the
// request it got and opens it with the agent's read tool, then with
// `cat` in its shell; in a session that was not migrated there is no
// placeholder and it just answers.
func (w workload) script(tools agentTools) func(*messagesRequest) turn {
	return func(req *messagesRequest) turn {
		prompt, results := req.Exchange(setupPrompt, recallPrompt)
		var steps []toolCall
		switch prompt {
		case setupPrompt:
			steps = []toolCall{tools.Shell(w.ShellCommand), tools.Read(w.BigFile), tools.Read(w.Image), tools.Shell(w.FailCommand)}
			for _, m := range w.More {
				if m.File != "" {
					steps = append(steps, tools.Read(m.File))
				} else {
					steps = append(steps, tools.Shell(m.Command))
				}
			}
		case recallPrompt:
			if path, ok := placeholderPath(req); ok {
				steps = []toolCall{tools.Read(path), tools.Shell("cat " + path)}
			}
		}
		if len(results) < len(steps) {
			return turn{Tools: steps[len(results) : len(results)+1]}
		}
		return turn{Text: "Done."}
	}
}

var pathLine = regexp.MustCompile(`(?m)^path: (.+)$`)

// placeholderPath returns the path: of the first placeholder among req's
// tool results.
func placeholderPath(req *messagesRequest) (string, bool) {
	text, ok := firstPlaceholder(req)
	if !ok {
		return "", false
	}
	m := pathLine.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// firstPlaceholder returns the text of the first tool result of req that
// is a placeholder.
func firstPlaceholder(req *messagesRequest) (string, bool) {
	for _, r := range req.ToolResults() {
		if text := r.ResultText(); strings.HasPrefix(text, placeholderHead) {
			return text, true
		}
	}
	return "", false
}

// copyTree copies the folder src to dst, which must not exist: the
// unmigrated twin of an agent's state.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

// sessionShape is what must survive a migration of the messages an agent
// sends: per message, its role and the tool_use ids it calls or answers.
func sessionShape(req *messagesRequest) []string {
	var shape []string
	for _, m := range req.Messages {
		s := m.Role
		for _, b := range m.Blocks() {
			switch b.Type {
			case "tool_use":
				s += " use:" + b.ID
			case "tool_result":
				s += " result:" + b.ToolUseID
			}
		}
		shape = append(shape, s)
	}
	return shape
}

// resumeRun is what one resumed run of an agent sent the stand-in.
type resumeRun struct {
	Name     string
	Requests []recordedRequest // main-loop requests, in order
}

// checkResumes checks the resume of the migrated session against that of
// its unmigrated twin: the agent sends the same messages in a fraction of
// the bytes, and the placeholder's path, opened with the agent's read tool
// and with cat, gives back the artifact's bytes. It logs the figures.
func checkResumes(t *testing.T, w workload, twin, migrated resumeRun, maxRatio float64) {
	t.Helper()
	require.NotEmpty(t, twin.Requests, "%s: no request", twin.Name)
	require.NotEmpty(t, migrated.Requests, "%s: no request", migrated.Name)
	before, after := twin.Requests[0], migrated.Requests[0]
	assert.Equal(t, sessionShape(before.Req), sessionShape(after.Req),
		"the migrated session's resumed request must hold the same messages as its twin's")
	ratio := float64(len(after.Body)) / float64(len(before.Body))
	t.Logf("resumed request: %d bytes unmigrated, %d bytes migrated (%.1f%%); its messages: %d bytes, %d bytes; %d messages",
		len(before.Body), len(after.Body), 100*ratio, messagesSize(t, before), messagesSize(t, after), len(after.Req.Messages))
	assert.LessOrEqual(t, ratio, maxRatio, "the migrated session's resumed request (%d bytes) must be at most %.0f%% of its twin's (%d bytes)",
		len(after.Body), 100*maxRatio, len(before.Body))
	assert.Contains(t, string(before.Body), w.Marker, "the twin's request carries the shell output inline")
	assert.NotContains(t, string(after.Body), w.Marker, "the migrated request carries no shell output")

	seen, ok := firstPlaceholder(after.Req)
	require.True(t, ok, "the migrated session's resumed request holds no placeholder")
	t.Logf("the model saw:\n%s", seen)
	path, ok := placeholderPath(after.Req)
	require.True(t, ok, "the placeholder has no path: line")
	require.True(t, filepath.IsAbs(path), "the placeholder's path %q is not absolute: an agent cannot open it", path)

	// The last request answers both the read and the cat.
	last := migrated.Requests[len(migrated.Requests)-1].Req
	_, results := last.Exchange(recallPrompt)
	require.Len(t, results, 2, "the agent did not run both the read and the cat of %s", path)
	read, cat := results[0], results[1]
	t.Logf("the agent's read of %s gave %d bytes (error %v): %.200q", path, len(read.ResultText()), read.IsError, read.ResultText())
	t.Logf("cat %s gave %d bytes (error %v): %.200q", path, len(cat.ResultText()), cat.IsError, cat.ResultText())
	assert.False(t, read.IsError, "reading the placeholder's path failed: %s", read.ResultText())
	assert.Contains(t, read.ResultText(), w.Marker, "the read tool's result lacks the artifact's marker")
	if object, err := os.ReadFile(path); assert.NoError(t, err) {
		// Claude Code's Bash drops the output's final newline.
		assert.Equal(t, strings.TrimRight(string(object), "\n"), strings.TrimRight(cat.ResultText(), "\n"),
			"cat of the placeholder's path must give the artifact's bytes")
	}
}

// agentCase is one agent's part in the end-to-end flow.
type agentCase struct {
	Tools agentTools
	// Configure points the agent whose HOME is home at the stand-in.
	Configure func(t *testing.T, home, url string)
	// Sessions is the folder of home where the agent keeps its sessions,
	// the one a user migrates.
	Sessions func(home string) string
	// Run runs the agent once, for one prompt.
	Run func(t *testing.T, r agentRun)
	// Edit, when set, changes the session the agent wrote, at path,
	// before it is copied and migrated: entries of shapes the agent
	// writes only in some runs.
	Edit func(t *testing.T, w workload, session string)
	// Migrated, when set, checks the agent's own lines of the migrated
	// session before the agent resumes it.
	Migrated func(t *testing.T, session []byte)
	// API, when set, starts the stand-in the agent speaks to, answering
	// main-loop requests with script; else it is the Messages API's.
	API func(t *testing.T, script func(req *messagesRequest) turn) *standIn
	// MoreOutputs is the number of large outputs the workload adds to
	// its own for this agent (see workload).
	MoreOutputs int
}

// agentRun is one run of an agent.
type agentRun struct {
	Home    string
	URL     string // the stand-in's
	Work    workload
	Prompt  string
	Session string // the session file to resume; "" starts a new one
}

// agentTimeout bounds one run of an agent: each takes a few seconds
// against the stand-in.
const agentTimeout = 90 * time.Second

// runE2E is the end-to-end flow for one agent: it writes a session of the
// workload; transcript-tool migrates its session folder in place, with
// the default store, as a user would, and rehydrates each transcript to
// the bytes of an unmigrated twin; then the agent resumes both, and
// checkResumes compares what it sent. It returns both resumed runs.
func runE2E(t *testing.T, c agentCase) (twin, migrated resumeRun) {
	root := t.TempDir()
	w := newWorkload(t, root, c.MoreOutputs)
	home := filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	var api *standIn
	if c.API != nil {
		api = c.API(t, w.script(c.Tools))
	} else {
		api = newAnthropicAPI(t, w.script(c.Tools))
	}
	c.Configure(t, home, api.URL())

	c.Run(t, agentRun{Home: home, URL: api.URL(), Work: w, Prompt: setupPrompt})
	transcripts := jsonlFiles(t, c.Sessions(home))
	require.Len(t, transcripts, 1, "the agent should have written one session")
	session := transcripts[0]
	if c.Edit != nil {
		c.Edit(t, w, session)
	}
	rel, err := filepath.Rel(home, session)
	require.NoError(t, err)

	twinHome := filepath.Join(root, "twin-home")
	copyTree(t, home, twinHome)
	t.Logf("migrate: %s", runTool(t, "migrate", c.Sessions(home)))
	for _, f := range jsonlFiles(t, c.Sessions(twinHome)) {
		r, err := filepath.Rel(twinHome, f)
		require.NoError(t, err)
		want, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, want, runTool(t, "rehydrate", filepath.Join(home, r)), "rehydrate %s", r)
	}
	twinSession := filepath.Join(twinHome, rel)
	migratedSize, twinSize := fileSize(t, session), fileSize(t, twinSession)
	t.Logf("session file: %d bytes, %d migrated", twinSize, migratedSize)
	require.Less(t, migratedSize, twinSize, "migrate did not shrink the session")

	resume := func(name, home, session string) resumeRun {
		return resumeRun{Name: name, Requests: api.During(func() {
			c.Run(t, agentRun{Home: home, URL: api.URL(), Work: w, Prompt: recallPrompt, Session: session})
		})}
	}
	migratedBytes, err := os.ReadFile(session)
	require.NoError(t, err)
	if c.Migrated != nil {
		c.Migrated(t, migratedBytes)
	}
	twin = resume("unmigrated", twinHome, twinSession)
	migrated = resume("migrated", home, session)
	checkResumes(t, w, twin, migrated, 0.25)

	// The agent appended to the migrated session and rewrote nothing,
	// so every reference still resolves.
	resumed, err := os.ReadFile(session)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(resumed, migratedBytes), "the agent rewrote the migrated session instead of appending to it")
	t.Logf("verify: %s", runTool(t, "verify", c.Sessions(home)))
	return twin, migrated
}

// messagesSize is the size of the messages array of r's body: the
// conversation, without the agent's system prompt and tool schemas.
func messagesSize(t *testing.T, r recordedRequest) int {
	t.Helper()
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body))
	return len(body.Messages)
}

// jsonlFiles returns the transcripts under dir, outside artifact stores.
func jsonlFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "artifacts":
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".jsonl"):
			out = append(out, p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
