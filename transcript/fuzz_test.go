package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// readerSeeds are inputs whose line splitting is easy to get wrong.
var readerSeeds = []string{
	"",
	"\n",
	"\r",
	"\r\n",
	"\n\r",
	"a",
	"a\r\nb\nc\r\nd",
	"\xef\xbb\xbf{}\r\n",
	"{}\n\n{\"a\":1}\n{\"b\":",
	"\x00\x00\x00",
	"\r\r\n\r",
	strings.Repeat("x", 40) + "\r\n" + strings.Repeat("y", 40),
}

func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The smallest bufio buffer makes long lines cross many
		// ErrBufferFull boundaries, also inside a CRLF.
		for _, r := range []*Reader{
			NewReader(bytes.NewReader(data)),
			NewReader(bufio.NewReaderSize(bytes.NewReader(data), 16)),
		} {
			lines := readLines(t, r)
			checkLines(t, data, lines)
		}
	})
}

// parseSeeds are lines that are, or almost are, JSON.
var parseSeeds = []string{
	``,
	`{}`,
	`[]`,
	`{"a":1,"a":2}`,
	`{"cont\u0065nt":"x","content":[1,2,{"b":null}]}`,
	` { "a" : [ 1 , 2 ] , "b" : { } } `,
	`1E+400`,
	`-0.0`,
	`12345678901234567890123`,
	`"\u00e9\/\u00E9\ud83d\ude00"`,
	`"\ud800"`,
	"\"\xff\xfe\"",
	"\xef\xbb\xbf{}",
	`{"a":[1,2,}`,
	`[1,]`,
	`{"a" 1}`,
	`-`,
	`01`,
	`1.e5`,
	`"\u12G4"`,
	nestedArrays(MaxDepth),
	nestedArrays(MaxDepth + 1),
	strings.Repeat("[", 10_000),
	`{"role":"toolResult","content":[{"type":"text","text":"x\ny"}],"details":{"a":"b"}}`,
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, 0)
		if errors.Is(err, ErrTooDeep) {
			return // encoding/json allows deeper nesting
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %v is neither a SyntaxError nor ErrTooDeep", err)
			}
			if se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("error offset %d outside the line of %d bytes", se.Offset, len(data))
			}
			if json.Valid(data) {
				t.Fatalf("Parse refuses what encoding/json accepts: %v", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepts what encoding/json refuses")
		}
		if !json.Valid(v.Raw()) {
			t.Fatalf("value span %q is not valid JSON", v.Raw())
		}
		// Walking the value through its spans and gluing the pieces back
		// without white space must give what json.Compact gives.
		var want bytes.Buffer
		if err := json.Compact(&want, data); err != nil {
			t.Fatal(err)
		}
		if got := compact(t, v); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("spans give %q, json.Compact %q", got, want.Bytes())
		}
	})
}

// compact rebuilds v from the spans the accessors return, checking every
// string and every object's Get on the way.
func compact(t *testing.T, v Value) []byte {
	switch v.Kind() {
	case Object:
		b := []byte{'{'}
		last := map[string]string{} // decoded key -> raw value of its last member
		n := 0
		v.Members(func(m Member) bool {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			if m.Key.Kind() != String {
				t.Fatalf("key %q is not a string", m.Key.Raw())
			}
			checkString(t, m.Key)
			b = append(b, m.Key.Raw()...)
			b = append(b, ':')
			b = append(b, compact(t, m.Value)...)
			if text, err := Decode(m.Key.Raw()); err == nil {
				last[string(text)] = string(m.Value.Raw())
			}
			return true
		})
		for key, raw := range last {
			got, ok := v.Get(key)
			if !ok || string(got.Raw()) != raw {
				t.Fatalf("Get(%q) = %q, %v; want the last member's %q", key, got.Raw(), ok, raw)
			}
		}
		return append(b, '}')
	case Array:
		b := []byte{'['}
		v.Elems(func(i int, e Value) bool {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, compact(t, e)...)
			return true
		})
		return append(b, ']')
	case String:
		checkString(t, v)
	case Invalid:
		t.Fatalf("invalid value in a parsed document")
	}
	return bytes.Clone(v.Raw())
}

// checkString compares Decode and TextForm with encoding/json on a string
// that has a UTF-8 text.
func checkString(t *testing.T, v Value) {
	text, err := Decode(v.Raw())
	if err != nil {
		if !errors.Is(err, ErrNotText) {
			t.Fatalf("Decode(%q): %v", v.Raw(), err)
		}
		return
	}
	if !utf8.Valid(text) {
		return
	}
	var std string
	if err := json.Unmarshal(v.Raw(), &std); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", v.Raw(), err)
	}
	if std != string(text) {
		t.Fatalf("Decode(%q) = %q, encoding/json %q", v.Raw(), text, std)
	}
	checkTextForm(t, v.Raw())
	if got, style, ok := TextForm(v.Raw()); ok {
		if string(got) != string(text) {
			t.Fatalf("TextForm(%q) text %q, Decode %q", v.Raw(), got, text)
		}
		if enc := AppendEncoded(nil, got, style); !bytes.Equal(enc, v.Raw()) {
			t.Fatalf("TextForm(%q) style %v encodes to %q", v.Raw(), style, enc)
		}
	}
}
