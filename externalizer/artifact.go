package externalizer

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/count"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Form is how an artifact's bytes turn back into the JSON bytes they came
// from.
type Form string

const (
	// FormJS and FormASCII: the artifact is UTF-8 text, encoded back as a
	// JSON string in that transcript.Style.
	FormJS    Form = "js"
	FormASCII Form = "ascii"
	// FormBase64: the artifact is decoded bytes, encoded back as a JSON
	// string of standard padded base64.
	FormBase64 Form = "base64"
	// FormBase64Bare: the same without quotes, for the data of a
	// data: URL, whose "data:image/png;base64," prefix stays literal.
	FormBase64Bare Form = "base64-bare"
	// FormJSBare and FormASCIIBare: FormJS and FormASCII without quotes,
	// for the body of a string whose head stays inline (Site.Head).
	FormJSBare    Form = "js-bare"
	FormASCIIBare Form = "ascii-bare"
	// FormRaw: the artifact is the JSON bytes themselves.
	FormRaw Form = "raw"
)

// Kind names, for people, what an artifact in form f holds: "text",
// "image" (decoded base64, an image as a rule) or "JSON"; "" for a form
// this version does not know.
func (f Form) Kind() string {
	switch f {
	case FormJS, FormASCII, FormJSBare, FormASCIIBare:
		return "text"
	case FormBase64, FormBase64Bare:
		return "image"
	case FormRaw:
		return "JSON"
	}
	return ""
}

// Media types of artifacts other than images, the ones package summary
// describes them by.
const (
	MediaText = summary.MediaText
	MediaJSON = summary.MediaJSON
)

// hole is a value inside a site that becomes an artifact of its own.
type hole struct {
	v     transcript.Value
	image bool   // base64 data of an image block
	mime  string // media type declared beside image data
	// bare marks v as the inside of a string, without quotes: the base64
	// data of a data: URL, checked to decode exactly.
	bare bool
	// body marks v as the inside of a string after the head its site
	// keeps inline (Site.Head), up to the closing quote: text.
	body bool
}

// piece is a hole's artifact: its bytes and how to put them back.
type piece struct {
	data  []byte
	form  Form
	media string
}

// encodePiece returns the artifact form of a hole: text when an escaping
// style restores it exactly, decoded base64 for image data, and raw JSON
// otherwise. Decoded bytes are appended to scratch.
func encodePiece(scratch []byte, h hole) piece {
	raw := h.v.Raw()
	if h.body {
		if p, ok := textPiece(scratch, raw, true); ok {
			return p
		}
		// Escapes no style writes: the JSON bytes, restored as they are.
		return piece{data: raw, form: FormRaw, media: MediaJSON}
	}
	if h.bare {
		data, _ := base64.StdEncoding.AppendDecode(scratch[:0], raw)
		return piece{data: data, form: FormBase64Bare, media: imageMedia(h.mime, data)}
	}
	if h.v.Kind() == transcript.String {
		inner := raw[1 : len(raw)-1]
		if h.image && len(inner)%4 == 0 {
			data, err := base64.StdEncoding.AppendDecode(scratch[:0], inner)
			if err == nil && len(data) > 0 && base64.StdEncoding.EncodedLen(len(data)) == len(inner) &&
				bytes.Equal(base64.StdEncoding.AppendEncode(nil, data), inner) {
				return piece{data: data, form: FormBase64, media: imageMedia(h.mime, data)}
			}
		}
		if p, ok := textPiece(scratch, inner, false); ok {
			return p
		}
	}
	return piece{data: raw, form: FormRaw, media: MediaJSON}
}

// textPiece returns the text of inner, the inside of a string literal,
// as an artifact in the form whose style encodes it back exactly, bare
// (without quotes) or not; ok is false when no style does.
func textPiece(scratch, inner []byte, bare bool) (piece, bool) {
	text, style, ok := transcript.AppendTextFormBare(scratch[:0], inner)
	if !ok {
		return piece{}, false
	}
	forms := [2][2]Form{{FormJS, FormASCII}, {FormJSBare, FormASCIIBare}}
	b, a := 0, 0
	if bare {
		b = 1
	}
	if style == transcript.StyleASCII {
		a = 1
	}
	return piece{data: text, form: forms[b][a], media: MediaText}, true
}

// dataURL returns the base64 data inside a string holding a data: URL
// ("data:image/png;base64,...") and the media type it declares, when the
// data decodes to bytes that encode back exactly.
func dataURL(v transcript.Value, big *BigLine) (transcript.Value, string, bool) {
	raw := v.Raw()
	if !bytes.HasPrefix(raw, []byte(`"data:`)) {
		return transcript.Value{}, "", false
	}
	const marker = ";base64,"
	i := bytes.Index(raw[:min(len(raw), 128)], []byte(marker))
	if i < 0 {
		return transcript.Value{}, "", false
	}
	in := transcript.Value{Buf: v.Buf, Start: v.Start + i + len(marker), End: v.End - 1}
	if big != nil && big.cuts(v.Start, v.End) {
		// Check the cut string's data as read back.
		var n count.Writer
		b := &base64Sink{w: &n, check: true}
		if _, err := io.Copy(b, big.section(in.Start, in.End)); err != nil || b.close() != nil || !b.ok() || n.N == 0 {
			return transcript.Value{}, "", false
		}
		return in, string(raw[len(`"data:`):i]), true
	}
	inner := raw[i+len(marker) : len(raw)-1]
	data, err := base64.StdEncoding.DecodeString(string(inner))
	if err != nil || len(data) == 0 || len(inner)%4 != 0 || base64.StdEncoding.EncodeToString(data) != string(inner) {
		return transcript.Value{}, "", false
	}
	return in, string(raw[len(`"data:`):i]), true
}

// writePiece writes the JSON bytes of an artifact in form f, read from r,
// to w, without holding the artifact in memory.
func writePiece(w io.Writer, r io.Reader, f Form) error {
	switch f {
	case FormRaw:
		_, err := io.Copy(w, r)
		return err
	case FormBase64, FormBase64Bare:
		quoted := f == FormBase64
		if quoted {
			if _, err := w.Write(quote); err != nil {
				return err
			}
		}
		enc := base64.NewEncoder(base64.StdEncoding, w)
		if _, err := io.Copy(enc, r); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
		if quoted {
			_, err := w.Write(quote)
			return err
		}
		return nil
	case FormJS, FormASCII:
		style, _ := transcript.ParseStyle(string(f))
		return writeText(w, r, style, true)
	case FormJSBare, FormASCIIBare:
		style, _ := transcript.ParseStyle(strings.TrimSuffix(string(f), "-bare"))
		return writeText(w, r, style, false)
	}
	return fmt.Errorf("%w: unknown artifact form %q", ErrBadMarker, f)
}

var quote = []byte{'"'}

// textBuffers are writeText's buffers, reused: a check or rehydrate of
// many small artifacts would otherwise allocate and clear 144 KiB for each
// reference it restores.
var textBuffers = sync.Pool{New: func() any { return &textBuffer{in: make([]byte, 64<<10), out: make([]byte, 0, 80<<10)} }}

type textBuffer struct{ in, out []byte }

// writeText writes the UTF-8 text read from r as a JSON string in style,
// between quotes when quoted is set.
func writeText(w io.Writer, r io.Reader, style transcript.Style, quoted bool) error {
	b := textBuffers.Get().(*textBuffer)
	defer textBuffers.Put(b)
	in, out := b.in, b.out[:0]
	defer func() { b.out = out[:0] }()
	if quoted {
		out = append(out, '"')
	}
	carry := 0
	for {
		n, err := io.ReadFull(r, in[carry:])
		n += carry
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		cut := n
		if !eof {
			cut = transcript.CompleteRunes(in[:n])
		}
		if !utf8.Valid(in[:cut]) {
			return fmt.Errorf("%w: a text artifact is not valid UTF-8", ErrBadMarker)
		}
		out = transcript.AppendEscaped(out, in[:cut], style)
		if eof && quoted {
			out = append(out, '"')
		}
		if _, werr := w.Write(out); werr != nil {
			return werr
		}
		if eof {
			return nil
		}
		carry = copy(in, in[cut:n])
		out = out[:0]
	}
}

func imageMedia(declared string, data []byte) string {
	if strings.HasPrefix(declared, "image/") && len(declared) < 64 && !strings.ContainsAny(declared, " \t\r\n;\"\\") {
		return declared
	}
	sniffed := http.DetectContentType(data)
	if strings.HasPrefix(sniffed, "image/") {
		return sniffed
	}
	return "application/octet-stream"
}

// holeMin is the size, as a share of the threshold, from which a string
// inside a site becomes an artifact of its own; the JSON around such strings
// stays in the marker.
func holeMin(threshold int) int {
	if m := threshold / 2; m > 64 {
		return m
	}
	return 64
}

// cutSite returns the holes of a site. Large strings become holes; the
// JSON between them stays literal. When that literal JSON is large or not
// valid UTF-8, the whole site is one hole.
func cutSite(site transcript.Value, head int, threshold int, image bool, mime string, big *BigLine) []hole {
	min := holeMin(threshold)
	// The head stays inline when the body after it is large enough to be
	// an artifact of its own (else the string goes whole), and, for a cut
	// string, when the stub's kept bytes hold it.
	if body := site.End - 1 - (site.Start + 1 + head); head > 0 && site.Kind() == transcript.String && body >= min &&
		(big == nil || !big.cuts(site.Start, site.Start+1+head)) {
		return []hole{{v: transcript.Value{Buf: site.Buf, Start: site.Start + 1 + head, End: site.End - 1}, body: true}}
	}
	var holes []hole
	var walk func(v transcript.Value, image bool, mime string)
	walk = func(v transcript.Value, image bool, mime string) {
		switch v.Kind() {
		case transcript.String:
			if v.Len() < min {
				break
			}
			if data, mime, ok := dataURL(v, big); ok {
				holes = append(holes, hole{v: data, mime: mime, bare: true})
				break
			}
			holes = append(holes, hole{v: v, image: image, mime: mime})
		case transcript.Object:
			// Image data: "data" of a pi image block ({"type":"image"}),
			// of a Claude source ({"type":"base64"}) or of an object that
			// declares an image type (Gemini's inlineData), or any
			// "base64" field. Only an exact re-encoding makes it a base64
			// artifact.
			t, _ := v.Get("type")
			declared := format.DeclaredImage(v)
			isImage := t.IsString("image") || t.IsString("base64") || declared != ""
			v.Members(func(m transcript.Member) bool {
				walk(m.Value, (isImage && m.Key.IsString("data")) || m.Key.IsString("base64"), declared)
				return true
			})
		case transcript.Array:
			v.Elems(func(_ int, e transcript.Value) bool {
				walk(e, false, "")
				return true
			})
		}
	}
	walk(site, image, mime)
	literal := site.Len()
	for _, h := range holes {
		literal -= h.v.Len()
	}
	ok := len(holes) > 0 && literal <= threshold
	for i := 0; ok && i <= len(holes); i++ {
		from, to := site.Start, site.End
		if i > 0 {
			from = holes[i-1].v.End
		}
		if i < len(holes) {
			to = holes[i].v.Start
		}
		ok = utf8.Valid(site.Buf[from:to])
	}
	if !ok {
		return []hole{{v: site}}
	}
	return holes
}
