package show

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// style is an SGR parameter string: how a piece of output is coloured.
type style string

const (
	none   style = ""
	dim    style = "2"
	red    style = "31"
	cyan   style = "36"
	user   style = "1;32"
	agent  style = "1;34"
	result style = "1;33"
	failed style = "1;31"
	meta   style = "1;35"
)

// indent starts every line of an entry's body.
const indent = "  "

// printer writes the rendered session.
type printer struct {
	w     *bufio.Writer
	color bool
	full  bool
	// group is the group of the last header written: a header of the same
	// group that follows at once is left out (Claude Code writes one line
	// per content block of the same message).
	group string
	// calls names the tools of call ids, for formats whose results name
	// only the call.
	calls format.CallTable
	buf   []byte // decoded text, reused from one value to the next
}

func (p *printer) paint(st style, s string) string {
	if !p.color || st == none || s == "" {
		return s
	}
	return "\x1b[" + string(st) + "m" + s + "\x1b[0m"
}

// header starts an entry: its time, its label and details joined by " · ".
// A header of a non-empty group equal to the last one is left out.
func (p *printer) header(ts transcript.Value, label string, st style, group string, details ...string) {
	if group != "" && group == p.group {
		return
	}
	p.group = group
	var b strings.Builder
	if t := when(ts); t != "" {
		b.WriteString(p.paint(dim, t))
		b.WriteByte(' ')
	}
	b.WriteString(p.paint(st, label))
	var ds []string
	for _, d := range details {
		if d != "" {
			ds = append(ds, d)
		}
	}
	if len(ds) > 0 {
		b.WriteString(p.paint(dim, " · "+strings.Join(ds, " · ")))
	}
	b.WriteByte('\n')
	p.w.WriteString(b.String())
}

// item writes one line of an entry's body; s must already be clean.
func (p *printer) item(st style, s string) { p.itemAt(indent, st, s) }

// itemAt writes a line of the body after the indentation pre.
func (p *printer) itemAt(pre string, st style, s string) {
	if s == "" {
		p.w.WriteByte('\n')
		return
	}
	p.w.WriteString(pre + p.paint(st, s) + "\n")
}

// note writes a one-line remark about a line of the transcript.
func (p *printer) note(num int, st style, format string, args ...any) {
	p.group = ""
	p.w.WriteString(p.paint(st, fmt.Sprintf("line %d: ", num)+fmt.Sprintf(format, args...)) + "\n")
}

// lines writes text as body lines. Shortened (unless the printer shows
// everything), it keeps the first maxLines lines of at most maxCols runes
// and says how much was left out. Blank lines around the text are dropped.
func (p *printer) lines(text []byte, short bool, st style) { p.linesAt(indent, text, short, st) }

// linesAt is lines after the indentation pre. Text decoded from a cut
// string of a long line's skeleton (see Options.Long) shows up to the cut,
// and then says so.
func (p *printer) linesAt(pre string, text []byte, short bool, st style) {
	if i := bytes.Index(text, []byte(transcript.StubMark)); i >= 0 {
		// A stub pads its kept start with dots up to the mark: a dot the
		// string itself ended its start with goes too, a loss of nothing
		// but a few dots of a view that is cut anyway.
		body := bytes.Trim(bytes.TrimRight(text[:i], "."), "\r\n")
		if short && !p.full {
			// The first lines only, and no count of the rest: only
			// the start of the string is at hand.
			for n, at := 0, 0; n < maxLines; n++ {
				j := bytes.IndexByte(body[at:], '\n')
				if j < 0 {
					break
				}
				if at += j + 1; n == maxLines-1 {
					body = body[:at-1]
				}
			}
		}
		p.linesAt(pre, body, short, st)
		p.itemAt(pre, dim, "… (cut: a line too long to hold; rehydrate or cat prints it whole)")
		return
	}
	short = short && !p.full
	total := len(text)
	body := bytes.Trim(text, "\r\n")
	cols := 0
	if short {
		cols = maxCols
	}
	for n := 0; len(body) > 0; n++ {
		if short && n == maxLines {
			more := bytes.Count(body, []byte{'\n'}) + 1
			p.itemAt(pre, dim, fmt.Sprintf("… (%s, %s)", display.Plural(more, "more line"), display.Plural(total, "byte")))
			return
		}
		line, rest, _ := bytes.Cut(body, []byte{'\n'})
		p.itemAt(pre, st, cleanLine(line, cols))
		body = rest
	}
}

// oneLine writes a label and text on one line, shortened unless the
// printer shows everything; then the whole text follows, indented under
// the label.
func (p *printer) oneLine(st style, label string, text []byte) {
	if p.full {
		p.item(st, label)
		p.linesAt(indent+indent, text, false, st)
		return
	}
	s := flat(text, maxOneLine)
	if strings.HasSuffix(s, "…") {
		s += " (" + display.Plural(len(text), "byte") + ")"
	}
	p.item(st, label+" "+s)
}

// rememberCall records the tool name of a call id.
func (p *printer) rememberCall(id, name string) {
	if name != "" {
		p.calls.Add(id, name, "")
	}
}

// toolOf returns the name of the tool call id called, or "" for a call
// not seen.
func (p *printer) toolOf(id string) string {
	c, _ := p.calls.Get(id)
	return c.Name
}
