package externalizer

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// move is what moving one site out of its line makes: the artifacts, the
// placeholder that stands for them, the marker's edit that restores them,
// and the bytes all that saves the line.
type move struct {
	site int // index in the line's sites
	// arts are the site's artifacts, their Data or Stream set until they
	// are stored, and named the marker parts that name them, with the
	// JSON each stands for.
	arts        []Artifact
	named       []namedPart
	placeholder splice
	edit        []byte // encoded
	// ref is the artifactRef a pi tool result gains beside its placeholder.
	ref *refAdd
	// gain is the bytes the line loses: the site's length less its
	// placeholder's, its edit's and the comma before the edit (and its
	// artifactRef's).
	gain int64
}

// namedPart is a marker part that names an artifact, and the JSON the
// artifact stands for.
type namedPart struct {
	part
	raw []byte
}

// refAdd is the artifactRef added to an entry and the marker's edit that
// takes it away.
type refAdd struct {
	splice
	edit []byte
}

// plan returns the moves of the sites of entry root, at least the
// threshold, that shorten its line: a placeholder and the marker's edit
// for it take a few hundred bytes, more than a payload under a low
// --threshold. A line without a marker (paid false) must also pay for the
// one it would gain: its sites move only if together they save more. No
// artifact is stored; a move's are in the line's scratch space, until
// plan is called again.
//
// With look set, plan only tells which sites move: a site that moves
// whatever its artifacts turn out to be (see standIn) is not decoded or
// hashed, and its move has no artifacts.
func (x *Externalizer) plan(root transcript.Value, sites []Site, big *BigLine, paid, look bool) ([]move, error) {
	holes, err := x.cut(sites, big)
	if err != nil {
		return nil, err
	}
	x.scratch = x.scratch[:0]
	var (
		moves []move
		gain  int64
		ref   = true // the artifactRef is still to be taken
		cost  = markerCost(root)
	)
	for i := range sites {
		if holes[i] == nil {
			continue
		}
		s := &sites[i]
		var m move
		if look {
			m, err = x.measure(root, s, holes[i], big, ref, standIn(siteLength(s, big)))
		}
		if !look || m.gain <= cost {
			m, err = x.measure(root, s, holes[i], big, ref, func(h hole) (Artifact, Form, error) { return x.artifact(h, s, big) })
		}
		if err != nil {
			return nil, err
		}
		if m.gain <= 0 {
			continue
		}
		m.site = i
		ref = ref && s.RefParent == nil
		moves = append(moves, m)
		gain += m.gain
	}
	if !paid && gain <= cost {
		return nil, nil
	}
	return moves, nil
}

// cut gives sites the tool names of the calls they answer and returns
// their holes: none for a site of a type no placeholder keeps.
func (x *Externalizer) cut(sites []Site, big *BigLine) ([][]hole, error) {
	holes := make([][]hole, len(sites))
	for i := range sites {
		s := &sites[i]
		x.fillCall(s)
		switch s.Value.Kind() {
		case transcript.String, transcript.Array, transcript.Object:
		default:
			continue // no placeholder keeps the type of a number or literal
		}
		holes[i] = cutSite(s.Value, s.Head, x.Threshold, s.Image, s.Media, big)
		if len(holes[i]) != 1 || !holes[i][0].body {
			s.Head = 0 // stored whole, as a string cut out of a long line is
		}
		if big != nil && !bigSiteOK(big, s, holes[i]) {
			// Nothing is stored for a line left to the whole rewrite.
			return nil, ErrNeedWhole
		}
	}
	return holes, nil
}

// siteLength is the length of site s in its line, of which big, when set,
// is the skeleton.
func siteLength(s *Site, big *BigLine) int64 {
	if big == nil {
		return int64(s.Value.Len())
	}
	from, to := big.Span(s.Value.Start, s.Value.End)
	return to - from
}

// standIn returns, for a site of siteLen bytes, artifacts that make a
// placeholder, an edit and an artifactRef at least as long as any real
// artifacts would: the size is the site's (an artifact is never longer
// than its JSON), the summary and media type as long as they can be in
// characters that escape to six bytes each, the form the longest, the
// digest of fixed length (as the path PathFor makes of it).
func standIn(siteLen int64) func(hole) (Artifact, Form, error) {
	a := Artifact{Size: int(siteLen), Media: strings.Repeat("\x01", 63), Summary: strings.Repeat("\x01", summary.Max)}
	return func(hole) (Artifact, Form, error) { return a, FormBase64Bare, nil }
}

// measure makes the move of site s, cut into holes, whose artifacts
// artifact makes, with its artifactRef if ref is set and the site has one.
func (x *Externalizer) measure(root transcript.Value, s *Site, holes []hole, big *BigLine, ref bool,
	artifact func(hole) (Artifact, Form, error)) (move, error) {
	text := root.Buf
	m := move{arts: make([]Artifact, 0, len(holes)), named: make([]namedPart, 0, len(holes))}
	parts := make([]part, 0, 2*len(holes)+1)
	pos := s.Value.Start
	for _, h := range holes {
		if h.v.Start > pos {
			parts = append(parts, part{Lit: string(text[pos:h.v.Start])})
		}
		a, form, err := artifact(h)
		if err != nil {
			return move{}, err
		}
		p := part{ID: a.Digest.String(), Form: form}
		parts = append(parts, p)
		m.arts, m.named = append(m.arts, a), append(m.named, namedPart{p, text[h.v.Start:h.v.End]})
		pos = h.v.End
	}
	if pos < s.Value.End {
		parts = append(parts, part{Lit: string(text[pos:s.Value.End])})
	}
	siteLen := siteLength(s, big)
	main, others := largest(m.arts)
	m.placeholder = splice{s.Value.Start, s.Value.End, x.placeholder(s, siteLen, main, others)}
	var err error
	if m.edit, err = markerAPI.Marshal(edit{At: s.Path.String(), Dup: s.Dup, Parts: parts}); err != nil {
		return move{}, fmt.Errorf("encode marker: %w", err)
	}
	m.gain = siteLen - int64(len(m.placeholder.with)+len(m.edit)+1)
	if ref && s.RefParent != nil {
		if sp, e, ok := x.artifactRef(root, s, main); ok {
			enc, err := markerAPI.Marshal(e)
			if err != nil {
				return move{}, fmt.Errorf("encode marker: %w", err)
			}
			m.ref = &refAdd{sp, enc}
			m.gain -= int64(len(sp.with) + len(enc) + 1)
		}
	}
	return m, nil
}

// appendMarker appends to b the marker of a line whose SHA-256 is sum,
// made of edits, each encoded: the marker readMarker reads.
func appendMarker(b []byte, sum [32]byte, edits [][]byte) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, MarkerVersion, 10)
	b = append(b, `,"sha256":"`...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, `","edits":[`...)
	for i, e := range edits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// markerCost is the bytes a marker adds to entry root besides its edits
// and the commas between them (a move counts one before its edit).
func markerCost(root transcript.Value) int64 {
	_, sep := insertionPoint(root)
	return int64(len(sep)+len(markerKeyQuoted)+len(":")+emptyMarker) - 1
}

// emptyMarker is the length of a marker without edits.
var emptyMarker = len(appendMarker(nil, [32]byte{}, nil))

// markerLen is the length of the marker appendMarker makes of edits.
func markerLen(edits [][]byte) int {
	n := emptyMarker + max(len(edits)-1, 0) // the commas
	for _, e := range edits {
		n += len(e)
	}
	return n
}

// Moves reports which of sites, payload sites that x.Format.Sites found
// at the threshold in entry root (a skeleton's, with big), Rewrite would
// move out of their line: those whose moving shortens the line, if they
// save more than the marker the line would gain. Of a line that already
// has a marker, which Rewrite keeps as it is, it reports those that a
// migration would have moved with the others. Nothing is stored, and a
// payload far larger than any placeholder is not even read: stand-ins
// for its artifacts measure it (see standIn).
//
// Like Rewrite, it must be given every line of a transcript in order,
// with sites or none: a line's tool calls name the results of the lines
// after it, and so shape their placeholders.
func (x *Externalizer) Moves(root transcript.Value, sites []Site, big *BigLine) ([]bool, error) {
	if len(sites) > 0 || format.MayCall(x.Format, root.Raw()) {
		x.Format.Calls(root, x.addCall)
	}
	if len(sites) == 0 {
		return nil, nil
	}
	_, paid := findMarker(root)
	moves, err := x.plan(root, slices.Clone(sites), big, paid, true)
	if err != nil {
		return nil, err
	}
	moved := make([]bool, len(sites))
	for _, m := range moves {
		moved[m.site] = true
	}
	return moved, nil
}
