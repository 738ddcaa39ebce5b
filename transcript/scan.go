package transcript

import (
	"errors"
	"fmt"
	"io"
)

// ErrTruncated is returned by a Scanner of a truncated input that ends
// inside the value it scans.
var ErrTruncated = errors.New("JSON value cut by the end of the input")

// Token is one token of a JSON value, a span of a Scanner's input.
type Token struct {
	// Kind is the kind of value the token is (String, Number, Bool,
	// Null) or opens or closes (Object, Array); Invalid for no token.
	Kind Kind
	// Key is set for the name of an object's member.
	Key bool
	// End is set for the '}' or ']' that closes an object or array.
	End bool
	// Raw is the token's bytes: a whole literal, or the start of one the
	// end of a truncated input cuts.
	Raw []byte
}

// The states of a Scanner: what it expects next.
const (
	wantValue      = iota // a value: first, after ':', after ',' in an array
	wantFirstValue        // a value or ']', after '['
	wantFirstKey          // a key or '}', after '{'
	wantKey               // a key, after ',' in an object
	wantMore              // ',' or the closer, after a value in a container
	wantNothing           // the value is complete
)

// Scanner reads the tokens of the JSON value at the start of its input,
// checking the syntax as it goes. The input is the whole text, or only
// its start when it is truncated: a bounded window of a payload too large
// to look at whole. Then the end of the input inside the value is not an
// error but ErrTruncated, returned with what the end leaves of a
// literal; a literal cut by the end is not checked beyond what is there,
// and a string is cut before an escape, or a surrogate pair, that the end
// may have split.
//
// It never recurses and keeps one byte per open container, so its memory
// is bounded by its input whatever the nesting.
type Scanner struct {
	buf       []byte
	i         int
	truncated bool
	stack     []byte // '{' or '[' per open container
	want      uint8
	err       error
}

// NewScanner returns a Scanner of the value at the start of buf, the
// whole text or, when truncated, only its start.
func NewScanner(buf []byte, truncated bool) *Scanner {
	return &Scanner{buf: buf, truncated: truncated}
}

// Next returns the next token. White space is skipped; ',' and ':' are
// checked and passed over. After the value's last token Next returns
// io.EOF when nothing but white space follows the value, and a
// *SyntaxError otherwise. The token the end of a truncated input cuts, a
// literal or a member's name before its ':', comes with ErrTruncated.
// Every call after an error returns it again.
func (s *Scanner) Next() (Token, error) {
	if s.err != nil {
		return Token{}, s.err
	}
	tok, err := s.next()
	if err != nil {
		s.err = err
	}
	return tok, err
}

// ValueCut reports whether a truncated input ended inside a value or
// where one was due: after '[', after ',' in an array, or after a
// member's ':'. It is false for an end between the values of a
// container or inside a member's name. A caller that shows a cut
// container counts a value that the end cut, or left due, as one of its
// elements.
func (s *Scanner) ValueCut() bool {
	return s.err == ErrTruncated && (s.want == wantValue || s.want == wantFirstValue)
}

// Skip passes over the rest of the object or array whose opening token
// Next returned last.
func (s *Scanner) Skip() error {
	for depth := len(s.stack); len(s.stack) >= depth; {
		if _, err := s.Next(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scanner) next() (Token, error) {
	s.i = skipWS(s.buf, s.i)
	if s.i >= len(s.buf) {
		if s.want == wantNothing {
			return Token{}, io.EOF
		}
		return Token{}, s.end()
	}
	c := s.buf[s.i]
	switch s.want {
	case wantNothing:
		return Token{}, s.errf("unexpected %q after the value", c)
	case wantFirstValue, wantFirstKey:
		if c == closer(s.stack[len(s.stack)-1]) {
			return s.close(), nil
		}
		if s.want == wantFirstKey {
			return s.key()
		}
	case wantKey:
		return s.key()
	case wantMore:
		top := s.stack[len(s.stack)-1]
		if c == closer(top) {
			return s.close(), nil
		}
		if c != ',' {
			return Token{}, s.errf("expected ',' or %q, found %q", closer(top), c)
		}
		s.i++
		if top == '{' {
			s.want = wantKey
		} else {
			s.want = wantValue
		}
		return s.next()
	}
	return s.value(c)
}

// end is the error for an input that ends inside the value.
func (s *Scanner) end() error {
	if s.truncated {
		return ErrTruncated
	}
	return s.errf("unexpected end of input")
}

func (s *Scanner) errf(format string, args ...any) error {
	return &SyntaxError{Offset: s.i, Msg: fmt.Sprintf(format, args...)}
}

// close returns the token of the closer at s.i.
func (s *Scanner) close() Token {
	open := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	s.i++
	s.after()
	return Token{Kind: containerKind(open), End: true, Raw: s.buf[s.i-1 : s.i]}
}

// after sets what is expected after a complete value.
func (s *Scanner) after() {
	if len(s.stack) == 0 {
		s.want = wantNothing
	} else {
		s.want = wantMore
	}
}

func containerKind(open byte) Kind {
	if open == '{' {
		return Object
	}
	return Array
}

// key reads a member's name and the ':' after it.
func (s *Scanner) key() (Token, error) {
	if s.buf[s.i] != '"' {
		return Token{}, s.errf("expected a string key")
	}
	tok, err := s.str()
	if err != nil {
		return tok, err
	}
	s.i = skipWS(s.buf, s.i)
	if s.i >= len(s.buf) {
		return tok, s.end()
	}
	if s.buf[s.i] != ':' {
		return Token{}, s.errf("expected ':' after object key")
	}
	s.i++
	s.want = wantValue
	return tok, nil
}

// value reads the value that begins with c at s.i.
func (s *Scanner) value(c byte) (Token, error) {
	switch c {
	case '{', '[':
		s.stack = append(s.stack, c)
		s.i++
		if c == '{' {
			s.want = wantFirstKey
		} else {
			s.want = wantFirstValue
		}
		return Token{Kind: containerKind(c), Raw: s.buf[s.i-1 : s.i]}, nil
	case '"':
		tok, err := s.str()
		if err == nil {
			s.after()
		}
		return tok, err
	}
	// Another literal runs to the next delimiter.
	start := s.i
	for s.i < len(s.buf) && !delimiter[s.buf[s.i]] {
		s.i++
	}
	raw := s.buf[start:s.i]
	if s.i == len(s.buf) && s.truncated {
		return Token{Kind: literalKind(raw), Raw: raw}, ErrTruncated
	}
	if !validLiteral(raw) {
		s.i = start
		return Token{}, s.errf("invalid literal %q", raw)
	}
	s.after()
	return Token{Kind: literalKind(raw), Raw: raw}, nil
}

// delimiter marks the bytes that end a number, true, false or null.
var delimiter = [256]bool{',': true, ']': true, '}': true, ' ': true, '\t': true, '\r': true, '\n': true}

// literalKind returns the kind of the literal raw begins, or Invalid.
func literalKind(raw []byte) Kind {
	if len(raw) == 0 {
		return Invalid
	}
	return Value{Buf: raw, End: len(raw)}.Kind()
}

// validLiteral reports whether raw is exactly a number, true, false or
// null.
func validLiteral(raw []byte) bool {
	switch string(raw) {
	case "true", "false", "null":
		return true
	}
	p := parser{buf: raw}
	return p.number() == nil && p.i == len(raw)
}

// str reads the string literal at s.i, a member's name or a value.
func (s *Scanner) str() (Token, error) {
	start := s.i
	end, err := scanString(s.buf, start, s.truncated)
	switch {
	case err == ErrTruncated:
		s.i = len(s.buf)
	case err != nil:
		return Token{}, err
	default:
		s.i = end
	}
	return Token{Kind: String, Key: s.want == wantKey || s.want == wantFirstKey, Raw: s.buf[start:end]}, err
}
