package show

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Options say how a session is shown.
type Options struct {
	// Format is the transcript's format, one of the names of package
	// format. With "" (no format recognised) every entry is shown as a
	// note.
	Format string
	// Store is where references are looked up; nil shows them without
	// size or path.
	Store *registry.Store
	// Rehydrate shows migrated entries as they were before migration,
	// rebuilt from Store.
	Rehydrate bool
	// Full shows whole texts: thinking, tool arguments and results are not
	// shortened.
	Full bool
	// Color adds ANSI colours.
	Color bool
	// Problem, when set, is called for each line that could not be
	// rehydrated; the line is then shown as it is, references collapsed.
	Problem func(l transcript.Line, err error)
	// Long, when set, gives the skeleton of a line the reader returned as
	// Long (see transcript.Reader.Limit), built with LongOptions: such a
	// line is shown from it, its long strings from their first bytes, so
	// that memory does not grow with the line. An error wrapping
	// transcript.ErrTooDeep says the line nests too deeply for JSON.
	Long func(l transcript.Line) (*transcript.Skeleton, error)
}

// LongOptions are the options of the skeletons Options.Long builds:
// strings of 64 KiB or more are cut to their first 4 KB or so, more than
// the lines of a shortened result show.
var LongOptions = transcript.SkeletonOptions{Long: 64 << 10, StubLen: 4 << 10, Max: 16 << 20}

// renderer shows the entries of one format.
type renderer interface {
	// entry shows one entry and reports whether it knew it.
	entry(e *entry) bool
}

// renderers are the renderers of the declared formats, by name: how an
// entry is laid out for a reader (which of its members make a header,
// which are left out as bookkeeping) is this package's, while what the
// entry holds (its calls, its payloads) is the format's.
var renderers = map[string]renderer{
	format.Pi:         pi{},
	format.ClaudeCode: claudeCode{},
	format.Codex:      codex{},
	format.Chat:       chat{},
	format.Copilot:    copilot{},
	format.Gemini:     gemini{},
	format.Qwen:       qwen{},
}

// Render writes the session read from r to w, one entry at a time. Lines
// that are blank are skipped; lines that are not JSON objects, and entries
// the format does not know, are shown as one-line notes. The error is one
// of reading r or writing w; a line that cannot be rehydrated is reported
// to Options.Problem and the rendering goes on.
func Render(w io.Writer, r io.Reader, opts Options) error {
	in := transcript.NewReader(r)
	defer in.Release()
	return RenderLines(w, in, opts)
}

// RenderLines is Render for the lines of in; a line in returns as Long is
// shown from its skeleton (Options.Long).
func RenderLines(w io.Writer, in *transcript.Reader, opts Options) error {
	f, ok := format.Lookup(opts.Format)
	var rd renderer
	if ok {
		rd, ok = renderers[f.Name()]
	}
	if !ok && opts.Format != "" {
		return fmt.Errorf("unknown format %q", opts.Format)
	}
	ew := &errWriter{w: w}
	s := &session{
		p:    &printer{w: bufio.NewWriterSize(ew, 64<<10), color: opts.Color, full: opts.Full},
		rd:   rd,
		f:    f,
		opts: opts,
	}
	for ew.err == nil {
		l, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.line(l)
	}
	if err := s.p.w.Flush(); err != nil {
		return err
	}
	return ew.err
}

// errWriter keeps the first write error, so that the line loop can stop at
// a closed pipe.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

// session is the state of one Render.
type session struct {
	p        *printer
	rd       renderer
	f        format.Format // nil with no format
	opts     Options
	restored bytes.Buffer // a rehydrated line, reused from line to line
}

// line shows one line of the transcript.
func (s *session) line(l transcript.Line) {
	if l.Long {
		s.long(l)
		return
	}
	start := transcript.JSONStart(l)
	text := l.Text
	if len(bytes.TrimSpace(text[start:])) == 0 {
		return
	}
	root, err := transcript.Parse(text, start)
	var refs []ref
	if err == nil && root.Kind() == transcript.Object {
		refs = readRefs(root)
	}
	if len(refs) > 0 && !s.opts.Rehydrate && s.opts.Store != nil {
		// A member shaped like a marker that does not restore is the
		// entry's own content; one whose artifacts are missing still
		// shows what they were.
		if _, rerr := externalizer.RestoreTo(io.Discard, text, start, s.opts.Store.Opener(context.Background())); errors.Is(rerr, externalizer.ErrBadMarker) {
			refs = nil
		}
	}
	if s.opts.Rehydrate && s.opts.Store != nil && externalizer.HasMarker(text) {
		switch original, rerr := s.rehydrate(text, start, refs); {
		case rerr != nil:
			s.p.note(l.Num, red, "cannot rehydrate (%s); shown as migrated", flatString(rerr.Error(), 0))
			if s.opts.Problem != nil {
				s.opts.Problem(l, rerr)
			}
		case original != nil:
			// The original's own members that look like a marker are
			// its content, not references.
			text, refs = original, nil
			root, err = transcript.Parse(text, start)
		}
	}
	s.entry(l, text, root, err, refs)
}

// long shows a line too long to hold from its skeleton: its long strings
// show their first bytes (see linesAt). Its references are shown as they
// are, neither checked nor rehydrated: that reads the line whole.
func (s *session) long(l transcript.Line) {
	if s.opts.Long == nil {
		s.p.note(l.Num, dim, "a line too long to show (%s)", display.Plural(l.Len, "byte"))
		return
	}
	sk, err := s.opts.Long(l)
	if errors.Is(err, transcript.ErrTooDeep) {
		s.p.note(l.Num, dim, "JSON nested too deeply to show (%s)", display.Plural(l.Len, "byte"))
		return
	}
	if err != nil {
		s.p.note(l.Num, dim, "a line too long to show (%s): %s", display.Plural(l.Len, "byte"), flatString(err.Error(), 0))
		return
	}
	start := transcript.JSONStart(transcript.Line{Text: sk.Text, Num: l.Num})
	root, err := transcript.Parse(sk.Text, start)
	if sk.Invalid {
		err = errors.New("not JSON")
	}
	var refs []ref
	if err == nil && root.Kind() == transcript.Object {
		refs = readRefs(root)
	}
	if s.opts.Rehydrate && len(refs) > 0 {
		s.p.note(l.Num, dim, "a line too long to rehydrate here (%s): shown as migrated; rehydrate restores it", display.Plural(l.Len, "byte"))
	}
	s.entry(l, sk.Text, root, err, refs)
}

// entry shows the parsed line text (err the parse's error).
func (s *session) entry(l transcript.Line, text []byte, root transcript.Value, err error, refs []ref) {
	switch {
	case errors.Is(err, transcript.ErrTooDeep):
		s.p.note(l.Num, dim, "JSON nested too deeply to show (%s)", display.Plural(len(text), "byte"))
		return
	case err != nil:
		s.p.note(l.Num, dim, "not JSON (%s): %s", display.Plural(len(text), "byte"), flat(text, 60))
		return
	case root.Kind() != transcript.Object:
		s.p.note(l.Num, dim, "JSON %s, not an entry: %s", root.Kind(), flat(root.Raw(), 60))
		return
	}
	if s.f != nil {
		// Results name the calls they answer by id, on this line or later.
		// A call relayed again (a compacted history) names only a call not
		// seen made, whose line may have named it otherwise.
		s.f.Calls(root, func(c format.Call) {
			if !c.Relayed || !s.p.calls.Has(c.ID) {
				s.p.rememberCall(c.ID, c.Name)
			}
		})
	}
	e := &entry{printer: s.p, f: s.f, root: root, refs: refs, store: s.opts.Store}
	if s.rd == nil || !s.rd.entry(e) {
		s.p.note(l.Num, dim, "%s (%s)", unknown(root, s.opts.Format), display.Plural(len(text), "byte"))
	}
	e.otherRefs()
}

// rehydrate returns the original of the migrated line text, rebuilt in
// s.restored, or nil for a line without a marker. The buffer is first grown
// to about the original's size (up to maxGrow), from the sizes of the
// artifacts that refs name, so that a line of hundreds of megabytes is not
// copied from one doubled buffer to the next.
func (s *session) rehydrate(text []byte, start int, refs []ref) ([]byte, error) {
	size := int64(len(text))
	for _, r := range refs {
		for _, pc := range r.pieces {
			n := max(artifactSize(s.opts.Store, pc.Digest), 0)
			if pc.Form == externalizer.FormBase64 {
				n = n/3*4 + 4
			}
			size += n + n/8 // JSON escapes
		}
	}
	s.restored.Reset()
	s.restored.Grow(int(min(size, maxGrow)))
	changed, err := externalizer.RestoreTo(&s.restored, text, start, s.opts.Store.Opener(context.Background()))
	if err != nil || !changed {
		return nil, err
	}
	return s.restored.Bytes(), nil
}

// maxGrow bounds what rehydrate reserves on the word of the store's file
// sizes alone.
const maxGrow = 1 << 30

// unknown describes an entry that no renderer knows.
func unknown(root transcript.Value, format string) string {
	if format == "" {
		return "entry of unknown format"
	}
	t, ok := root.Get("type")
	if !ok {
		return fmt.Sprintf("%s entry of unknown kind", format)
	}
	return fmt.Sprintf("%s entry of unknown type %s", format, compactJSON(t.Raw(), 40))
}

// entry is one entry being shown.
type entry struct {
	*printer
	f     format.Format // the transcript's, set whenever a renderer runs
	root  transcript.Value
	refs  []ref
	store *registry.Store
}

// get returns the member key of object v.
func get(v transcript.Value, key string) transcript.Value {
	m, _ := v.Get(key)
	return m
}

// str returns the text of the string member key of v on one line, cut to
// max runes (0: whole).
func str(v transcript.Value, key string, max int) string {
	m, _ := v.Get(key)
	if m.Kind() != transcript.String {
		return ""
	}
	b, _ := decode(nil, m)
	return flat(b, max)
}

// refAt returns the reference that v is, or nil.
func (e *entry) refAt(v transcript.Value) *ref {
	if v.Kind() == transcript.Invalid {
		return nil
	}
	for i := range e.refs {
		if e.refs[i].start == v.Start {
			return &e.refs[i]
		}
	}
	return nil
}

// isRef reports whether v is a reference.
func (e *entry) isRef(v transcript.Value) bool { return e.refAt(v) != nil }

// ref shows v as the reference it is, if the marker says so.
func (e *entry) ref(v transcript.Value) bool {
	r := e.refAt(v)
	if r == nil {
		return false
	}
	r.shown = true
	e.item(cyan, describe(r, e.store))
	return true
}

// otherRefs shows the references the entry's renderer did not, each with
// its pointer: payloads of fields that are not shown, such as a tool's
// structured result beside its text.
func (e *entry) otherRefs() {
	for i := range e.refs {
		r := &e.refs[i]
		if !r.shown {
			e.item(cyan, cleanLine([]byte(r.at), 80)+": "+describe(r, e.store))
		}
	}
}

// text shows the string v as body lines, shortened when short.
func (e *entry) text(v transcript.Value, short bool) {
	if e.ref(v) {
		return
	}
	var ok bool
	e.buf, ok = decode(e.buf[:0], v)
	if ok {
		e.lines(e.buf, short, none)
	}
}

// content shows a message's content: a string, or an array of blocks (an
// object is taken as one block). short shortens the texts, as for tool
// results.
func (e *entry) content(v transcript.Value, short bool) { e.contentOf(v, short, e.block) }

// contentOf is content with block showing each block.
func (e *entry) contentOf(v transcript.Value, short bool, block func(b transcript.Value, short bool)) {
	if e.ref(v) {
		return
	}
	switch v.Kind() {
	case transcript.String:
		e.text(v, short)
	case transcript.Array:
		v.Elems(func(_ int, b transcript.Value) bool {
			block(b, short)
			return true
		})
	case transcript.Object:
		block(v, short)
	case transcript.Number, transcript.Bool:
		e.item(dim, "["+v.Kind().String()+" "+compactJSON(v.Raw(), 40)+"]")
	}
}

// block shows one content block of any of the formats.
func (e *entry) block(b transcript.Value, short bool) {
	if e.ref(b) {
		return
	}
	if b.Kind() != transcript.Object {
		e.content(b, short)
		return
	}
	t := str(b, "type", 40)
	switch t {
	case "text", "input_text", "output_text", "summary_text", "reasoning_text":
		e.text(get(b, "text"), short)
	case "thinking":
		e.thinking(get(b, "thinking"))
	case "redacted_thinking":
		e.item(dim, "thinking (redacted)")
	case "toolCall": // pi
		e.call(get(b, "name"), get(b, "arguments"))
	case "tool_use", "server_tool_use": // Claude
		e.call(get(b, "name"), get(b, "input"))
	case "image", "input_image", "image_url":
		e.image(b)
	case "tool_result":
		e.item(dim, "[tool result block]")
		e.content(get(b, "content"), true)
	default:
		if t == "" {
			t = "untyped"
		}
		e.item(dim, "["+t+" block]")
	}
}

// thinking shows a model's reasoning on one line.
func (e *entry) thinking(v transcript.Value) {
	if e.ref(v) {
		return
	}
	var ok bool
	e.buf, ok = decode(e.buf[:0], v)
	if ok && len(bytes.TrimSpace(e.buf)) > 0 {
		e.oneLine(dim, "thinking:", e.buf)
	}
}

// call shows a tool call on one line: its name and compact arguments.
func (e *entry) call(name, arguments transcript.Value) {
	n := flatString(name.Text(), 60)
	if e.ref(arguments) {
		return
	}
	max := maxOneLine
	if e.full {
		max = 0
	}
	e.item(cyan, "→ "+n+" "+args(arguments, max))
}

// image shows an image block as one line: its media type and size. The
// block is pi's {"type":"image","data","mimeType"}, Claude's {"type":
// "image","source":{...}}, Codex's {"type":"input_image","image_url"} or
// chat completions' {"type":"image_url","image_url":{"url"}}.
func (e *entry) image(b transcript.Value) {
	media := str(b, "mimeType", 40)
	data, hasData := b.Get("data")
	if src, ok := b.Get("source"); ok && src.Kind() == transcript.Object {
		if url, ok := src.Get("url"); ok {
			e.item(dim, "[image "+flatString(url.Text(), 80)+"]")
			return
		}
		media = str(src, "media_type", 40)
		data, hasData = src.Get("data")
	}
	if url, ok := b.Get("image_url"); ok {
		if url.Kind() == transcript.Object {
			url = get(url, "url")
		}
		e.dataURL(url)
		return
	}
	if e.ref(data) {
		return
	}
	switch {
	case !hasData:
		e.item(dim, "[image]")
	case data.Kind() != transcript.String:
		e.item(dim, "[image, "+data.Kind().String()+" data of "+display.Plural(data.Len(), "byte")+"]")
	default:
		e.item(dim, "[image "+join(media, display.Plural(base64Size(data.Raw()[1:data.Len()-1]), "byte"))+"]")
	}
}

// dataURL shows an image given by URL: a data: URL by media type and size,
// another by its address.
func (e *entry) dataURL(url transcript.Value) {
	if e.ref(url) {
		return
	}
	raw := url.Raw()
	const prefix = `"data:`
	head, data, ok := bytes.Cut(raw, []byte{','})
	if url.Kind() != transcript.String || !bytes.HasPrefix(raw, []byte(prefix)) || !ok {
		e.item(dim, "[image "+flatString(url.Text(), 80)+"]")
		return
	}
	media, _, _ := bytes.Cut(head[len(prefix):], []byte{';'})
	e.item(dim, "[image "+join(flat(media, 40), display.Plural(base64Size(data[:len(data)-1]), "byte"))+"]")
}

// join joins the non-empty parts with ", ".
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}
