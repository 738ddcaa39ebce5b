package sessiongen

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// obj is a JSON object whose members keep the order they are written in;
// duplicate keys are allowed, as hostile cases need them.
type obj []member

type member struct {
	k string
	v any
}

// arr is a JSON array.
type arr []any

// rawJSON is written as it is: numbers JavaScript cannot print, nesting
// no encoder produces.
type rawJSON string

// writer encodes values the way one family of JSON writers does. The zero
// separators are replaced by JSON.stringify's "," and ":".
type writer struct {
	comma, colon string
	ascii        bool // escape DEL and every non-ASCII character (Python's ensure_ascii)
	upper        bool // upper-case hex digits in \u escapes
	slash        bool // escape "/" as "\/" (PHP, some Java writers)
}

// js writes like JavaScript's JSON.stringify, which pi and OpenClaw use.
var js = writer{comma: ",", colon: ":"}

// python writes like Python's json.dumps with its defaults.
var python = writer{comma: ", ", colon: ": ", ascii: true}

func (w writer) line(v any) []byte { return w.value(nil, v) }

func (w writer) value(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	case string:
		return w.str(dst, v)
	case rawJSON:
		return append(dst, v...)
	case obj:
		dst = append(dst, '{')
		for i, m := range v {
			if i > 0 {
				dst = append(dst, w.comma...)
			}
			dst = w.str(dst, m.k)
			dst = append(dst, w.colon...)
			dst = w.value(dst, m.v)
		}
		return append(dst, '}')
	case arr:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, w.comma...)
			}
			dst = w.value(dst, e)
		}
		return append(dst, ']')
	}
	panic(fmt.Sprintf("sessiongen: cannot encode %T", v))
}

// str encodes s as a JSON string. Bytes that are not UTF-8 are copied as
// they are, so hostile cases can hold them.
func (w writer) str(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[i])
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '/' && w.slash:
			dst = append(dst, '\\', '/')
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20, w.ascii && r >= 0x7f && r < 0x10000:
			dst = w.u(dst, r)
		case w.ascii && r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			dst = w.u(w.u(dst, r1), r2)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func (w writer) u(dst []byte, r rune) []byte {
	digits := "0123456789abcdef"
	if w.upper {
		digits = "0123456789ABCDEF"
	}
	return append(dst, '\\', 'u', digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf])
}
