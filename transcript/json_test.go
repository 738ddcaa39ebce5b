package transcript

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trimWS trims JSON white space, nothing else.
func trimWS(s string) string { return strings.Trim(s, " \t\r\n") }

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		input string
		kind  Kind
	}{
		{"empty object", `{}`, Object},
		{"empty array", `[]`, Array},
		{"empty string", `""`, String},
		{"true", `true`, Bool},
		{"false", `false`, Bool},
		{"null", `null`, Null},
		{"zero", `0`, Number},
		{"negative zero", `-0`, Number},
		{"negative zero float", `-0.0`, Number},
		{"huge exponent", `1E+400`, Number},
		{"tiny exponent", `1e-400`, Number},
		{"exponent without sign", `2E5`, Number},
		{"23-digit integer", `12345678901234567890123`, Number},
		{"negative 23-digit integer", `-99999999999999999999999`, Number},
		{"fraction and exponent", `-1.5e-3`, Number},
		{"escapes", `"\"\\\/\b\f\n\r\t"`, String},
		{"lower-case unicode escape", `"caf\u00e9"`, String},
		{"upper-case unicode escape", `"caf\u00E9"`, String},
		{"surrogate pair", `"\ud83d\ude00"`, String},
		{"lone surrogate is valid JSON", `"\ud800"`, String},
		{"raw UTF-8", `"é😀"`, String},
		{"invalid UTF-8 is kept", "\"\xff\xfe\"", String},
		{"DEL", "\"\x7f\"", String},
		{"duplicate keys", `{"a":1,"a":2}`, Object},
		{"white space everywhere", " \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, \t\r\n{ } \t\r\n] \t\r\n} \t\r\n", Object},
		{"nested", `{"a":[{"b":[[],{}]},null,true,false,"x",1]}`, Object},
		{"brackets in strings", `{"a":"}]","b":["[{"]}`, Object},
		{"empty key", `{"":""}`, Object},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.input), 0)
			require.NoError(t, err)
			assert.Equal(t, tt.kind, v.Kind())
			assert.Equal(t, trimWS(tt.input), string(v.Raw()))
			assert.Equal(t, len(trimWS(tt.input)), v.Len())
			assert.True(t, json.Valid([]byte(tt.input)), "encoding/json disagrees")
		})
	}
}

func TestParseStart(t *testing.T) {
	buf := []byte(`garbage [1, 2] `)
	v, err := Parse(buf, 7)
	require.NoError(t, err)
	assert.Equal(t, 8, v.Start)
	assert.Equal(t, 14, v.End)
	assert.Equal(t, "[1, 2]", string(v.Raw()))

	_, err = Parse(buf, 0)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 0, se.Offset)

	_, err = Parse(buf, len(buf))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, len(buf), se.Offset)
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		offset int
	}{
		{"empty", ``, 0},
		{"white space only", "  \t", 3},
		{"unclosed object", `{`, 1},
		{"unclosed array", `[`, 1},
		{"unclosed after member", `{"a":1`, 6},
		{"unclosed after element", `[1,2`, 4},
		{"missing colon", `{"a"}`, 4},
		{"missing colon before value", `{"a" 1}`, 5},
		{"missing value", `{"a":}`, 5},
		{"trailing comma in array", `[1,]`, 3},
		{"trailing comma in object", `{"a":1,}`, 7},
		{"missing comma", `[1 2]`, 3},
		{"non-string key", `{1:2}`, 1},
		{"single-quoted key", `{'a':1}`, 1},
		{"mismatched closer", `[1}`, 2},
		{"mismatched object closer", `{"a":1]`, 6},
		{"extra closer", `[1,2]]`, 5},
		{"two values", `{} {}`, 3},
		{"garbage after value", `{"a":1}x`, 7},
		{"NUL after value", "{}\x00", 2},
		{"short literal", `tru`, 0},
		{"wrong literal", `nul1`, 0},
		{"capitalized literal", `True`, 0},
		{"literal then garbage", `truex`, 4},
		{"NaN", `NaN`, 0},
		{"Infinity", `-Infinity`, 1},
		{"leading zero", `01`, 1},
		{"negative leading zero", `-01`, 2},
		{"plus sign", `+1`, 0},
		{"bare minus", `-`, 1},
		{"minus then letter", `-a`, 1},
		{"leading dot", `.5`, 0},
		{"trailing dot", `1.`, 2},
		{"dot then letter", `1.e5`, 2},
		{"empty exponent", `1e`, 2},
		{"signed empty exponent", `1e+`, 3},
		{"hex number", `0x10`, 1},
		{"unterminated string", `"abc`, 0},
		{"unterminated after backslash", `"a\`, 2},
		{"unterminated string in array", `["a`, 1},
		{"bad escape", `"\x"`, 1},
		{"bad escape after text", `"abc\a"`, 4},
		{"short unicode escape", `"\u12"`, 1},
		{"non-hex unicode escape", `"\u12G4"`, 1},
		{"tab in string", "\"a\tb\"", 2},
		{"newline in string", "\"a\nb\"", 2},
		{"NUL in string", "\"\x00\"", 1},
		{"BOM is not white space", "\xef\xbb\xbf{}", 0},
		{"vertical tab is not white space", "\v{}", 0},
		{"NBSP is not white space", "\u00a0{}", 0},
		{"comment", `{} // x`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.input), 0)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.offset, se.Offset, "error: %v", err)
			assert.Contains(t, err.Error(), "invalid JSON at byte ")
			assert.Equal(t, Invalid, v.Kind())
			assert.NotErrorIs(t, err, ErrTooDeep)
			assert.False(t, json.Valid([]byte(tt.input)), "encoding/json disagrees")
		})
	}
}

func nestedArrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func nestedObjects(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

func TestParseDepth(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		tooDeep bool
	}{
		{"arrays at MaxDepth", nestedArrays(MaxDepth), false},
		{"arrays over MaxDepth", nestedArrays(MaxDepth + 1), true},
		{"objects at MaxDepth", nestedObjects(MaxDepth), false},
		{"objects over MaxDepth", nestedObjects(MaxDepth + 1), true},
		{"mixed at MaxDepth", strings.Repeat(`[{"a":`, MaxDepth/2) + "0" + strings.Repeat("}]", MaxDepth/2), false},
		{"mixed over MaxDepth", strings.Repeat(`[{"a":`, MaxDepth/2) + "[]" + strings.Repeat("}]", MaxDepth/2), true},
		{"siblings do not add up", "[" + strings.Repeat(nestedArrays(MaxDepth-1)+",", 100) + "0]", false},
		{"10,000 open brackets", strings.Repeat("[", 10_000), true},
		{"10,000,000 open brackets", strings.Repeat("[", 10_000_000), true},
		{"10,000,000 balanced brackets", nestedArrays(10_000_000), true},
		{"10,000,000 open objects", strings.Repeat(`{"":`, 10_000_000), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.input), 0)
			if !tt.tooDeep {
				require.NoError(t, err)
				assert.Equal(t, len(tt.input), v.Len())
				return
			}
			require.ErrorIs(t, err, ErrTooDeep)
			var se *SyntaxError
			assert.False(t, errors.As(err, &se), "too deep is not a syntax error")
			assert.Contains(t, err.Error(), "at byte ")
		})
	}
}

func TestParseDepthOffset(t *testing.T) {
	_, err := Parse([]byte(nestedArrays(MaxDepth+1)), 0)
	require.ErrorIs(t, err, ErrTooDeep)
	assert.Contains(t, err.Error(), "at byte 512:")
}

// TestAccessorsDeep walks a value nested MaxDepth levels through the
// accessors, which must not recurse either.
func TestAccessorsDeep(t *testing.T) {
	input := `{"x":` + nestedArrays(MaxDepth-1) + `,"y":` + nestedObjects(MaxDepth-1) + `}`
	v, err := Parse([]byte(input), 0)
	require.NoError(t, err)
	x, ok := v.Get("x")
	require.True(t, ok)
	assert.Equal(t, nestedArrays(MaxDepth-1), string(x.Raw()))
	y, ok := v.Get("y")
	require.True(t, ok)
	assert.Equal(t, nestedObjects(MaxDepth-1), string(y.Raw()))
	depth := 1
	for e, ok := x.Index(0); ok; e, ok = e.Index(0) {
		depth++
	}
	assert.Equal(t, MaxDepth-1, depth)
}

func mustParse(t testing.TB, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s), 0)
	require.NoError(t, err)
	return v
}

func TestGet(t *testing.T) {
	tests := []struct {
		name  string
		input string
		key   string
		want  string // raw value; empty for not found
	}{
		{"simple", `{"a":1,"b":2}`, "b", "2"},
		{"last duplicate wins", `{"a":1,"a":2,"a":3}`, "a", "3"},
		{"last duplicate wins across other keys", `{"a":"x","b":0,"a":{"c":1}}`, "a", `{"c":1}`},
		{"escaped key", `{"cont\u0065nt":"x"}`, "content", `"x"`},
		{"escaped key is a duplicate", `{"content":1,"cont\u0065nt":2}`, "content", "2"},
		{"plain key after escaped duplicate", `{"cont\u0065nt":1,"content":2}`, "content", "2"},
		{"upper-case escape in key", `{"\u0041":true}`, "A", "true"},
		{"escaped quote in key", `{"a\"b":null}`, `a"b`, "null"},
		{"escaped solidus in key", `{"a\/b":[]}`, "a/b", "[]"},
		{"raw escape is not the name", `{"a\"b":1}`, `a\"b`, ""},
		{"raw unicode escape is not the name", `{"\u0061":1}`, `\u0061`, ""},
		{"non-ASCII key", `{"caf\u00e9":1,"café":2}`, "café", "2"},
		{"surrogate pair key", `{"\ud83d\ude00":1}`, "😀", "1"},
		{"white space", " { \"a\" : [ 1 ] , \"b\" : \"c\" } ", "a", "[ 1 ]"},
		{"nested key is not a member", `{"a":{"b":1}}`, "b", ""},
		{"key in a string value is not a member", `{"a":"\"b\":1"}`, "b", ""},
		{"missing", `{"a":1}`, "A", ""},
		{"prefix is not a match", `{"ab":1}`, "a", ""},
		{"lone surrogate key matches nothing", `{"\ud800":1}`, "\ufffd", ""},
		{"empty object", `{}`, "a", ""},
		{"empty key", `{"":5}`, "", "5"},
		{"array", `[{"a":1}]`, "a", ""},
		{"string", `"a"`, "a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mustParse(t, tt.input).Get(tt.key)
			if tt.want == "" {
				assert.False(t, ok)
				assert.Equal(t, Invalid, got.Kind())
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, string(got.Raw()))
		})
	}
}

func TestMembers(t *testing.T) {
	input := ` { "a" : 1 , "b":[1,{"c":"}"}] ,"d\"":"x\"]" , "e" :{ } ,"f":-0.0e+1,"g":true}`
	v := mustParse(t, input)
	var keys, vals []string
	v.Members(func(m Member) bool {
		assert.Equal(t, String, m.Key.Kind())
		keys = append(keys, string(m.Key.Raw()))
		vals = append(vals, string(m.Value.Raw()))
		assert.Equal(t, string(input[m.Value.Start:m.Value.End]), string(m.Value.Raw()), "span indexes the line")
		return true
	})
	assert.Equal(t, []string{`"a"`, `"b"`, `"d\""`, `"e"`, `"f"`, `"g"`}, keys)
	assert.Equal(t, []string{`1`, `[1,{"c":"}"}]`, `"x\"]"`, `{ }`, `-0.0e+1`, `true`}, vals)

	n := 0
	v.Members(func(Member) bool { n++; return n < 2 })
	assert.Equal(t, 2, n, "Members goes on after fn returned false")

	for _, s := range []string{`{}`, `{ }`, `[1]`, `"{}"`, `1`} {
		called := false
		mustParse(t, s).Members(func(Member) bool { called = true; return true })
		assert.False(t, called, "Members of %s", s)
	}
}

func TestElems(t *testing.T) {
	input := `[ 1 , "a]" , {"x":[]} , [ ] , null,true,false,-1.5e3,"\"",[[1],[2]] ]`
	v := mustParse(t, input)
	var got []string
	v.Elems(func(i int, e Value) bool {
		assert.Equal(t, len(got), i)
		got = append(got, string(e.Raw()))
		return true
	})
	want := []string{`1`, `"a]"`, `{"x":[]}`, `[ ]`, `null`, `true`, `false`, `-1.5e3`, `"\""`, `[[1],[2]]`}
	assert.Equal(t, want, got)

	for i, w := range want {
		e, ok := v.Index(i)
		require.True(t, ok, "Index(%d)", i)
		assert.Equal(t, w, string(e.Raw()), "Index(%d)", i)
	}
	_, ok := v.Index(len(want))
	assert.False(t, ok, "Index past the end")
	_, ok = v.Index(-1)
	assert.False(t, ok, "negative Index")

	n := 0
	v.Elems(func(int, Value) bool { n++; return n < 3 })
	assert.Equal(t, 3, n, "Elems goes on after fn returned false")

	for _, s := range []string{`[]`, `[ ]`, `{"a":1}`, `"[1]"`, `null`} {
		called := false
		mustParse(t, s).Elems(func(int, Value) bool { called = true; return true })
		assert.False(t, called, "Elems of %s", s)
		_, ok := mustParse(t, s).Index(0)
		assert.False(t, ok, "Index(0) of %s", s)
	}
}

func TestKind(t *testing.T) {
	tests := []struct {
		v    Value
		want Kind
		name string
	}{
		{Value{}, Invalid, "invalid"},
		{Value{Buf: []byte("{}"), Start: 1, End: 1}, Invalid, "invalid"},
		{mustParse(t, `{}`), Object, "object"},
		{mustParse(t, `[]`), Array, "array"},
		{mustParse(t, `""`), String, "string"},
		{mustParse(t, `-1`), Number, "number"},
		{mustParse(t, `0`), Number, "number"},
		{mustParse(t, `true`), Bool, "bool"},
		{mustParse(t, `false`), Bool, "bool"},
		{mustParse(t, `null`), Null, "null"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.v.Kind(), "%q", tt.v.Buf)
		assert.Equal(t, tt.name, tt.v.Kind().String())
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		input string
		want  string
	}{
		{`"plain"`, "plain"},
		{`""`, ""},
		{`"caf\u00e9 \u00E9 é"`, "café é é"},
		{`"a\/b\\c\"d\n"`, "a/b\\c\"d\n"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud800"`, ""},
		{`1`, ""},
		{`["a"]`, ""},
		{`{"a":"b"}`, ""},
		{`null`, ""},
	}
	for _, tt := range tests {
		v := mustParse(t, tt.input)
		assert.Equal(t, tt.want, v.Text(), "%s", tt.input)
		if v.Kind() == String && tt.want != "" {
			assert.True(t, v.IsString(tt.want), "IsString %s", tt.input)
			assert.False(t, v.IsString(tt.want+"x"), "IsString %s", tt.input)
		}
	}
}

func TestIsStringNotString(t *testing.T) {
	assert.False(t, mustParse(t, `1`).IsString("1"))
	assert.False(t, mustParse(t, `["a"]`).IsString(`["a"]`))
	assert.False(t, mustParse(t, `"\u0061"`).IsString(`\u0061`), "raw escape is not the text")
	assert.True(t, mustParse(t, `"\u0061"`).IsString("a"))
}

// TestSpecial8 checks the eight-byte test against the table on every byte
// in every position, next to plain bytes of every kind.
// TestIndexSpecial checks indexSpecial (SSE2 on amd64), its generic twin
// and plainLen against strSpecial for every length up to 80, every byte value at
// every position, and a second special byte after the first.
func TestIndexSpecial(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if strSpecial[c] {
				return i
			}
		}
		return len(b)
	}
	check := func(b []byte) {
		t.Helper()
		want := naive(b)
		if got := indexSpecial(b); got != want {
			t.Fatalf("indexSpecial(%q) = %d, want %d", b, got, want)
		}
		if got := indexSpecialGeneric(b); got != want {
			t.Fatalf("indexSpecialGeneric(%q) = %d, want %d", b, got, want)
		}
		if got := plainLen(b); got != want {
			t.Fatalf("plainLen(%q) = %d, want %d", b, got, want)
		}
	}
	for n := 0; n <= 80; n++ {
		b := bytes.Repeat([]byte{'a'}, n)
		check(b)
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				check(b)
				if pos+3 < n {
					b[pos+3] = '"'
					check(b)
					b[pos+3] = 'a'
				}
			}
			b[pos] = 'a'
		}
	}
	// A slice that does not start at its array's start.
	b := []byte(strings.Repeat("x", 40) + `\"`)
	for i := range 40 {
		check(b[i:])
	}
}

// TestSkipPlain checks what skipPlain16 returns: a prefix of plain bytes
// and two-byte escapes that ends at a byte it must stop at, or within
// the last sixteen bytes.
func TestSkipPlain(t *testing.T) {
	simple := func(c byte) bool { return strings.IndexByte(`"\\/bfnrt`, c) >= 0 }
	// Without assembly it passes nothing.
	skips := skipPlain16(bytes.Repeat([]byte{'a'}, 32)) != 0
	// valid reports whether skipPlain16 may return r for b.
	valid := func(b []byte, r int) bool {
		if !skips {
			return r == 0
		}
		j := 0
		for j < r {
			switch {
			case !strSpecial[b[j]]:
				j++
			case b[j] == '\\' && j+1 < len(b) && simple(b[j+1]):
				j += 2
			default:
				return false // a byte it must stop at, passed
			}
		}
		if j != r {
			return false // in the middle of an escape
		}
		stop := r < len(b) && strSpecial[b[r]] && (b[r] != '\\' || r+1 >= len(b) || !simple(b[r+1]))
		return stop || r > len(b)-16
	}
	check := func(b []byte) {
		t.Helper()
		if r := skipPlain16(b); !valid(b, r) {
			t.Fatalf("skipPlain16(%q) = %d", b, r)
		}
	}
	for n := 0; n <= 48; n++ {
		b := bytes.Repeat([]byte{'a'}, n)
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b[pos] = '\\'
				if pos+1 < n {
					b[pos+1] = byte(c)
				}
				check(b)
				b[pos] = byte(c)
				check(b)
				if pos+1 < n {
					b[pos+1] = 'a'
				}
			}
			b[pos] = 'a'
		}
	}
	alphabet := []byte("ab\\\"nut/\x01\x1f\x7f\xc30123456789")
	rng := rand.New(rand.NewPCG(11, 12))
	for range 100000 {
		b := make([]byte, rng.IntN(100))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = 'a'
			}
		}
		check(b)
		// And the scanner that calls it agrees with encoding/json.
		lit := append(append([]byte{'"'}, b...), '"')
		_, err := Parse(lit, 0)
		if ok := json.Valid(lit); (err == nil) != ok {
			t.Fatalf("Parse(%q): %v, encoding/json says valid: %v", lit, err, ok)
		}
	}
}

func TestHasHigh(t *testing.T) {
	for n := 0; n <= 24; n++ {
		b := bytes.Repeat([]byte{'~'}, n) // 0x7e, the last byte below DEL
		require.False(t, hasHigh(b))
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				if got := hasHigh(b); got != (c >= 0x7f) {
					t.Fatalf("hasHigh(%q) = %v", b, got)
				}
			}
			b[pos] = 0xff // a high byte before another: no carry may hide either
			if pos+1 < n {
				b[pos+1] = 0x7f
				require.True(t, hasHigh(b))
				b[pos+1] = '~'
			}
			b[pos] = '~'
		}
	}
}

func TestSpecial8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, ' ', '!', '#', '[', ']', 0x21} {
			for pos := 0; pos < 8; pos++ {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				want := false
				for _, x := range b {
					want = want || strSpecial[x]
				}
				if got := special8(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Fatalf("special8(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 200000 {
		var b [8]byte
		want := false
		for i := range b {
			b[i] = byte(rng.IntN(256))
			want = want || strSpecial[b[i]]
		}
		if got := special8(binary.LittleEndian.Uint64(b[:])); got != want {
			t.Fatalf("special8(%q) = %v, want %v", b, got, want)
		}
	}
}

// TestFields checks that Fields finds for each key what Get does: the
// last of duplicate members, keys written with escapes, long or missing
// keys, and nothing in a value that is not an object.
func TestFields(t *testing.T) {
	keys := []string{"type", "message", "notebook_path", "é", "missing", ""}
	for _, line := range []string{
		`{"type":"a","message":{"x":1},"type":"b"}`,
		`{"\u0074ype":1,"notebook\u005fpath":"p","\u00e9":true,"\u00E9":false}`,
		`{"n\u006f\u0074\u0065\u0062\u006f\u006f\u006b\u005f\u0070\u0061\u0074\u0068":[1,2]}`,
		`{"` + strings.Repeat("k", 1000) + `":1,"":2,"message":null}`,
		`{}`,
		`["type","message"]`,
		`"type"`,
		` { "type" : "x" , "message" : [ ] } `,
	} {
		v, err := Parse([]byte(line), 0)
		require.NoError(t, err, line)
		vals := make([]Value, len(keys))
		for i := range vals {
			vals[i] = Value{Buf: []byte("stale"), End: 5}
		}
		v.Fields(vals, keys...)
		for i, k := range keys {
			want, ok := v.Get(k)
			if !ok {
				want = Value{}
			}
			assert.Equal(t, string(want.Raw()), string(vals[i].Raw()), "%s: key %q", line, k)
			assert.Equal(t, want.Kind(), vals[i].Kind(), "%s: key %q", line, k)
		}
	}
}
