package externalizer

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

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
	// FormRaw: the artifact is the JSON bytes themselves.
	FormRaw Form = "raw"
)

// Media types of artifacts other than images.
const (
	MediaText = "text/plain; charset=utf-8"
	MediaJSON = "application/json"
)

// piece is one artifact cut out of a site: its bytes, how to put them back,
// and its span within the line.
type piece struct {
	data       []byte
	form       Form
	media      string
	start, end int
}

// encodePiece returns the artifact form of the JSON value v: text when an
// escaping style restores it exactly, decoded base64 for image data, and
// raw JSON otherwise. mime is the media type declared beside image data.
func encodePiece(v transcript.Value, image bool, mime string) piece {
	raw := v.Raw()
	p := piece{start: v.Start, end: v.End}
	if v.Kind() == transcript.String {
		inner := raw[1 : len(raw)-1]
		if image {
			if data, err := base64.StdEncoding.DecodeString(string(inner)); err == nil && len(data) > 0 &&
				base64.StdEncoding.EncodedLen(len(data)) == len(inner) &&
				base64.StdEncoding.EncodeToString(data) == string(inner) {
				p.data, p.form, p.media = data, FormBase64, imageMedia(mime, data)
				return p
			}
		}
		if text, style, ok := transcript.TextForm(raw); ok {
			p.data, p.media = text, MediaText
			p.form = FormJS
			if style == transcript.StyleASCII {
				p.form = FormASCII
			}
			return p
		}
	}
	p.data, p.form, p.media = raw, FormRaw, MediaJSON
	return p
}

// decodePiece turns artifact bytes back into the JSON bytes of form f,
// appended to dst.
func decodePiece(dst, data []byte, f Form) ([]byte, bool) {
	switch f {
	case FormJS, FormASCII:
		if !utf8.Valid(data) {
			return dst, false
		}
		style, _ := transcript.ParseStyle(string(f))
		return transcript.AppendEncoded(dst, data, style), true
	case FormBase64:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, data)
		return append(dst, '"'), true
	case FormRaw:
		return append(dst, data...), true
	}
	return dst, false
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

// cutSite splits a site into the artifacts it holds. Large strings become
// pieces; the JSON between them stays literal. When that literal JSON is
// large or not valid UTF-8, the whole site becomes one raw piece.
func cutSite(site transcript.Value, threshold int) []piece {
	min := holeMin(threshold)
	var pieces []piece
	var walk func(v transcript.Value, image bool, mime string)
	walk = func(v transcript.Value, image bool, mime string) {
		switch v.Kind() {
		case transcript.String:
			if v.Len() >= min {
				pieces = append(pieces, encodePiece(v, image, mime))
			}
		case transcript.Object:
			isImage := false
			declared := ""
			if t, _ := v.Get("type"); t.IsString("image") {
				isImage = true
				for _, k := range []string{"mimeType", "media_type", "mime_type"} {
					if m, ok := v.Get(k); ok {
						declared = m.Text()
					}
				}
			}
			v.Members(func(m transcript.Member) bool {
				walk(m.Value, isImage && (m.Key.IsString("data")), declared)
				return true
			})
		case transcript.Array:
			v.Elems(func(_ int, e transcript.Value) bool {
				walk(e, false, "")
				return true
			})
		}
	}
	walk(site, false, "")
	literal := site.Len()
	for _, p := range pieces {
		literal -= p.end - p.start
	}
	ok := len(pieces) > 0 && literal <= threshold
	for i := 0; ok && i <= len(pieces); i++ {
		from, to := site.Start, site.End
		if i > 0 {
			from = pieces[i-1].end
		}
		if i < len(pieces) {
			to = pieces[i].start
		}
		ok = utf8.Valid(site.Buf[from:to])
	}
	if !ok {
		return []piece{encodePiece(site, false, "")}
	}
	return pieces
}

// Summarize returns a one-line description of an artifact.
func Summarize(data []byte, media string) string {
	switch {
	case strings.HasPrefix(media, "image/"):
		return media + " image, " + humanBytes(len(data))
	case media == MediaJSON:
		return "JSON, " + humanBytes(len(data))
	case media == MediaText:
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		first := ""
		for _, l := range strings.SplitN(string(data[:min(len(data), 4096)]), "\n", 64) {
			if t := strings.TrimSpace(l); t != "" {
				first = t
				break
			}
		}
		first = truncateRunes(first, 80)
		return first + " (" + plural(lines, "line") + ")"
	}
	return humanBytes(len(data))
}

func truncateRunes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
