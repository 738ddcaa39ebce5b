package externalizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sort"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
	"github.com/transcript-tool/transcript-tool/transcript/ahead"
)

// BigLine is a line too long to hold in memory, known by its skeleton
// (see transcript.BuildSkeleton) and read back from Src where the skeleton
// cut it.
type BigLine struct {
	*transcript.Skeleton
	// Src reads the line's bytes, offset 0 being its first byte.
	Src io.ReaderAt
	// met are the holes read so far, for another of the same bytes.
	met []bigMet
}

// bigMet is a hole of a BigLine read by bigPiece, and what it found.
type bigMet struct {
	h      hole
	ctx    summary.Context
	p      piece
	sum    store.Digest
	size   int64
	desc   *summary.Describer
	stream func(io.Writer) error
}

// ErrNeedWhole is returned by RewriteBig for a long line it cannot rewrite
// from its skeleton: one that carries a marker (telling whether it is
// migrated means restoring it) or whose rewrite would keep a cut string in
// a marker. The caller rewrites it whole with Rewrite, or keeps it.
var ErrNeedWhole = errors.New("the line must be read whole")

// cuts reports whether the skeleton span [a, e) holds padding of a stub,
// bytes that stand for others of the line.
func (b *BigLine) cuts(a, e int) bool {
	i := sort.Search(len(b.Stubs), func(i int) bool { return b.Stubs[i].End-1 > a })
	return i < len(b.Stubs) && b.Stubs[i].Start+b.Stubs[i].Kept < e
}

// section reads the line's bytes that the skeleton span [a, e) stands for.
func (b *BigLine) section(a, e int) *io.SectionReader {
	from, to := b.Span(a, e)
	return io.NewSectionReader(b.Src, from, to-from)
}

// writeLine writes the line to w with splices applied to its skeleton,
// the cut strings outside them read back from Src.
func (b *BigLine) writeLine(w io.Writer, splices []splice) error {
	sort.SliceStable(splices, func(i, j int) bool { return splices[i].start < splices[j].start })
	pos, k := 0, 0
	for _, s := range b.Stubs {
		for k < len(splices) && splices[k].start < s.End {
			sp := splices[k]
			if err := b.copyTo(w, pos, sp.start); err != nil {
				return err
			}
			if _, err := w.Write(sp.with); err != nil {
				return err
			}
			pos = sp.end
			k++
		}
		if s.Start < pos {
			continue // inside a splice: replaced
		}
		if err := b.copyTo(w, pos, s.End); err != nil {
			return err
		}
		pos = s.End
	}
	for ; k < len(splices); k++ {
		if err := b.copyTo(w, pos, splices[k].start); err != nil {
			return err
		}
		if _, err := w.Write(splices[k].with); err != nil {
			return err
		}
		pos = splices[k].end
	}
	return b.copyTo(w, pos, len(b.Text))
}

// copyTo copies the line's bytes for the skeleton span [a, e), which
// holds whole stubs or none, to w.
func (b *BigLine) copyTo(w io.Writer, a, e int) error {
	if !b.cuts(a, e) {
		_, err := w.Write(b.Text[a:e])
		return err
	}
	_, err := io.Copy(w, b.section(a, e))
	return err
}

// WriteOriginal copies the whole line to w.
func (b *BigLine) WriteOriginal(w io.Writer) error {
	_, err := io.Copy(w, io.NewSectionReader(b.Src, 0, b.Len))
	return err
}

// RewriteBig is Rewrite for a line known by its skeleton: it writes the
// line, rewritten or as it was, to w, and reports its artifacts, which
// were passed to Put with Data nil and Stream set. It holds the skeleton
// and a few buffers, never the line nor a payload. On ErrNeedWhole nothing
// was stored or written.
func (x *Externalizer) RewriteBig(w io.Writer, b *BigLine, start int) (Result, error) {
	res, splices, err := x.rewrite(b.Text, start, b)
	if err != nil {
		return Result{}, err
	}
	if splices == nil {
		return Result{}, b.WriteOriginal(w)
	}
	return res, b.writeLine(w, splices)
}

// bigPiece is encodePiece for a hole that holds cut strings: the form,
// digest, size, media type and Describer of its artifact, found by reading
// the hole's bytes once, and a function that writes the artifact by
// reading them again.
func (b *BigLine) bigPiece(h hole, ctx summary.Context) (piece, store.Digest, int64, *summary.Describer, func(io.Writer) error, error) {
	sec := b.section(h.v.Start, h.v.End)
	// A payload a line holds twice (pi's output, as content and as
	// details) is found the same by comparing its bytes, not by decoding,
	// hashing and describing them again.
	for _, m := range b.met {
		if m.ctx != ctx || m.h.image != h.image || m.h.mime != h.mime || m.h.bare != h.bare || m.h.body != h.body {
			continue
		}
		same, err := sameBytes(b.section(m.h.v.Start, m.h.v.End), sec)
		if err != nil {
			return piece{}, store.Digest{}, 0, nil, nil, fmt.Errorf("read the line back: %w", err)
		}
		if same {
			return m.p, m.sum, m.size, m.desc, m.stream, nil
		}
	}
	p, sum, size, desc, stream, err := b.readPiece(h, sec, ctx)
	if err == nil {
		b.met = append(b.met, bigMet{h: h, ctx: ctx, p: p, sum: sum, size: size, desc: desc, stream: stream})
	}
	return p, sum, size, desc, stream, err
}

// sameBytes reports whether a and b hold the same bytes.
func sameBytes(a, b *io.SectionReader) (bool, error) {
	if a.Size() != b.Size() {
		return false, nil
	}
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for off := int64(0); off < a.Size(); off += int64(len(bufA)) {
		n := int(min(int64(len(bufA)), a.Size()-off))
		if k, err := a.ReadAt(bufA[:n], off); k < n {
			return false, err
		}
		if k, err := b.ReadAt(bufB[:n], off); k < n {
			return false, err
		}
		if !bytes.Equal(bufA[:n], bufB[:n]) {
			return false, nil
		}
	}
	return true, nil
}

// readPiece is bigPiece for a hole not met before in the line, whose
// bytes sec reads.
func (b *BigLine) readPiece(h hole, sec *io.SectionReader, ctx summary.Context) (piece, store.Digest, int64, *summary.Describer, func(io.Writer) error, error) {
	image := !h.body && (h.bare || (h.image && h.v.Kind() == transcript.String))
	text := h.body || (h.v.Kind() == transcript.String && !h.bare)
	c := newCandidates(image, text, h.bare, ctx)
	defer c.close()
	// A string's body is text without its quotes: the text sink, which
	// reads literals, is given them, the raw JSON is not.
	quote := func(w io.Writer) {
		if h.body {
			w.Write([]byte{'"'})
		}
	}
	buf := make([]byte, 256<<10)
	read := func(w io.Writer) error {
		if _, err := io.CopyBuffer(w, io.NewSectionReader(sec, 0, sec.Size()), buf); err != nil {
			return fmt.Errorf("read the line back: %w", err)
		}
		return nil
	}
	quote(c.text)
	if err := read(c); err != nil {
		return piece{}, store.Digest{}, 0, nil, nil, err
	}
	quote(c.text)
	form, sum, size, desc, err := c.result(h.mime, read)
	if err != nil {
		return piece{}, store.Digest{}, 0, nil, nil, err
	}
	if h.body {
		form = map[Form]Form{FormJS: FormJSBare, FormASCII: FormASCIIBare, FormRaw: FormRaw}[form]
	}
	p := piece{form: form, media: desc.Media()}
	stream := func(w io.Writer) error {
		var dst io.Writer = w
		var flush func() error
		switch form {
		case FormBase64, FormBase64Bare:
			d := &base64Sink{w: w, quoted: form == FormBase64}
			dst, flush = d, d.close
		case FormJS, FormASCII, FormJSBare, FormASCIIBare:
			// The text is written (hashed, stored) on another core
			// while the next piece is decoded.
			aw := ahead.NewWriter(w)
			defer aw.Close()
			t := &textSink{w: aw}
			dst = t
			flush = func() error {
				if err := t.close(); err != nil {
					return err
				}
				return aw.Close()
			}
			quote(t)
		}
		if _, err := io.CopyBuffer(dst, io.NewSectionReader(sec, 0, sec.Size()), buf); err != nil {
			return err
		}
		if form == FormJSBare || form == FormASCIIBare {
			quote(dst)
		}
		if flush != nil {
			return flush()
		}
		return nil
	}
	return p, sum, size, desc, stream, nil
}

// candidates reads a hole's JSON bytes once and keeps, for every form the
// artifact could take, whether it still can and its digest, size and
// description. The JSON itself, the form taken when no other can be, is
// only hashed and described when it is the only one, or after the
// others failed: most long strings are text, and each byte is then seen
// by one describer and one hash.
type candidates struct {
	raw  *formSink // nil until the JSON is known to be the form
	text *textSink
	b64  *base64Sink
	// styles the text still encodes back to, in the order of
	// transcript.Styles.
	styles []transcript.Style
	// textSum hashes and describes the text on another core while the
	// next piece is decoded.
	textSum *ahead.Writer
	ctx     summary.Context
}

type formSink struct {
	h    hash.Hash
	n    int64
	desc *summary.Describer
	// head holds the first sniffLen bytes, which tell a decoded image's
	// media type.
	head []byte
}

// sniffLen is how many bytes http.DetectContentType looks at.
const sniffLen = 512

func (f *formSink) Write(p []byte) (int, error) {
	f.h.Write(p)
	f.n += int64(len(p))
	f.desc.Write(p)
	if k := min(sniffLen-len(f.head), len(p)); k > 0 {
		f.head = append(f.head, p[:k]...)
	}
	return len(p), nil
}

func newFormSink(media string, ctx summary.Context) *formSink {
	return &formSink{h: sha256.New(), desc: summary.NewDescriberIn(media, ctx)}
}

// newCandidates returns the candidates for a hole, their descriptions
// told ctx.
func newCandidates(image, text, bare bool, ctx summary.Context) *candidates {
	c := &candidates{ctx: ctx}
	if !image && !text {
		c.raw = newFormSink(MediaJSON, ctx)
	}
	if image {
		s := newFormSink("", ctx)
		c.b64 = &base64Sink{w: s, quoted: !bare, check: true, sink: s}
	}
	if text {
		s := newFormSink(MediaText, ctx)
		c.textSum = ahead.NewWriter(s)
		c.text = &textSink{w: c.textSum, check: true, sink: s}
		c.styles = append([]transcript.Style(nil), transcript.Styles...)
		c.text.styles = &c.styles
	}
	return c
}

func (c *candidates) Write(p []byte) (int, error) {
	if c.raw != nil {
		c.raw.Write(p)
	}
	if c.b64 != nil && c.b64.ok() {
		c.b64.Write(p)
	}
	if c.text != nil && c.text.ok() {
		c.text.Write(p)
	}
	return len(p), nil
}

// close waits for the text to be hashed and ends the goroutine that
// hashes it.
func (c *candidates) close() {
	if c.textSum != nil {
		c.textSum.Close()
	}
}

// result picks the form as encodePiece does: image data as its decoded
// bytes, then text, then the JSON itself, which read writes again when it
// was not followed.
func (c *candidates) result(declared string, read func(io.Writer) error) (Form, store.Digest, int64, *summary.Describer, error) {
	if c.text != nil {
		// The last piece, then every piece hashed.
		c.text.close()
		c.close()
	}
	if c.b64 != nil && c.b64.close() == nil && c.b64.ok() && c.b64.sink.n > 0 {
		s := c.b64.sink
		s.desc.SetMedia(imageMedia(declared, s.head))
		form := FormBase64
		if !c.b64.quoted {
			form = FormBase64Bare
		}
		return form, store.Digest(s.h.Sum(nil)), s.n, s.desc, nil
	}
	if c.text != nil && c.text.close() == nil && c.text.ok() && len(c.styles) > 0 {
		s := c.text.sink
		form := FormJS
		if c.styles[0] == transcript.StyleASCII {
			form = FormASCII
		}
		return form, store.Digest(s.h.Sum(nil)), s.n, s.desc, nil
	}
	if c.raw == nil {
		c.raw = newFormSink(MediaJSON, c.ctx)
		if err := read(c.raw); err != nil {
			return FormRaw, store.Digest{}, 0, nil, err
		}
	}
	return FormRaw, store.Digest(c.raw.h.Sum(nil)), c.raw.n, c.raw.desc, nil
}

// base64Sink decodes a JSON string of standard padded base64 (or, not
// quoted, the base64 alone) written to it piece by piece and writes the
// bytes to w. With check set it only records, instead of failing, that
// the input is not base64 that encodes back exactly.
type base64Sink struct {
	w      io.Writer
	quoted bool
	check  bool
	sink   *formSink
	carry  []byte
	seen   int64 // input bytes taken in
	bad    bool
	done   bool
	out    []byte
}

func (s *base64Sink) ok() bool { return !s.bad }

func (s *base64Sink) Write(p []byte) (int, error) {
	n := len(p)
	if s.quoted && s.seen == 0 && len(p) > 0 {
		if p[0] != '"' {
			s.bad = true
			return n, nil
		}
		p = p[1:]
		s.seen++
	}
	s.seen += int64(len(p))
	s.carry = append(s.carry, p...)
	// Keep the last 4-byte group (and a closing quote) for close: only
	// the last group may hold padding.
	keep := 5
	if len(s.carry) <= keep {
		return n, nil
	}
	m := (len(s.carry) - keep) / 4 * 4
	if err := s.decode(s.carry[:m]); err != nil {
		return n, err
	}
	s.carry = append(s.carry[:0], s.carry[m:]...)
	return n, nil
}

func (s *base64Sink) decode(group []byte) error {
	if s.bad {
		return nil
	}
	s.out = s.out[:0]
	out, err := base64.StdEncoding.AppendDecode(s.out, group)
	s.out = out
	if err != nil || !bytes.Equal(base64.StdEncoding.AppendEncode(nil, out), group) {
		s.bad = true
		if !s.check {
			return fmt.Errorf("%w: image data changed while it was read", ErrBadMarker)
		}
		return nil
	}
	_, werr := s.w.Write(out)
	return werr
}

func (s *base64Sink) close() error {
	if s.done {
		return nil
	}
	s.done = true
	rest := s.carry
	if s.quoted {
		if len(rest) == 0 || rest[len(rest)-1] != '"' {
			s.bad = true
			return nil
		}
		rest = rest[:len(rest)-1]
	}
	if len(rest)%4 != 0 {
		s.bad = true
		return nil
	}
	return s.decode(rest)
}

// textSink decodes a JSON string literal written to it piece by piece and
// writes its UTF-8 text to w. With check set it narrows styles to those
// that encode the text back to exactly the literal, and records, instead
// of failing, a literal no style gives back.
type textSink struct {
	w      io.Writer
	check  bool
	sink   *formSink
	styles *[]transcript.Style
	carry  []byte
	out    []byte
	first  bool
	bad    bool
	done   bool
}

func (t *textSink) ok() bool { return !t.bad }

func (t *textSink) Write(p []byte) (int, error) {
	n := len(p)
	if t.bad || n == 0 {
		return n, nil
	}
	if !t.first {
		if p[0] != '"' {
			t.bad = true
			return n, nil
		}
		p = p[1:]
		t.first = true
	}
	// Pieces of at least 64 KiB, leaving room for the closing quote and
	// a cut escape.
	if len(t.carry)+len(p) < 64<<10 {
		t.carry = append(t.carry, p...)
		return n, nil
	}
	if len(t.carry) > 0 {
		// What was carried and p's first bytes, so that the cut falls
		// in p: the rest of p is then decoded where it is, not copied.
		k := min(len(p), 64)
		t.carry = append(t.carry, p[:k]...)
		rest, err := t.cut(t.carry)
		if err != nil || len(rest) > k || len(p)-k+len(rest) < 64 {
			t.carry = append(append(t.carry[:0], rest...), p[k:]...)
			return n, err
		}
		p = p[k-len(rest):]
	}
	rest, err := t.cut(p)
	t.carry = append(t.carry[:0], rest...)
	return n, err
}

// cut decodes s, some 64 KiB or more of the literal's inside, up to a cut
// transcript.TextCut finds in all but its last 16 bytes, and returns the
// rest.
func (t *textSink) cut(s []byte) ([]byte, error) {
	cut := transcript.TextCut(s[:len(s)-16])
	return s[cut:], t.piece(s[:cut])
}

// piece decodes one piece of the literal's inside, cut where
// transcript.TextCut says, checking in the same pass which styles encode
// it back.
func (t *textSink) piece(inner []byte) error {
	if t.bad || len(inner) == 0 {
		return nil
	}
	text, set := transcript.AppendTextStyles(t.out[:0], inner)
	t.out = text
	if set != 0 && t.styles != nil {
		kept := (*t.styles)[:0]
		for _, s := range *t.styles {
			if set.Has(s) {
				kept = append(kept, s)
			}
		}
		*t.styles = kept
		if len(kept) == 0 {
			set = 0
		}
	}
	if set == 0 {
		t.bad = true
		if !t.check {
			return fmt.Errorf("%w: text changed while it was read", ErrBadMarker)
		}
		return nil
	}
	_, werr := t.w.Write(text)
	return werr
}

func (t *textSink) close() error {
	if t.done {
		return nil
	}
	t.done = true
	if !t.first || len(t.carry) == 0 || t.carry[len(t.carry)-1] != '"' {
		t.bad = true
		return nil
	}
	return t.piece(t.carry[:len(t.carry)-1])
}

// patchSum replaces, in a marker encoded with the skeleton's SHA-256, that
// hash with the line's.
func patchSum(mk []byte, skeleton, line [32]byte) ([]byte, error) {
	old := []byte(hex.EncodeToString(skeleton[:]))
	i := bytes.Index(mk, old)
	if i < 0 {
		return nil, errors.New("internal error: the marker lacks its hash")
	}
	copy(mk[i:], hex.EncodeToString(line[:]))
	return mk, nil
}
