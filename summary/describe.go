package summary

import (
	"bytes"
	"image"
	_ "image/gif" // image.DecodeConfig reads GIF headers
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Max is the longest description Describe returns, in Unicode code
// points: the seed design's (OpenClaw PR #9415) bound on a summary.
const Max = 200

// Media types of artifacts other than images: text that an escaping style
// of package transcript writes back exactly, and JSON kept as its bytes.
const (
	MediaText = "text/plain; charset=utf-8"
	MediaJSON = "application/json"
)

// describeWindow is how much of an artifact's start, and of its end, a
// Describer keeps to look at: JSON structure, image headers and the first
// lines come from the start, a failed command's error line and exit
// status from both.
const describeWindow = 64 << 10

// Context is what the transcript says of the tool call whose output an
// artifact is; the zero Context says nothing.
type Context struct {
	// Tool is the tool's name, as the format records it.
	Tool string
	// Input is the call's main argument: the command run, the file read.
	Input string
	// Exit is the command's exit status, when the transcript records it.
	Exit string
	// Failed is set when the transcript marks the call as failed.
	Failed bool
	// Diff is set when the payload is a diff by where it sits (pi's
	// details.diff), whatever it starts with.
	Diff bool
}

// Describe returns DescribeIn(data, media, Context{}): a description by
// the bytes alone.
func Describe(data []byte, media string) string { return DescribeIn(data, media, Context{}) }

// DescribeIn returns a one-line description of an artifact of media type
// media (as the registry records it; "" to guess from the bytes), the
// output of the tool call ctx tells of, at most Max code points,
// free of control characters. What the artifact is decides what is said:
//
//   - a file read (a tool such as Read, read_file or view): the path, the
//     line count, and the first Markdown heading of a Markdown file or
//     else the first non-empty line, line-number prefixes (Claude Code's
//     "N→" or "N\t") stripped: `read docs/spec.md (204 lines): # Spec`;
//   - a shell command (Bash, exec_command, shell, ...): the command, its
//     exit status and, only when it failed, its first error line:
//     `$ go test ./... — exit 1: "--- FAIL: TestX (0.00s)" (40 lines)`;
//   - a diff (unified diff headers, or ctx.Diff and lines added or
//     removed): the +/- line counts and the files:
//     `diff: +12 -3 in 2 files: a.go, b.go`;
//   - JSON (application/json, or text that parses as one JSON value): its
//     structure, as in `JSON object {output, metadata{exit_code:0, …}}`
//     or `JSON array of 42 objects {path, line}`;
//   - images: the type, dimensions when the header gives them, and size;
//   - other text: its first non-empty line and its line count;
//   - anything else: the sniffed type and size.
//
// What the tool was decides for text only: JSON stored as its bytes
// (escapes no style writes back) is described by its structure. An
// error line is only ever quoted for a call that failed, so that the
// summary of a successful call never reads like a failure.
//
// The work is bounded: structure and first lines come from the first 64
// KiB, a failed command's error line and exit status from the first and
// last 64 KiB, and only the line counts and the JSON element count see
// every byte. DescribeIn(data, m, ctx) equals what a Describer made by
// NewDescriberIn(m, ctx) given the same bytes in any pieces returns.
func DescribeIn(data []byte, media string, ctx Context) string {
	return describeIn(data, media, ctx).String()
}

// Of returns what DescribeIn(data, media, ctx) describes data as, and
// the description.
func Of(data []byte, media string, ctx Context) (Kind, string) {
	return describeIn(data, media, ctx).Describe()
}

// describeIn returns the Describer that data was written to, its windows
// slices of data.
func describeIn(data []byte, media string, ctx Context) *Describer {
	// What Write would copy into the windows is looked at in place.
	d := NewDescriberIn(media, ctx)
	d.count(data)
	k := min(describeWindow, len(data))
	d.head = data[:k:k]
	rest := data[k:]
	d.tail = rest[max(len(rest)-describeWindow, 0):]
	d.all = data
	return d
}

// Describer describes an artifact written to it piece by piece, as
// DescribeIn does, holding at most 192 KiB of it, so that an artifact can
// be described while it is streamed from the store. The zero value is not
// ready for use; NewDescriber makes one.
type Describer struct {
	media string
	ctx   Context
	size  int64
	lines lineCounter
	head  []byte // the first describeWindow bytes
	tail  []byte // the bytes after head: at least the last describeWindow of them, at most twice that
	all   []byte // set by DescribeIn: every byte, head and tail among them
	json  jsonCounter
}

// NewDescriber returns a Describer for an artifact of media type media,
// known by its bytes alone.
func NewDescriber(media string) *Describer { return NewDescriberIn(media, Context{}) }

// NewDescriberIn returns a Describer for an artifact of media type media,
// the output of the tool call ctx tells of.
func NewDescriberIn(media string, ctx Context) *Describer {
	return &Describer{media: media, ctx: ctx}
}

// Write adds p to the artifact. It never fails.
func (d *Describer) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	d.count(p)
	if room := describeWindow - len(d.head); room > 0 {
		k := min(room, len(p))
		d.head = append(d.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		if len(p) >= describeWindow {
			d.tail = append(d.tail[:0], p[len(p)-describeWindow:]...)
		} else {
			if len(d.tail)+len(p) > 2*describeWindow {
				d.tail = append(d.tail[:0], d.tail[len(d.tail)-(describeWindow-len(p)):]...)
			}
			d.tail = append(d.tail, p...)
		}
	}
	return n, nil
}

// count adds p to the counts that see every byte: size, lines, diff
// lines and JSON elements.
func (d *Describer) count(p []byte) {
	d.size += int64(len(p))
	if len(p) == 0 {
		return
	}
	d.lines.write(p)
	d.json.write(p)
}

// Media returns the media type the description goes by: the one given to
// NewDescriber or, for "", the one guessed from the bytes written so far.
func (d *Describer) Media() string {
	if d.media == "" && d.size > 0 {
		return sniff(d.head)
	}
	return d.media
}

// SetMedia sets the media type the description goes by, for bytes whose
// type is known only once they are written: a decoded image's.
func (d *Describer) SetMedia(media string) { d.media = media }

// String returns the description of the bytes written so far.
func (d *Describer) String() string {
	_, s := d.Describe()
	return s
}

// Kind is what an artifact is described as, which decides what its
// description says.
type Kind string

// The kinds of artifact, as DescribeIn's comment tells them: KindJSON is
// text that parses as JSON, KindText any other text.
const (
	KindEmpty  Kind = "empty"
	KindImage  Kind = "image"
	KindBinary Kind = "binary"
	KindRead   Kind = "read"
	KindShell  Kind = "shell"
	KindDiff   Kind = "diff"
	KindJSON   Kind = "json"
	KindText   Kind = "text"
)

// Describe returns what the bytes written so far are described as, and
// their description, String.
func (d *Describer) Describe() (Kind, string) {
	if d.size == 0 {
		return KindEmpty, "empty"
	}
	media := d.Media()
	text := strings.HasPrefix(media, "text/")
	k := KindText
	switch {
	case strings.HasPrefix(media, "image/"):
		k = KindImage
	case !text && !strings.HasPrefix(media, MediaJSON):
		k = KindBinary
	case !text:
		// JSON bytes stored as they are (escapes no style writes back):
		// not the text the tool gave, but its encoding.
	case toolKind(d.ctx.Tool) != KindText:
		k = toolKind(d.ctx.Tool)
	case d.isDiff():
		k = KindDiff
	}
	var s string
	switch k {
	case KindImage:
		s = d.image(media)
	case KindBinary:
		s = d.binary()
	case KindRead:
		s = d.read()
	case KindShell:
		s = d.shell()
	case KindDiff:
		s = d.diff()
	default:
		var ok bool
		if s, ok = d.structure(); ok {
			k = KindJSON
		} else {
			s = d.text()
		}
	}
	return k, display.Line(s, Max)
}

// sniff guesses the media type of an artifact from its first bytes.
func sniff(head []byte) string {
	text := head[:transcript.CompleteRunes(head)]
	if utf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
		return MediaText
	}
	return http.DetectContentType(head)
}

func (d *Describer) image(media string) string {
	kind := strings.ToUpper(strings.TrimPrefix(media, "image/"))
	cfg, format, err := image.DecodeConfig(bytes.NewReader(d.head))
	if err != nil {
		return display.Line(kind, 20) + " image, " + display.Bytes(d.size)
	}
	return strings.ToUpper(format) + " image " + strconv.Itoa(cfg.Width) + "×" + strconv.Itoa(cfg.Height) + ", " + display.Bytes(d.size)
}

func (d *Describer) binary() string {
	kind := http.DetectContentType(d.head)
	if kind == "application/octet-stream" {
		return "binary, " + display.Bytes(d.size)
	}
	return "binary (" + kind + "), " + display.Bytes(d.size)
}

// whole reports whether head and the tail window hold every byte
// written. It depends only on the size, so that the description does not
// depend on how the bytes were cut into writes.
func (d *Describer) whole() bool { return d.size-int64(len(d.head)) <= describeWindow }

// Error-looking words: error, fail, panic, exception, traceback and fatal
// as words in any case, with their inflections (FAILED, errors), and at
// the end of a CamelCase name (TypeError, NullPointerException), but not
// inside identifiers such as Errorf, error_code or stderr, which source
// code is full of.
var (
	errorWord  = regexp.MustCompile(`(?i)(?:^|[^a-z0-9_])(?:errors?|fail(?:s|ed|ures?|ing)?|panic(?:s|ked|king)?|exceptions?|traceback|fatal)(?:$|[^a-z0-9_])`)
	errorCamel = regexp.MustCompile(`[a-z](?:Error|Exception|Failure)s?(?:$|[^A-Za-z0-9_])`)
)

// errorRegexp is LooksLikeError by the regular expressions themselves.
func errorRegexp(line []byte) bool { return errorWord.Match(line) || errorCamel.Match(line) }

// LooksLikeError reports whether line holds an error-looking word, the
// test by which the summary of a failed command picks the line it quotes.
func LooksLikeError(line []byte) bool { return errorMatcher(line)(line) }

// errorMatcher returns the function that finds error-looking lines in the
// windows bs and in any part of them. Where b holds no letter that case folding maps to
// ASCII (the Kelvin sign, the long s), it is a hand-written matcher with
// the same answers as the regular expressions, which took 70 % of a
// migration's CPU when they ran on every line. The test for those letters
// is made once for a whole window, not for each line.
func errorMatcher(bs ...[]byte) func([]byte) bool {
	for _, b := range bs {
		if bytes.ContainsRune(b, '\u212a') || bytes.ContainsRune(b, '\u017f') {
			return errorRegexp
		}
	}
	return hasErrorWord
}

var (
	errorWordsE = []string{"error", "errors", "exception", "exceptions"}
	errorWordsF = []string{"fail", "fails", "failed", "failure", "failures", "failing", "fatal"}
	errorWordsP = []string{"panic", "panics", "panicked", "panicking"}
	errorWordsT = []string{"traceback"}
	errorSuffix = []string{"Error", "Errors", "Exception", "Exceptions", "Failure", "Failures"}
)

// The classes of bytes hasErrorWord tells apart, as bits of errorClass.
const (
	classWord   = 1 << iota // an ASCII letter or digit, or an underscore: it continues a word
	classStart              // e, f, p or t in any case: it may begin an error word
	classSuffix             // E or F: it may begin a CamelCase suffix
)

var errorClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		if wordByte(byte(c)) {
			t[c] |= classWord
		}
		switch c | 0x20 {
		case 'e', 'f', 'p', 't':
			t[c] |= classStart
		}
		if c == 'E' || c == 'F' {
			t[c] |= classSuffix
		}
	}
	return t
}()

// wordByte reports whether c continues a word: an ASCII letter or digit,
// or an underscore.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// hasErrorWord is errorWord or errorCamel, for lines without the Kelvin
// sign or long s, in one pass over the line that looks up each byte's
// class once.
func hasErrorWord(line []byte) bool {
	prev := uint8(0) // the class of the byte before i
	for i := 0; i < len(line); i++ {
		class := errorClass[line[i]]
		if class&classStart != 0 {
			if prev&classWord == 0 {
				if errorWordAt(line, i) {
					return true
				}
			} else if class&classSuffix != 0 && 'a' <= line[i-1] && line[i-1] <= 'z' && errorSuffixAt(line, i) {
				return true
			}
		}
		prev = class
	}
	return false
}

// errorWordAt reports whether an error word, in any case, begins at
// line[i] and ends a word.
func errorWordAt(line []byte, i int) bool {
	if i+1 >= len(line) {
		return false
	}
	// Most words that begin with these letters are told apart by the
	// next one.
	var words []string
	switch next := line[i+1] | 0x20; line[i] | 0x20 {
	case 'e':
		if next != 'r' && next != 'x' {
			return false
		}
		words = errorWordsE
	case 'f':
		if next != 'a' {
			return false
		}
		words = errorWordsF
	case 'p':
		if next != 'a' {
			return false
		}
		words = errorWordsP
	default:
		if next != 'r' {
			return false
		}
		words = errorWordsT
	}
	for _, w := range words {
		end := i + len(w)
		if end <= len(line) && equalFoldASCII(line[i:end], w) && (end == len(line) || !wordByte(line[end])) {
			return true
		}
	}
	return false
}

// equalFoldASCII reports whether b equals the lower-case ASCII word w in
// any ASCII case. (Other letters that fold to ASCII ones are left to the
// regular expressions, see errorMatcher.)
func equalFoldASCII(b []byte, w string) bool {
	for i := 0; i < len(w); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// errorSuffixAt reports whether a CamelCase suffix such as Error begins at
// line[i] and ends the name.
func errorSuffixAt(line []byte, i int) bool {
	for _, w := range errorSuffix {
		end := i + len(w)
		if end <= len(line) && string(line[i:end]) == w && (end == len(line) || !wordByte(line[end])) {
			return true
		}
	}
	return false
}

// fit cleans parts into one-line strings and cuts them so that together
// they take at most budget code points, sharing it evenly: a part shorter
// than its share leaves the rest to the others.
func fit(budget int, parts []string) []string {
	out := make([]string, len(parts))
	lens := make([]int, len(parts))
	for i, p := range parts {
		out[i] = display.Line(p, Max)
		lens[i] = display.Len(out[i])
	}
	left := make([]int, 0, len(parts)) // indexes not yet given their share
	for i := range parts {
		left = append(left, i)
	}
	budget = max(budget, 0)
	for len(left) > 0 {
		share := budget / len(left)
		var next []int
		for _, i := range left {
			if lens[i] <= share {
				budget -= lens[i]
			} else {
				next = append(next, i)
			}
		}
		if len(next) == len(left) {
			for k, i := range next {
				n := share
				if k < budget%len(next) {
					n++
				}
				out[i] = display.Cut(out[i], n)
			}
			break
		}
		left = next
	}
	return out
}

// JSON structure.

// Limits on how much of a JSON value's structure is shown.
const (
	shownKeys   = 8  // members named per object
	shownNested = 4  // members named per nested object
	shownScalar = 12 // longest number, true, false or null shown beside its key
)

// structure describes a JSON artifact from its start, or reports false
// when the start is not the beginning of one JSON value.
func (d *Describer) structure() (string, bool) {
	start := bytes.TrimLeft(d.head, " \t\r\n")
	if len(start) == 0 || !strings.ContainsRune(`{["`, rune(start[0])) {
		return "", false
	}
	v, s, err := parseJSON(d.head, int64(len(d.head)) < d.size)
	if err != nil && err != transcript.ErrTruncated {
		return "", false
	}
	if err == nil {
		if _, err := s.Next(); err != io.EOF {
			return "", false // more than one value: text, such as JSON lines
		}
	}
	switch v.kind {
	case '{':
		s := "JSON object " + v.keys(shownKeys, false)
		if n := d.json.elems; n > int64(min(len(v.members), shownKeys)) {
			s += " (" + display.Plural(n, "member") + ")"
		}
		if m := v.longestString(); m != nil {
			s += "; " + m.key + ": \"" + display.Line(firstLine(m.val.text), 60) + "\""
		}
		return s, true
	case '[':
		return "JSON array of " + v.elements(d.json.elems), true
	}
	n := d.json.newlines + 1
	return `JSON string: "` + display.Line(firstLine(v.text), Max) + `" (` + display.Plural(n, "line") + ")", true
}

// firstLine returns the first non-blank line of s.
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// jsonValue is what the start of an artifact shows of a JSON value.
type jsonValue struct {
	kind     byte // '{', '[', '"', or 's' for another scalar
	members  []jsonMember
	elems    []jsonValue
	complete bool   // the value ends inside the window
	text     string // a string's text, cut
	raw      string // a scalar's JSON
	strLen   int    // a string's length in bytes of JSON
}

type jsonMember struct {
	key string
	val jsonValue
}

// keys renders an object's member names, up to n, with short scalars,
// array lengths and, unless nested, the names in nested objects.
func (v *jsonValue) keys(n int, nested bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range v.members {
		if i == n {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(display.Line(m.key, 30))
		switch m.val.kind {
		case '{':
			if !nested && len(m.val.members) > 0 {
				b.WriteString(m.val.keys(shownNested, true))
			} else {
				b.WriteString("{…}")
			}
		case '[':
			b.WriteString("[" + strconv.Itoa(len(m.val.elems)))
			if !m.val.complete {
				b.WriteString("+")
			}
			b.WriteString("]")
		case 's':
			if m.val.raw != "" && len(m.val.raw) <= shownScalar {
				b.WriteString(":" + m.val.raw)
			}
		}
	}
	if !v.complete && len(v.members) <= n {
		if len(v.members) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("…")
	}
	b.WriteByte('}')
	return b.String()
}

// longestString returns the top-level member with the longest non-blank
// string value, or nil.
func (v *jsonValue) longestString() *jsonMember {
	var best *jsonMember
	for i := range v.members {
		m := &v.members[i]
		if m.val.kind == '"' && strings.TrimSpace(m.val.text) != "" && (best == nil || m.val.strLen > best.val.strLen) {
			best = m
		}
	}
	return best
}

// elements renders an array's elements: how many (total, counted over
// the whole artifact) and of what kind.
func (v *jsonValue) elements(total int64) string {
	if total == 0 {
		return "0 elements"
	}
	kinds := map[byte]int{}
	for _, e := range v.elems {
		kinds[e.kind]++
	}
	if len(kinds) != 1 {
		return display.Plural(total, "value")
	}
	e := v.elems[0]
	switch e.kind {
	case '{':
		var union jsonValue
		seen := map[string]bool{}
		union.complete = true
		for _, o := range v.elems {
			for _, m := range o.members {
				if !seen[m.key] {
					seen[m.key] = true
					m.val.raw = "" // values differ from one element to the next
					union.members = append(union.members, m)
				}
			}
		}
		return display.Plural(total, "object") + " " + union.keys(shownKeys, false)
	case '[':
		return display.Plural(total, "array")
	case '"':
		return display.Plural(total, "string") + `: "` + display.Line(firstLine(e.text), 60) + `"`
	}
	var vals []string
	for _, e := range v.elems[:min(len(v.elems), 5)] {
		vals = append(vals, display.Line(e.raw, shownScalar))
	}
	if int64(len(vals)) < total {
		vals = append(vals, "…")
	}
	name := "scalar"
	switch e.raw {
	case "true", "false":
		name = "boolean"
	case "null":
		name = "null"
	default:
		if kinds := strings.Trim(e.raw, "-0123456789.eE+"); kinds == "" {
			name = "number"
		}
	}
	return display.Plural(total, name) + ": " + strings.Join(vals, ", ")
}

// jsonCounter follows a JSON text through every byte written to count the
// elements of a top-level array (or members of a top-level object) and the
// "\n" escapes of a top-level string, or of the strings it holds. It
// checks nothing: parseJSON, on the start, decides whether the artifact
// is JSON.
type jsonCounter struct {
	off      bool // the artifact does not start like JSON
	started  bool
	inString bool
	escape   bool
	pending  bool // at depth 1, after '[', '{' or ',': the next value starts an element
	depth    int
	elems    int64
	newlines int64
	nested   int64 // "\n" escapes in the strings of a top-level object or array
}

func (j *jsonCounter) write(p []byte) {
	if j.off {
		return
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if j.inString {
			switch {
			case j.escape:
				j.escape = false
				if c == 'n' && j.depth == 0 {
					j.newlines++
				} else if c == 'n' && j.depth == 1 {
					j.nested++
				}
			case c == '\\':
				j.escape = true
			case c == '"':
				j.inString = false
			default:
				// The string's plain bytes, passed over by the
				// parser's scanner, to the byte before its next
				// quote, backslash or control character.
				i += transcript.IndexSpecial(p[i+1:])
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if !j.started {
			j.started = true
			if c != '{' && c != '[' && c != '"' {
				j.off = true // not JSON worth counting; parseJSON will say so
				return
			}
		}
		if j.depth == 1 && j.pending && c != ']' && c != '}' {
			j.elems++
			j.pending = false
		}
		switch c {
		case '"':
			j.inString = true
		case '{', '[':
			j.depth++
			if j.depth == 1 {
				j.pending = true
			}
		case '}', ']':
			j.depth--
		case ',':
			if j.depth == 1 {
				j.pending = true
			}
		}
	}
}

// jsonTree builds, from the tokens of the JSON value at the start of an
// artifact's first window, the part of it a description shows. The
// window may end inside the value: transcript.ErrTruncated then comes
// with what the window holds of it.
type jsonTree struct {
	s   *transcript.Scanner
	buf []byte // decoded text, reused from string to string
}

// maxDetail is the depth below which values are skipped rather than
// described.
const maxDetail = 2

// maxElems bounds the elements of an array kept for description.
const maxElems = 64

// maxText bounds the decoded text kept of a string.
const maxText = 512

// parseJSON returns what the start of head shows of the JSON value it
// begins with, head being the whole artifact unless truncated. The
// error is nil, transcript.ErrTruncated, or another when head does not
// begin with JSON; the scanner says what follows the value.
func parseJSON(head []byte, truncated bool) (jsonValue, *transcript.Scanner, error) {
	t := jsonTree{s: transcript.NewScanner(head, truncated), buf: make([]byte, 0, maxText+utf8.UTFMax)}
	tok, err := t.s.Next()
	v, err := t.value(tok, err, 0)
	return v, t.s, err
}

// value builds the value that begins with tok, which Next returned with
// err.
func (t *jsonTree) value(tok transcript.Token, err error, depth int) (jsonValue, error) {
	switch {
	case err != nil && err != transcript.ErrTruncated:
		return jsonValue{}, err
	case tok.Kind == transcript.Object || tok.Kind == transcript.Array:
		c := tok.Raw[0]
		if depth > maxDetail {
			return jsonValue{kind: c}, t.s.Skip()
		}
		return t.container(c, depth)
	case tok.Kind == transcript.String:
		return jsonValue{kind: '"', text: t.text(tok), strLen: len(tok.Raw), complete: err == nil}, err
	case tok.Kind == transcript.Invalid:
		return jsonValue{}, err // the window ends where the value was due
	}
	return jsonValue{kind: 's', raw: string(tok.Raw), complete: err == nil}, err
}

// text returns the start of the text of the string tok, at most about
// maxText bytes.
func (t *jsonTree) text(tok transcript.Token) string {
	t.buf = transcript.AppendLossy(t.buf[:0], tok.Raw, maxText)
	return string(t.buf)
}

// container builds the object or array just opened. A member is kept
// once its name is in the window, an element once the '[' or ',' before
// it is, however little of its value the window holds.
func (t *jsonTree) container(open byte, depth int) (jsonValue, error) {
	v := jsonValue{kind: open}
	for {
		tok, err := t.s.Next()
		if tok.End {
			v.complete = true
			return v, nil
		}
		var key string
		if tok.Key {
			if err != nil {
				return v, err
			}
			key = t.text(tok)
			tok, err = t.s.Next()
		} else if err != nil && !t.s.ValueCut() {
			return v, err
		}
		e, err := t.value(tok, err, depth+1)
		if err == nil || err == transcript.ErrTruncated {
			if open == '{' {
				v.members = append(v.members, jsonMember{key: key, val: e})
			} else if len(v.elems) < maxElems {
				v.elems = append(v.elems, e)
			}
		}
		if err != nil {
			return v, err
		}
	}
}
