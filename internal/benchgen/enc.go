package benchgen

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/transcript-tool/transcript-tool/internal/count"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// obj is a JSON object whose members keep the order they are written in.
type obj []member

type member struct {
	k string
	v any
}

// arr is a JSON array.
type arr []any

// text is a payload string: size JSON bytes (without the quotes) of text of
// kind drawn from seed. The same text written twice gives the same bytes.
// A numbered text is the same lines as Claude Code's Read tool shows them
// to the model: each behind its line number and an arrow, then a notice;
// it is longer than size.
type text struct {
	seed     uint64
	kind     kind
	size     int
	numbered bool
}

// picture is a payload string holding the base64 of a PNG image of about size
// bytes drawn from seed.
type picture struct {
	seed uint64
	size int
}

// enc writes JSON values through a buffer, escaping strings in one style,
// and counts the payloads it writes. Write errors are sticky: err reports
// the first one and flush returns it.
type enc struct {
	w       *bufio.Writer
	cw      *count.Writer
	style   transcript.Style
	stats   *Stats // nil: payloads are not counted
	scratch []byte
}

func newEnc(w io.Writer, st transcript.Style, stats *Stats) *enc {
	cw := &count.Writer{W: w}
	return &enc{w: bufio.NewWriterSize(cw, 1<<20), cw: cw, style: st, stats: stats}
}

// pos is the number of bytes written so far.
func (e *enc) pos() int64 { return e.cw.N + int64(e.w.Buffered()) }

// err returns the first write error, if any.
func (e *enc) err() error {
	_, err := e.w.Write(nil)
	return err
}

func (e *enc) flush() error { return e.w.Flush() }

func (e *enc) raw(s string) { _, _ = e.w.WriteString(s) }

// line writes v and a newline.
func (e *enc) line(v obj) {
	e.value(v)
	_ = e.w.WriteByte('\n')
}

func (e *enc) value(v any) {
	switch v := v.(type) {
	case nil:
		e.raw("null")
	case bool:
		e.raw(strconv.FormatBool(v))
	case int:
		e.scratch = strconv.AppendInt(e.scratch[:0], int64(v), 10)
		_, _ = e.w.Write(e.scratch)
	case int64:
		e.scratch = strconv.AppendInt(e.scratch[:0], v, 10)
		_, _ = e.w.Write(e.scratch)
	case string:
		e.scratch = transcript.AppendEncoded(e.scratch[:0], []byte(v), e.style)
		_, _ = e.w.Write(e.scratch)
	case obj:
		_ = e.w.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				_ = e.w.WriteByte(',')
			}
			e.value(m.k)
			_ = e.w.WriteByte(':')
			e.value(m.v)
		}
		_ = e.w.WriteByte('}')
	case arr:
		_ = e.w.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				_ = e.w.WriteByte(',')
			}
			e.value(x)
		}
		_ = e.w.WriteByte(']')
	case text:
		e.payload(false, func() { streamText(e.w, v, e.style) })
	case picture:
		e.payload(true, func() {
			b64 := base64.NewEncoder(base64.StdEncoding, e.w)
			_ = writePNG(b64, rand.New(rand.NewPCG(v.seed, pngStream)), v.size)
			_ = b64.Close()
		})
	default:
		panic(fmt.Sprintf("benchgen: cannot encode %T", v))
	}
}

// payload writes the string that body writes and counts it.
func (e *enc) payload(image bool, body func()) {
	_ = e.w.WriteByte('"')
	start := e.pos()
	body()
	n := e.pos() - start
	_ = e.w.WriteByte('"')
	if e.stats != nil {
		e.stats.addPayload(n, image)
	}
}
