package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
		checkLossy(t, v.Raw())
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
	if lossy := AppendLossy(nil, v.Raw(), -1); string(lossy) != std {
		t.Fatalf("AppendLossy(%q) = %q, encoding/json %q", v.Raw(), lossy, std)
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

// checkLossy compares AppendLossy with encoding/json, which also decodes
// an unpaired surrogate escape to U+FFFD, on a literal of valid UTF-8.
func checkLossy(t *testing.T, raw []byte) {
	if !utf8.Valid(raw) {
		return
	}
	var std string
	if err := json.Unmarshal(raw, &std); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", raw, err)
	}
	if lossy := AppendLossy(nil, raw, -1); string(lossy) != std {
		t.Fatalf("AppendLossy(%q) = %q, encoding/json %q", raw, lossy, std)
	}
}

// FuzzScanner checks a Scanner of the whole text against encoding/json,
// and of every start of a valid text against the whole: a start is never
// a syntax error, and its tokens are those of the whole, the last one
// perhaps cut.
func FuzzScanner(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":"\ud83d\ude80\ud83d x","b":[1,-2.5e3,true,false,null,{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) > 5000 {
			return // encoding/json refuses deep nesting; the Scanner does not
		}
		toks, err := scan(data, false)
		valid := json.Valid(data)
		if valid != (err == io.EOF) {
			t.Fatalf("Scanner ends with %v, encoding/json says valid %v", err, valid)
		}
		if !valid {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Scanner of invalid JSON ends with %v, not a SyntaxError", err)
			}
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, data); err != nil {
			t.Fatal(err)
		}
		if got := rebuild(toks); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("tokens give %q, json.Compact %q", got, want.Bytes())
		}
		for cut := 0; cut < len(data); cut += max(1, len(data)/64) {
			part, err := scan(data[:cut], true)
			if err != io.EOF && err != ErrTruncated {
				t.Fatalf("start %q of valid JSON: %v", data[:cut], err)
			}
			if len(part) > len(toks) {
				t.Fatalf("start %q has more tokens than the whole", data[:cut])
			}
			for i, tok := range part {
				if whole := toks[i]; tok.Key != whole.Key || tok.End != whole.End || !bytes.HasPrefix(whole.Raw, tok.Raw) ||
					i < len(part)-1 && !bytes.Equal(tok.Raw, whole.Raw) {
					t.Fatalf("start %q: token %d is %+v, in the whole %+v", data[:cut], i, tok, whole)
				}
			}
		}
	})
}

// scan returns the tokens of data and the error that ends the scan.
func scan(data []byte, truncated bool) ([]Token, error) {
	s := NewScanner(data, truncated)
	var toks []Token
	for {
		tok, err := s.Next()
		if tok.Kind != Invalid {
			toks = append(toks, tok)
		}
		if err != nil {
			return toks, err
		}
	}
}

// rebuild writes tokens back as compact JSON.
func rebuild(toks []Token) []byte {
	var b []byte
	for i, tok := range toks {
		if i > 0 && !tok.End {
			switch prev := toks[i-1]; {
			case prev.Key:
				b = append(b, ':')
			case prev.End || prev.Kind != Object && prev.Kind != Array:
				b = append(b, ',')
			}
		}
		b = append(b, tok.Raw...)
	}
	return b
}
