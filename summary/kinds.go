package summary

import (
	"bytes"
	"cmp"
	"path"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Tools by what their output is, by name in lower case, an MCP server's
// prefix (mcp__server__) dropped: the agents' own (Claude Code's Read and
// Bash, pi's read and bash, OpenClaw's exec, Codex's shell, exec_command
// and local_shell) and the usual names of chat-style tools.
var (
	readTools = map[string]bool{
		"read": true, "read_file": true, "readfile": true, "view": true, "view_file": true,
		"open_file": true, "cat": true, "get_file_contents": true, "read_text_file": true,
	}
	shellTools = map[string]bool{
		"bash": true, "shell": true, "sh": true, "exec": true, "exec_command": true,
		"local_shell": true, "shell_command": true, "container.exec": true, "run": true,
		"run_command": true, "run_shell_command": true, "run_terminal_cmd": true,
		"execute_command": true, "terminal": true, "powershell": true,
	}
)

// toolKind returns what the output of the tool called name is: a file
// read, a shell command's output, or, for any other tool, KindText (the
// content decides).
func toolKind(name string) Kind {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "mcp__") {
		if i := strings.LastIndex(name, "__"); i > len("mcp_") {
			name = name[i+2:]
		}
	}
	switch {
	case readTools[name]:
		return KindRead
	case shellTools[name]:
		return KindShell
	}
	return KindText
}

// lineCounter counts the lines of an artifact written to it in pieces,
// and among them the lines of a diff: added and removed lines and file
// headers.
type lineCounter struct {
	newlines int64
	written  bool
	last     byte // the last byte written
	// start holds the first bytes of the current line, up to its size.
	start [len("diff --git ")]byte
	n     int
	// Lines of a diff.
	plus, minus, plusHeaders, gitHeaders int64
}

func (c *lineCounter) write(p []byte) {
	c.written, c.last = true, p[len(p)-1]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if c.n < len(c.start) {
			c.n += copy(c.start[c.n:], seg)
		}
		if i < 0 {
			return
		}
		c.newlines++
		c.diffLine(c.start[:c.n])
		c.n = 0
		p = p[i+1:]
	}
}

// diffLine counts a line of a diff by its start.
func (c *lineCounter) diffLine(start []byte) {
	switch {
	case bytes.HasPrefix(start, []byte("+++ ")):
		c.plusHeaders++
	case bytes.HasPrefix(start, []byte("--- ")):
	case bytes.HasPrefix(start, []byte("diff --git ")):
		c.gitHeaders++
	case len(start) > 0 && start[0] == '+':
		c.plus++
	case len(start) > 0 && start[0] == '-':
		c.minus++
	}
}

// count returns the number of lines, a last line without a newline
// included, and the counts of a diff's lines, that last line included.
func (c *lineCounter) count() (lines int64, diff lineCounter) {
	diff = *c
	if c.written && c.last != '\n' {
		diff.diffLine(c.start[:c.n])
		return c.newlines + 1, diff
	}
	return c.newlines, diff
}

// lineCount returns the number of lines: newlines, plus one for a last
// line without one.
func (d *Describer) lineCount() int64 {
	n, _ := d.lines.count()
	return n
}

// linesSuffix is the line count as the descriptions end with it.
func (d *Describer) linesSuffix() string {
	return " (" + display.Plural(d.lineCount(), "line") + ")"
}

// eachLine calls fn with each line the windows hold, trimmed and cut to
// 1 KiB, in order, until it returns false: every line when the windows
// hold every byte, else the complete lines of each window, the middle of
// the artifact unseen.
func (d *Describer) eachLine(fn func([]byte) bool) {
	more := true
	see := func(l []byte) {
		if more {
			more = fn(bytes.TrimSpace(l[:transcript.CompleteRunes(l[:min(len(l), 1024)])]))
		}
	}
	if d.whole() {
		all := d.all
		if all == nil {
			all = append(d.head[:len(d.head):len(d.head)], d.tail...)
		}
		forLines(all, true, see)
		return
	}
	// The line cut where the head window ends and the one cut where the
	// tail window begins are left out.
	forLines(d.head, false, see)
	tail := d.tail[max(len(d.tail)-describeWindow, 0):]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		forLines(tail[i+1:], true, see)
	}
}

// forLines calls fn for each line of b; the last piece of b counts as a
// line only when complete is set.
func forLines(b []byte, complete bool, fn func([]byte)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if complete {
				fn(b)
			}
			return
		}
		fn(b[:i])
		b = b[i+1:]
	}
}

// firstLineOf returns the first non-empty line the windows hold, keep
// says which count, or "".
func (d *Describer) firstLineOf(keep func([]byte) bool) string {
	var first string
	d.eachLine(func(l []byte) bool {
		if len(l) > 0 && keep(l) {
			first = string(l)
			return false
		}
		return true
	})
	return first
}

func anyLine([]byte) bool { return true }

// text describes other text by its first non-empty line and its line
// count.
func (d *Describer) text() string {
	suffix := d.linesSuffix()
	first := d.firstLineOf(anyLine)
	if first == "" {
		return "blank" + suffix
	}
	return display.Line(first, Max-display.Len(suffix)) + suffix
}

// read describes a file read by the path, the line count and the first
// heading of a Markdown file or else the first non-empty line.
func (d *Describer) read() string {
	markdown := false
	switch strings.ToLower(path.Ext(d.ctx.Input)) {
	case ".md", ".markdown", ".mdx", ".mdc":
		markdown = true
	}
	var first, heading string
	d.eachLine(func(l []byte) bool {
		l = stripLineNumber(l)
		if len(l) == 0 {
			return true
		}
		if first == "" {
			first = string(l)
		}
		if !markdown || isHeading(l) {
			heading = string(l)
			return false
		}
		return true
	})
	if heading == "" {
		heading = first
	}
	suffix := d.linesSuffix()
	budget := Max - display.Len("read ") - display.Len(suffix) - display.Len(": ")
	parts := []string{heading}
	if d.ctx.Input != "" {
		// A long path keeps its end, the file's name: it is cut here to
		// what fit would leave it.
		path := display.Line(d.ctx.Input, len(d.ctx.Input))
		parts = []string{cutStart(path, max(budget-display.Len(heading), budget/2)), heading}
	}
	parts = fit(budget, parts)
	s := "read"
	if len(parts) == 2 {
		s += " " + parts[0]
	}
	s += suffix
	if h := parts[len(parts)-1]; h != "" {
		s += ": " + h
	}
	return s
}

// stripLineNumber removes the line number that a read tool put before a
// line: Claude Code's "     1→" or "1\t", cat -n's "     1\t".
func stripLineNumber(l []byte) []byte {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	j := i
	for j < len(l) && '0' <= l[j] && l[j] <= '9' {
		j++
	}
	if j == i {
		return l
	}
	rest := l[j:]
	for _, sep := range []string{"→", "\t"} {
		if r, ok := bytes.CutPrefix(rest, []byte(sep)); ok {
			return bytes.TrimSpace(r)
		}
	}
	return l
}

// isHeading reports whether l is a Markdown ATX heading.
func isHeading(l []byte) bool {
	n := 0
	for n < len(l) && n < 7 && l[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(l) || l[n] == ' ' || l[n] == '\t')
}

// Lines with which commands' output tells their exit status: Claude
// Code's failed Bash ("Exit code 1"), pi's ("Command exited with code 1"),
// Codex's headers ("Exit code: 1", "Process exited with code 1").
var exitPrefixes = []string{"Exit code: ", "Exit code ", "Command exited with code ", "Process exited with code "}

// exitLine returns the exit status line l tells, or "".
func exitLine(l []byte) string {
	for _, p := range exitPrefixes {
		if code, ok := bytes.CutPrefix(l, []byte(p)); ok {
			return format.ExitText(string(code))
		}
	}
	return ""
}

// notExitLine reports whether l is not an exit status line.
func notExitLine(l []byte) bool { return exitLine(l) == "" }

// shell describes a command's output by the command, its exit status and,
// when it failed, its first error line (else, for a command not known,
// its first line), and its line count.
func (d *Describer) shell() string {
	code := format.ExitText(d.ctx.Exit)
	lines := d.linesSuffix()
	out, exit, wrapped := d.wrapped()
	switch {
	case wrapped:
		// Codex's {"output": ..., "metadata": {"exit_code": ...}}.
		if code == "" {
			code = exit
		}
		lines = " (" + display.Plural(d.json.nested+1, "line") + ")"
	case code == "":
		code = d.exitFromOutput()
	}
	failed := d.ctx.Failed || format.FailedExit(code)
	var first, firstErr string
	if wrapped {
		for l := range strings.SplitSeq(out, "\n") {
			l = strings.TrimSpace(l)
			if first == "" {
				first = l
			}
			if failed && l != "" && LooksLikeError([]byte(l)) {
				firstErr = l
				break
			}
		}
	} else {
		first = d.firstLineOf(notExitLine)
		if failed {
			isError := errorMatcher(d.head, d.tail)
			firstErr = d.firstLineOf(func(l []byte) bool { return notExitLine(l) && isError(l) })
		}
	}
	status := ""
	switch {
	case code != "":
		status = " — exit " + code
	case failed:
		status = " — failed"
	}
	fixed := display.Len(status) + display.Len(lines)
	if !failed && d.ctx.Input == "" {
		// The first line tells what a command not known printed.
		command := "shell output"
		first = fit(Max-fixed-display.Len(command+": "), []string{first})[0]
		if first == "" {
			return command + status + lines
		}
		return command + status + lines + ": " + first
	}
	// The error line of a failed command, its first line when none looks
	// like one.
	var quote string
	if failed {
		quote = cmp.Or(firstErr, first)
	}
	if quote != "" {
		fixed += display.Len(`: ""`)
	}
	command := d.ctx.Input
	if command == "" {
		command = "shell output"
		quote = fit(Max-fixed-display.Len(command), []string{quote})[0]
	} else {
		parts := fit(Max-fixed-display.Len("$ "), []string{command, quote})
		command, quote = "$ "+parts[0], parts[1]
	}
	if quote == "" {
		return command + status + lines
	}
	return command + status + `: "` + quote + `"` + lines
}

// exitFromOutput returns the exit status the first or the last non-empty
// line of a command's output tells, or "".
func (d *Describer) exitFromOutput() string {
	var first, last []byte
	d.eachLine(func(l []byte) bool {
		if len(l) > 0 {
			if first == nil {
				first = l
			}
			last = l
		}
		return true
	})
	if code := exitLine(first); code != "" {
		return code
	}
	return exitLine(last)
}

// wrapped returns, for a command's output that Codex wrapped as
// {"output": ..., "metadata": {"exit_code": ...}}, the start of the output
// and the exit status when the start of the artifact holds it.
func (d *Describer) wrapped() (string, string, bool) {
	if !bytes.HasPrefix(d.head, []byte(`{"output":"`)) {
		return "", "", false
	}
	v, _, err := parseJSON(d.head, !d.whole())
	if err != nil && err != transcript.ErrTruncated || v.kind != '{' || len(v.members) == 0 || v.members[0].val.kind != '"' {
		return "", "", false
	}
	var code string
	for _, m := range v.members {
		if m.key != "metadata" {
			continue
		}
		for _, n := range m.val.members {
			if n.key == "exit_code" && n.val.kind == 's' {
				code = format.ExitText(n.val.raw)
			}
		}
	}
	return v.members[0].val.text, code, true
}

// isDiff reports whether the artifact is a diff: one the call says is
// (Context.Diff) that adds or removes lines, or one whose start holds the
// file header of a unified diff: a "diff --git" line, or a "--- " line
// followed by a "+++ " line.
func (d *Describer) isDiff() bool {
	if _, c := d.lines.count(); d.ctx.Diff && c.plus+c.minus > 0 {
		return true
	}
	prevMinus, found := false, false
	forLines(d.head, d.headWhole(), func(l []byte) {
		if !found && (bytes.HasPrefix(l, []byte("diff --git ")) || prevMinus && bytes.HasPrefix(l, []byte("+++ "))) {
			found = true
		}
		prevMinus = bytes.HasPrefix(l, []byte("--- "))
	})
	return found
}

// headWhole reports whether the head window holds every byte written, so
// that its last piece is a whole line.
func (d *Describer) headWhole() bool { return int64(len(d.head)) == d.size }

// shownFiles is how many of a diff's files are named.
const shownFiles = 3

// diff describes a diff by its added and removed lines and its files.
func (d *Describer) diff() string {
	_, c := d.lines.count()
	s := "diff: +" + strconv.FormatInt(c.plus, 10) + " -" + strconv.FormatInt(c.minus, 10)
	var names []string
	forLines(d.head, d.headWhole(), func(l []byte) {
		if len(names) >= shownFiles {
			return
		}
		if name, ok := bytes.CutPrefix(l, []byte("+++ ")); ok {
			name = bytes.TrimPrefix(bytes.TrimSpace(name), []byte("b/"))
			if i := bytes.IndexByte(name, '\t'); i >= 0 {
				name = name[:i] // diff -u's timestamp
			}
			if string(name) != "/dev/null" {
				names = append(names, string(name))
			}
		}
	})
	files := max(c.plusHeaders, c.gitHeaders)
	if files == 0 && d.ctx.Input != "" {
		files, names = 1, []string{d.ctx.Input}
	}
	switch {
	case files == 0:
		return s + d.linesSuffix()
	case files == 1 && len(names) == 1:
		return s + " in " + names[0]
	}
	s += " in " + display.Plural(files, "file")
	if len(names) == 0 {
		return s
	}
	if int64(len(names)) < files {
		names = append(names, "…")
	}
	return s + ": " + strings.Join(names, ", ")
}

// cutStart returns s if it has at most n code points, else Ellipsis
// followed by its last n-1 code points.
func cutStart(s string, n int) string {
	if display.Len(s) <= n {
		return s
	}
	r := []rune(s)
	return display.Ellipsis + strings.TrimLeft(string(r[len(r)-(n-1):]), " ")
}
