package transcript

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of arrays and objects that Parse accepts.
// Transcripts written by agents nest a few dozen levels; anything deeper is
// treated as opaque bytes and kept as it is.
const MaxDepth = 512

// ErrTooDeep is returned by Parse for a value nested deeper than MaxDepth.
var ErrTooDeep = errors.New("JSON nested too deeply")

// SyntaxError is a JSON syntax error at a byte offset within a line.
type SyntaxError struct {
	Offset int // byte offset within the line
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
)

func (k Kind) String() string {
	return [...]string{"invalid", "object", "array", "string", "number", "bool", "null"}[k]
}

// Value is a span of a validated JSON document: Buf[Start:End] is the raw
// value without surrounding white space. The zero Value is Invalid.
type Value struct {
	Buf        []byte
	Start, End int
	// ends, set by Parse, holds where the long values of Buf end, so that
	// walking an object's members does not scan its long strings again.
	ends *ends
}

// ends maps the start of every string and container of a parsed document
// at least indexMin bytes long to its end.
type ends struct{ m map[int]int }

// indexMin is the length from which Parse records where a value ends.
const indexMin = 256

// skip returns the end of the validated value starting at b[i]. A string
// that ends within indexMin bytes is short, and not in m: the first
// unescaped quote after its opening one closes it, so a look at those
// bytes saves a lookup for most strings, keys among them.
func (e *ends) skip(b []byte, i int) int {
	if b[i] == '"' {
		if end, ok := shortString(b, i); ok {
			return end
		}
	}
	if e != nil {
		if end, ok := e.m[i]; ok {
			return end
		}
	}
	return skipValue(b, i)
}

// shortString returns the end of the validated string starting at
// b[i] == '"' if it ends within indexMin bytes.
func shortString(b []byte, i int) (int, bool) {
	return closingQuote(b[:min(len(b), i+indexMin)], i)
}

// Raw returns the value's bytes.
func (v Value) Raw() []byte { return v.Buf[v.Start:v.End] }

// Len returns the length of the value's bytes.
func (v Value) Len() int { return v.End - v.Start }

// Kind returns the JSON type of v.
func (v Value) Kind() Kind {
	if v.Buf == nil || v.Start >= v.End {
		return Invalid
	}
	switch v.Buf[v.Start] {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	default:
		return Number
	}
}

// Parse validates buf[start:] as exactly one JSON value surrounded by
// optional white space and returns that value. It never recurses, so
// hostile nesting cannot exhaust the stack.
func Parse(buf []byte, start int) (Value, error) {
	p := parser{buf: buf, i: start, ends: &ends{}}
	p.ws()
	vs := p.i
	if err := p.value(); err != nil {
		return Value{}, err
	}
	ve := p.i
	p.ws()
	if p.i != len(buf) {
		return Value{}, p.errf("unexpected %q after the value", buf[p.i])
	}
	return Value{Buf: buf, Start: vs, End: ve, ends: p.ends}, nil
}

type parser struct {
	buf    []byte
	i      int
	stack  []byte // '{' or '[' per open container
	starts []int  // where each open container starts
	ends   *ends
}

// ended records that the value starting at start ends at p.i, if it is
// long.
func (p *parser) ended(start int) {
	if p.i-start < indexMin {
		return
	}
	if p.ends.m == nil {
		p.ends.m = map[int]int{}
	}
	p.ends.m[start] = p.i
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) ws() {
	for p.i < len(p.buf) {
		switch p.buf[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value validates one value iteratively; containers are tracked on p.stack.
func (p *parser) value() error {
	for {
		// Expect a value.
		p.ws()
		if p.i >= len(p.buf) {
			return p.errf("unexpected end of line")
		}
		switch c := p.buf[p.i]; c {
		case '{', '[':
			if len(p.stack) >= MaxDepth {
				return fmt.Errorf("at byte %d: %w", p.i, ErrTooDeep)
			}
			p.stack = append(p.stack, c)
			p.starts = append(p.starts, p.i)
			p.i++
			p.ws()
			if p.i < len(p.buf) && p.buf[p.i] == closer(c) {
				p.i++
				p.stack = p.stack[:len(p.stack)-1]
				p.ended(p.starts[len(p.starts)-1])
				p.starts = p.starts[:len(p.starts)-1]
				break
			}
			if c == '{' {
				if err := p.key(); err != nil {
					return err
				}
			}
			continue
		case '"':
			end, err := skipString(p.buf, p.i)
			if err != nil {
				return err
			}
			start := p.i
			p.i = end
			p.ended(start)
		case 't':
			if err := p.lit("true"); err != nil {
				return err
			}
		case 'f':
			if err := p.lit("false"); err != nil {
				return err
			}
		case 'n':
			if err := p.lit("null"); err != nil {
				return err
			}
		default:
			if err := p.number(); err != nil {
				return err
			}
		}
		// After a value: close containers or move to the next element.
		for {
			if len(p.stack) == 0 {
				return nil
			}
			p.ws()
			if p.i >= len(p.buf) {
				return p.errf("unexpected end of line")
			}
			top := p.stack[len(p.stack)-1]
			c := p.buf[p.i]
			if c == closer(top) {
				p.i++
				p.stack = p.stack[:len(p.stack)-1]
				p.ended(p.starts[len(p.starts)-1])
				p.starts = p.starts[:len(p.starts)-1]
				continue
			}
			if c != ',' {
				return p.errf("expected ',' or %q, found %q", closer(top), c)
			}
			p.i++
			if top == '{' {
				p.ws()
				if err := p.key(); err != nil {
					return err
				}
			}
			break
		}
	}
}

func closer(c byte) byte {
	if c == '{' {
		return '}'
	}
	return ']'
}

// key validates an object key and the colon after it.
func (p *parser) key() error {
	if p.i >= len(p.buf) || p.buf[p.i] != '"' {
		return p.errf("expected a string key")
	}
	end, err := skipString(p.buf, p.i)
	if err != nil {
		return err
	}
	p.i = end
	p.ws()
	if p.i >= len(p.buf) || p.buf[p.i] != ':' {
		return p.errf("expected ':' after object key")
	}
	p.i++
	return nil
}

func (p *parser) lit(word string) error {
	if len(p.buf)-p.i < len(word) || string(p.buf[p.i:p.i+len(word)]) != word {
		return p.errf("invalid literal")
	}
	p.i += len(word)
	return nil
}

func (p *parser) number() error {
	b, i := p.buf, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		p.i = i
		return p.errf("invalid character %q", at(b, i))
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			p.i = i
			return p.errf("invalid number")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			p.i = i
			return p.errf("invalid number")
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	p.i = i
	return nil
}

func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// strSpecial marks the bytes that end a run of plain string content: the
// quote, the backslash and control characters.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// special8 reports whether any of the eight bytes of x is one strSpecial
// marks, with the bit tricks of "Bit Twiddling Hacks" (Sean Eron
// Anderson): a byte is zero in x^c where it equals c, and a byte is below
// n (n <= 128) where subtracting n borrows from its high bit. Eight bytes
// are tested at once, where the table took eight lookups.
func special8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	zero := (quote-ones)&^quote | (backslash-ones)&^backslash
	control := (x - ones*0x20) &^ x
	return (zero|control)&highs != 0
}

// skipString validates the string literal starting at b[i] == '"' and
// returns the offset just past its closing quote.
func skipString(b []byte, i int) (int, error) { return scanString(b, i, false) }

// scanString is skipString for an input b that is, when truncated, only
// the start of the text. If b ends inside the literal it returns
// ErrTruncated and where the literal's start ends: before an escape that
// the end may have split, and before a high surrogate escape that fewer
// than two bytes, or a "\u" and fewer than four more, follow, since a
// low one may complete it.
func scanString(b []byte, i int, truncated bool) (int, error) {
	// cut is the outcome of the end of b at j, inside an escape or
	// after the last byte.
	cut := func(j int, msg string) (int, error) {
		if truncated {
			return j, ErrTruncated
		}
		return 0, &SyntaxError{Offset: j, Msg: msg}
	}
	j := i + 1
	for j < len(b) {
		if len(b)-j >= 32 {
			// Plain bytes and the common escapes, sixteen bytes at a
			// time where there is assembly for it (none: 0).
			j += skipPlain16(b[j:])
		}
		// plainLen, written out: without skipPlain16 every special
		// byte stops here, and a call for each made parsing
		// ../shared/corpus some 15% slower.
		if j+16 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:])) {
			if !special8(binary.LittleEndian.Uint64(b[j+8:])) {
				j += 16 + indexSpecial(b[j+16:])
			} else {
				j += 8
			}
		}
		for j < len(b) && !strSpecial[b[j]] {
			j++
		}
		if j >= len(b) {
			break
		}
		c := b[j]
		switch {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			if j+1 >= len(b) {
				return cut(j, "unterminated string")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return cut(j, "invalid \\u escape")
				}
				r, ok := hex4(b[j+2:])
				if !ok {
					return 0, &SyntaxError{Offset: j, Msg: "invalid \\u escape"}
				}
				if rest := b[j+6:]; truncated && isHigh(r) && len(rest) < 6 && (len(rest) < 2 || rest[0] == '\\' && rest[1] == 'u') {
					return j, ErrTruncated
				}
				j += 6
			default:
				return 0, &SyntaxError{Offset: j, Msg: "invalid escape"}
			}
		default:
			return 0, &SyntaxError{Offset: j, Msg: "control character in string"}
		}
	}
	if truncated {
		return len(b), ErrTruncated
	}
	return 0, &SyntaxError{Offset: i, Msg: "unterminated string"}
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Member is one key/value pair of an object.
type Member struct {
	Key   Value // the key's string literal
	Value Value
}

// Members calls fn for each member of the object v in order until fn
// returns false. v must come from Parse.
func (v Value) Members(fn func(m Member) bool) {
	if v.Kind() != Object {
		return
	}
	b := v.Buf
	i := skipWS(b, v.Start+1)
	for i < v.End && b[i] != '}' {
		ke := v.ends.skip(b, i)
		key := Value{Buf: b, Start: i, End: ke, ends: v.ends}
		i = skipWS(b, ke) + 1 // past ':'
		i = skipWS(b, i)
		ve := v.ends.skip(b, i)
		if !fn(Member{Key: key, Value: Value{Buf: b, Start: i, End: ve, ends: v.ends}}) {
			return
		}
		i = skipWS(b, ve)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// Elems calls fn for each element of the array v in order until fn returns
// false. v must come from Parse.
func (v Value) Elems(fn func(i int, e Value) bool) {
	if v.Kind() != Array {
		return
	}
	b := v.Buf
	i := skipWS(b, v.Start+1)
	for n := 0; i < v.End && b[i] != ']'; n++ {
		ve := v.ends.skip(b, i)
		if !fn(n, Value{Buf: b, Start: i, End: ve, ends: v.ends}) {
			return
		}
		i = skipWS(b, ve)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// Get returns the value of the last member of object v whose key decodes to
// name (the member a JavaScript or Go decoder would keep), and whether there
// is one.
func (v Value) Get(name string) (Value, bool) {
	var found Value
	ok := false
	v.Members(func(m Member) bool {
		if m.Key.IsString(name) {
			found, ok = m.Value, true
		}
		return true
	})
	return found, ok
}

// Fields sets vals[i] to what Get(keys[i]) returns, the value of the last
// member of object v called keys[i], or to the zero Value (Invalid) when v
// has none: the members of several names in one pass over v, each key
// decoded once. vals must be as long as keys.
func (v Value) Fields(vals []Value, keys ...string) {
	clear(vals)
	longest := 0
	for _, k := range keys {
		longest = max(longest, len(k))
	}
	v.Members(func(m Member) bool {
		raw := m.Key.Raw()
		if len(raw) > 2+6*longest {
			return true // longer than any key looked for, even escaped
		}
		inner := raw[1 : len(raw)-1]
		if hasBackslash(inner) {
			text, err := Decode(raw)
			if err != nil {
				return true
			}
			inner = text
		}
		for i, k := range keys {
			if string(inner) == k {
				vals[i] = m.Value
			}
		}
		return true
	})
}

// Index returns the n-th element of array v.
func (v Value) Index(n int) (Value, bool) {
	var found Value
	ok := false
	v.Elems(func(i int, e Value) bool {
		if i == n {
			found, ok = e, true
			return false
		}
		return true
	})
	return found, ok
}

// IsString reports whether v is a string whose decoded text equals s.
func (v Value) IsString(s string) bool {
	if v.Kind() != String {
		return false
	}
	raw := v.Raw()
	inner := raw[1 : len(raw)-1]
	if !hasBackslash(inner) {
		return string(inner) == s
	}
	text, err := Decode(raw)
	return err == nil && string(text) == s
}

// Text returns the decoded text of a string value, or "" for other kinds.
func (v Value) Text() string {
	if v.Kind() != String {
		return ""
	}
	text, err := Decode(v.Raw())
	if err != nil {
		return ""
	}
	return string(text)
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfString returns the offset just past the closing quote of the
// already validated string starting at b[i] == '"'.
func endOfString(b []byte, i int) int {
	if end, ok := closingQuote(b, i); ok {
		return end
	}
	return len(b)
}

// closingQuote returns the offset just past the first quote of b after
// b[i] == '"' that no backslash escapes, the end of a validated string,
// and false when b has none.
func closingQuote(b []byte, i int) (int, bool) {
	for j := i + 1; ; j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
	}
}

// skipValue returns the end of the already validated value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = endOfString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}
