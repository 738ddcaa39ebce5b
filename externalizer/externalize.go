package externalizer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Artifact describes one artifact a rewritten line refers to.
type Artifact struct {
	Digest store.Digest
	// Data is the artifact's bytes, valid only during the call to Put.
	// It is nil for an artifact of a long line (see RewriteBig) and for
	// one whose payload Payloads has met before; Stream writes its bytes
	// instead, also only during the call, and a Put that finds the
	// artifact stored need not call it.
	Data       []byte
	Stream     func(io.Writer) error
	Size       int
	Media      string
	Site       string // JSON pointer of the site within the entry
	Tool       string
	ToolCallID string
	Entry      string
	Summary    string
	// What Summary was told of the call, and describes the artifact as.
	ctx  summary.Context
	kind summary.Kind
}

// DefaultThreshold is the payload size, in JSON bytes, from which a payload
// is externalized.
const DefaultThreshold = 4096

// Externalizer rewrites the lines of one transcript.
type Externalizer struct {
	Format    Format
	Threshold int
	// PathFor returns where an artifact lives, as shown to readers of the
	// migrated transcript.
	PathFor func(store.Digest) string
	// Put stores an artifact. It is called for each artifact of a line
	// before Rewrite returns the line, and must not keep a.Data.
	Put func(a Artifact) error
	// Open reads artifacts back: a line that looks migrated counts as
	// migrated only when it restores.
	Open Opener
	// Summaries, when set, describes each artifact once for all the
	// Externalizers that share it: a run's.
	Summaries *summary.Cache
	// Payloads, when set, remembers what each payload became for all the
	// Externalizers that share it, so that a payload met again is not
	// decoded and hashed again: a run's.
	Payloads *Payloads

	// scratch holds the decoded bytes of the artifacts of the line being
	// rewritten, until they are stored; its space is reused line after line.
	scratch []byte
	// calls are the tool calls of the lines rewritten so far: a result
	// that names only its call is described, and recorded, with the
	// call's name and main argument. Lines must be rewritten in order.
	calls format.CallTable
}

// Result is what Rewrite made of one line.
type Result struct {
	// Line is the rewritten line, or nil when the line is kept as it is.
	Line []byte
	// Artifacts are the artifacts Line refers to, already passed to Put;
	// their Data is nil.
	Artifacts []Artifact
	// Migrated is true for a line that already carries a marker.
	Migrated bool
}

// splice replaces Buf[start:end] with with; start == end inserts.
type splice struct {
	start, end int
	with       []byte
}

// Rewrite externalizes the payload sites of one line. text is the line
// without its end-of-line bytes and start the offset where JSON may begin
// (past a byte order mark). Lines that are not JSON objects, that nest too
// deeply, or that have no site over the threshold are kept. A site moves
// only if that shortens the line, its marker included (see Moves): a
// rewritten line is always shorter but for the case below.
//
// A member called MarkerKey that is not a marker belongs to the entry
// itself; such an entry always gains a marker after it, with no edits if
// it has no site, so that Restore gives it back exactly instead of taking
// the member for a broken marker.
func (x *Externalizer) Rewrite(text []byte, start int) (Result, error) {
	res, splices, err := x.rewrite(text, start, nil)
	if err != nil || splices == nil {
		return res, err
	}
	res.Line = apply(text, splices)
	return res, nil
}

// rewrite finds the splices that externalize the sites of a line, or of a
// long line's skeleton when big is set; nil splices keep the line. It
// stores the artifacts and proves, on text, that the rewritten line
// restores.
func (x *Externalizer) rewrite(text []byte, start int, big *BigLine) (Result, []splice, error) {
	if big != nil && big.Invalid {
		return Result{}, nil, nil
	}
	short := len(text)-start < x.Threshold && !HasMarker(text)
	// A line parsed anyway is asked for its calls; a short one only if
	// it may have some, which a search of its bytes says more cheaply.
	calls := !short || format.MayCall(x.Format, text)
	if short && !calls {
		return Result{}, nil, nil
	}
	root, err := transcript.Parse(text, start)
	if err != nil || root.Kind() != transcript.Object {
		return Result{}, nil, nil
	}
	if calls {
		// Every line's calls, a short line's too: the results that
		// answer them come after.
		x.Format.Calls(root, x.addCall)
	}
	if short {
		return Result{}, nil, nil
	}
	_, _, err = readMarker(root)
	if big != nil && !errors.Is(err, errNoMarker) {
		return Result{}, nil, ErrNeedWhole
	}
	if err == nil {
		// It looks like a marker; it is one only if the line restores.
		// A line that does not is genuine content, kept by a real marker
		// after it; a line whose artifacts are missing or corrupt is an
		// error, never wrapped a second time.
		switch _, rerr := RestoreTo(io.Discard, text, start, x.Open); {
		case rerr == nil:
			return Result{Migrated: true}, nil, nil
		case !errors.Is(rerr, ErrBadMarker):
			return Result{}, nil, fmt.Errorf("already migrated, but: %w", rerr)
		}
	}
	foreign := !errors.Is(err, errNoMarker)
	sites := x.Format.Sites(root, x.Threshold, nil)
	if len(sites) == 0 && !foreign {
		return Result{}, nil, nil
	}
	moves, err := x.plan(root, sites, big, foreign, false)
	if err != nil {
		return Result{}, nil, err
	}
	if len(moves) == 0 && !foreign {
		return Result{}, nil, nil
	}
	var (
		raws    = rawParts{}
		edits   = make([][]byte, 0, len(moves)+1)
		splices = make([]splice, 0, len(moves)+2)
		ref     *refAdd
	)
	for _, m := range moves {
		splices = append(splices, m.placeholder)
		edits = append(edits, m.edit)
		for _, p := range m.named {
			raws.add(p.part, p.raw)
		}
		if m.ref != nil {
			ref = m.ref
		}
	}
	if ref != nil {
		splices = append(splices, ref.splice)
		edits = append(edits, ref.edit)
	}
	sum := sha256.Sum256(text)
	at, sep := insertionPoint(root)
	member := make([]byte, 0, len(sep)+len(markerKeyQuoted)+len(":")+markerLen(edits))
	member = append(append(append(member, sep...), markerKeyQuoted...), ':')
	splices = append(splices, splice{at, at, appendMarker(member, sum, edits)})
	if err := checkRewrite(apply(text, splices), start, text, raws); err != nil {
		return Result{}, nil, err
	}
	if big != nil {
		// The proof ran on the skeleton; the marker records the line.
		last := &splices[len(splices)-1]
		if last.with, err = patchSum(last.with, sum, big.Sum); err != nil {
			return Result{}, nil, err
		}
	}
	// Stored only now: nothing is for a line kept as it is.
	res := Result{Artifacts: make([]Artifact, 0, len(raws))}
	for _, m := range moves {
		for _, a := range m.arts {
			if err := x.Put(a); err != nil {
				return Result{}, nil, err
			}
			a.Data, a.Stream = nil, nil
			res.Artifacts = append(res.Artifacts, a)
		}
	}
	return res, splices, nil
}

// bigSiteOK reports whether site s of a skeleton, cut into holes, can be
// rewritten from it: every cut string is inside a hole (the JSON between
// holes goes into the marker as it is), and neither the keys on its path
// nor the names it reports come from a cut string.
func bigSiteOK(big *BigLine, s *Site, holes []hole) bool {
	if fromStub(s) {
		return false
	}
	pos := s.Value.Start
	for _, h := range holes {
		if big.cuts(pos, h.v.Start) {
			return false
		}
		pos = h.v.End
	}
	return !big.cuts(pos, s.Value.End)
}

// fromStub reports whether a site of a skeleton takes a key on its path,
// or a name it reports, from a cut string.
func fromStub(s *Site) bool {
	for _, t := range []string{s.Path.String(), s.Tool, s.ToolCallID, s.Entry, s.CreatedAt, s.TextType, s.Media} {
		if strings.Contains(t, transcript.StubMark) {
			return true
		}
	}
	if s.RefParent != nil && strings.Contains(s.RefParent.String(), transcript.StubMark) {
		return true
	}
	return false
}

// artifact makes the artifact of hole h of site s, ready for Put: its
// bytes are in Data, in the line's scratch space, or written by Stream.
func (x *Externalizer) artifact(h hole, s *Site, big *BigLine) (Artifact, Form, error) {
	ctx := siteContext(s)
	a := Artifact{Site: s.Path.String(), Tool: s.Tool, ToolCallID: s.ToolCallID, Entry: s.Entry, ctx: ctx}
	if big != nil && big.cuts(h.v.Start, h.v.End) {
		p, d, size, desc, stream, err := big.bigPiece(h, ctx)
		if err != nil {
			return Artifact{}, "", err
		}
		a.Digest, a.Size, a.Media, a.Stream = d, int(size), p.media, stream
		a.kind, a.Summary = desc.Describe()
		return a, p.form, nil
	}
	e, sum := x.Payloads.find(h)
	if e != nil {
		return x.metAgain(a, h, e), e.form, nil
	}
	p := x.encode(h)
	a.Digest, a.Data, a.Size, a.Media = store.Sum(p.data), p.data, len(p.data), p.media
	x.Payloads.add(h, sum, a.Digest, p)
	a.kind, a.Summary = x.Summaries.Describe(a.Digest, ctx, func() (summary.Kind, string) {
		return summary.Of(p.data, p.media, ctx)
	})
	return a, p.form, nil
}

// encode is encodePiece into the line's scratch space, after the pieces
// of the line's other artifacts: they are stored only once the line's
// moves are known (see plan).
func (x *Externalizer) encode(h hole) piece {
	// A piece is never longer than its JSON.
	if cap(x.scratch)-len(x.scratch) < h.v.Len() {
		// The pieces in the old space stay there until they are stored.
		x.scratch = make([]byte, 0, 2*cap(x.scratch)+h.v.Len())
	}
	free := x.scratch[len(x.scratch):]
	p := encodePiece(free, h)
	if p.form != FormRaw && len(p.data) <= cap(free) {
		x.scratch = x.scratch[:len(x.scratch)+len(p.data)]
	}
	return p
}

// metAgain is artifact for hole h, whose payload the run has met before
// and made the artifact e: the payload is encoded again only if the store
// lacks the artifact (Put calls a.Stream) or its description in this
// context is not known.
func (x *Externalizer) metAgain(a Artifact, h hole, e *payloadEntry) Artifact {
	a.Digest, a.Size, a.Media = e.digest, e.size, e.media
	a.Stream = func(w io.Writer) error {
		_, err := w.Write(encodePiece(nil, h).data)
		return err
	}
	a.kind, a.Summary = x.Summaries.Describe(a.Digest, a.ctx, func() (summary.Kind, string) {
		return summary.Of(encodePiece(nil, h).data, e.media, a.ctx)
	})
	return a
}

// rawParts holds, for each artifact part of a rewritten line, the JSON it
// replaced, in the order of the line: identical parts of a long line's
// skeleton may stand for stubs with different bytes.
type rawParts map[part][][]byte

func (r rawParts) add(p part, raw []byte) { r[p] = append(r[p], raw) }

func (r rawParts) take(p part) ([]byte, bool) {
	q := r[p]
	if len(q) == 0 {
		return nil, false
	}
	r[p] = q[1:]
	return q[0], true
}

// checkRewrite proves that the marker of a rewritten line rebuilds the
// original, whose SHA-256 it records, from the JSON each artifact part
// stands for: the rebuilt bytes are compared with the original's. That the artifacts themselves give back that JSON was checked
// when their form was chosen (encodePiece re-encodes before it picks a
// form), so the line restores exactly once its artifacts are stored.
func checkRewrite(line []byte, start int, original []byte, raws rawParts) error {
	changed, err := restoreTo(io.Discard, line, start, original, func(w io.Writer, p part, at string) error {
		raw, ok := raws.take(p)
		if !ok {
			return fmt.Errorf("%w: %s names an artifact the rewrite did not make", ErrBadMarker, at)
		}
		_, err := w.Write(raw)
		return err
	})
	if err == nil && !changed {
		err = fmt.Errorf("%w: the rewritten line has no marker", ErrBadMarker)
	}
	if err != nil {
		return fmt.Errorf("internal error: the rewritten line would not restore: %w", err)
	}
	return nil
}

// insertionPoint returns where a new last member of obj goes and the
// separator it needs.
func insertionPoint(obj transcript.Value) (int, string) {
	at, sep := obj.Start+1, ""
	obj.Members(func(m transcript.Member) bool {
		at, sep = m.Value.End, ","
		return true
	})
	return at, sep
}

// artifactRef adds the seed design's artifactRef and artifactVersion to the
// details of the object at s.RefParent, creating details when it is
// missing. Details that are not an object, or that already hold an
// artifactRef, are left alone.
func (x *Externalizer) artifactRef(root transcript.Value, s *Site, a Artifact) (splice, edit, bool) {
	parent, ok := s.RefParent.Resolve(root)
	if !ok || parent.Kind() != transcript.Object {
		return splice{}, edit{}, false
	}
	id := a.Digest.String()
	var ref []byte
	ref = append(ref, `{"id":"`...)
	ref = append(ref, id...)
	ref = append(ref, `","type":"tool-result","toolName":`...)
	ref = transcript.AppendEncoded(ref, []byte(s.Tool), transcript.StyleJS)
	ref = append(ref, `,"createdAt":`...)
	ref = transcript.AppendEncoded(ref, []byte(s.CreatedAt), transcript.StyleJS)
	ref = append(ref, `,"sizeBytes":`...)
	ref = strconv.AppendInt(ref, int64(a.Size), 10)
	ref = append(ref, `,"summary":`...)
	ref = transcript.AppendEncoded(ref, []byte(a.Summary), transcript.StyleJS)
	ref = append(ref, `,"path":`...)
	ref = transcript.AppendEncoded(ref, []byte(x.PathFor(a.Digest)), transcript.StyleJS)
	ref = append(ref, `,"hash":"sha256:`...)
	ref = append(ref, id...)
	ref = append(ref, `"}`...)
	members := append(append([]byte(`"artifactRef":`), ref...), `,"artifactVersion":1`...)

	details, has := parent.Get("details")
	if !has {
		at, sep := insertionPoint(parent)
		body := append(append([]byte(sep+`"details":{`), members...), '}')
		return splice{at, at, body}, edit{At: s.RefParent.String(), Added: []string{"details"}}, true
	}
	if details.Kind() != transcript.Object {
		return splice{}, edit{}, false
	}
	if _, taken := details.Get("artifactRef"); taken {
		return splice{}, edit{}, false
	}
	if _, taken := details.Get("artifactVersion"); taken {
		return splice{}, edit{}, false
	}
	at, sep := insertionPoint(details)
	return splice{at, at, append([]byte(sep), members...)},
		edit{At: s.RefParent.Key("details").String(), Added: []string{"artifactRef", "artifactVersion"}}, true
}

// apply returns text with the splices applied; they must not overlap.
func apply(text []byte, splices []splice) []byte {
	sort.SliceStable(splices, func(i, j int) bool { return splices[i].start < splices[j].start })
	size := len(text)
	for _, s := range splices {
		size += len(s.with) - (s.end - s.start)
	}
	out := make([]byte, 0, size)
	pos := 0
	for _, s := range splices {
		out = append(out, text[pos:s.start]...)
		out = append(out, s.with...)
		pos = s.end
	}
	return append(out, text[pos:]...)
}

// largest returns the largest artifact and the others, in order.
func largest(arts []Artifact) (Artifact, []Artifact) {
	best := 0
	for i, a := range arts {
		if a.Size > arts[best].Size {
			best = i
		}
	}
	others := make([]Artifact, 0, len(arts)-1)
	others = append(others, arts[:best]...)
	return arts[best], append(others, arts[best+1:]...)
}

// placeholder returns the JSON that stands in for site s: a hint of the
// site's own JSON type.
func (x *Externalizer) placeholder(s *Site, siteLen int64, main Artifact, others []Artifact) []byte {
	id := main.Digest.String()
	path := x.PathFor(main.Digest)
	var hint string
	// An image is shown to the model again by the agent's own tool.
	view := ""
	if s.ViewTool != "" && strings.HasPrefix(main.Media, "image/") {
		view = fmt.Sprintf("call %s with %s %s to see it again", s.ViewTool, s.ViewArg, path)
	}
	switch {
	case s.Shape == format.ShapeToolResult:
		var b strings.Builder
		b.WriteString("[Tool result omitted: stored as artifact]\n")
		b.WriteString("id: " + id + "\n")
		if s.Tool != "" {
			b.WriteString("tool: " + display.Line(s.Tool, 80) + "\n")
		}
		b.WriteString("size: " + strconv.Itoa(main.Size) + " bytes\n")
		b.WriteString("summary: " + main.Summary + "\n")
		b.WriteString("path: " + path)
		if view != "" {
			b.WriteString("\nimage: " + view)
		}
		for _, o := range others {
			fmt.Fprintf(&b, "\nalso: %s (%d bytes, %s) at %s", o.Digest, o.Size, o.Media, x.PathFor(o.Digest))
		}
		hint = b.String()
	case view != "" && len(others) == 0:
		hint = fmt.Sprintf("[Image omitted: stored as artifact %s (%s, %d bytes); %s]", id, main.Media, main.Size, view)
	case len(others) > 0:
		hint = fmt.Sprintf("[Omitted %d bytes in %d artifacts, the largest %s at %s]", siteLen, len(others)+1, id, path)
	default:
		hint = fmt.Sprintf("[Omitted %d bytes (%s): artifact %s at %s]", main.Size, main.Media, id, path)
	}
	text := transcript.AppendEncoded(nil, []byte(hint), transcript.StyleJS)
	if s.Head > 0 && s.Value.Kind() == transcript.String {
		// The head stays as it was, the hint follows it inside the string.
		return append(append([]byte{}, s.Value.Raw()[:1+s.Head]...), text[1:]...)
	}
	textType := s.TextType
	if textType == "" {
		textType = "text"
	}
	textBlock := append(append([]byte(`{"type":"`+textType+`","text":`), text...), '}')
	// A part of the Gemini API and a styled token have no "type".
	bareText := append(append([]byte(`{"text":`), text...), '}')
	switch s.Value.Kind() {
	case transcript.Array:
		switch s.Shape {
		case format.ShapeToolResult:
			return append(append([]byte{'['}, textBlock...), ']')
		case format.ShapeLines:
			return append(append([]byte("[["), bareText...), "]]"...)
		}
		return append(append([]byte{'['}, text...), ']')
	case transcript.Object:
		switch s.Shape {
		case format.ShapePlain:
			return append(append([]byte(`{"artifact":`), text...), '}')
		case format.ShapeTextPart:
			return bareText
		}
		return textBlock
	}
	return text
}

// maxToolName is the code points of a tool name a summary keeps.
const maxToolName = 128

// addCall remembers call c, with its main argument for the summaries of
// its results.
func (x *Externalizer) addCall(c Call) { x.calls.Add(c.ID, c.Name, c.MainArgument()) }

// fillCall gives site s the name and main argument of the call it
// answers, where the site does not name them itself.
func (x *Externalizer) fillCall(s *Site) {
	if s.ToolCallID == "" || (s.Tool != "" && s.Input != "") {
		return
	}
	c, ok := x.calls.Get(s.ToolCallID)
	if !ok {
		return
	}
	if s.Tool == "" {
		s.Tool = display.Line(c.Name, maxToolName)
	}
	if s.Input == "" {
		s.Input = c.Input
	}
}
