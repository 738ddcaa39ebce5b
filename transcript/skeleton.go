package transcript

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/transcript-tool/transcript-tool/transcript/ahead"
)

// A Skeleton stands in for a line too long to hold in memory: the line with
// every long string literal cut to a stub of a fixed length. The stub keeps
// the first bytes of the string and pads it, so that the skeleton is valid
// JSON exactly when the line is, and code that only looks at keys, short
// values, lengths compared with a threshold and the first bytes of long
// strings sees the same line. The cut bytes stay in the file the line was
// read from; Stubs says where.
type Skeleton struct {
	Text  []byte
	Stubs []Stub   // in the order of the line
	Sum   [32]byte // SHA-256 of the whole line
	Len   int64    // length of the whole line
	// Invalid is set when a cut string holds what JSON forbids there (a
	// control character, a bad escape) or never ends: the line is not JSON.
	Invalid bool
}

// Stub is one cut string literal, quotes included: Text[Start:End] in the
// skeleton, bytes [Orig, OrigEnd) of the line. Its first Kept bytes (the
// opening quote and the string's first bytes) and its last (the closing
// quote) are the line's; the bytes between are padding.
type Stub struct {
	Start, End    int
	Orig, OrigEnd int64
	Kept          int
}

// Span returns the span of the line that the skeleton span [a, e) stands
// for, such as a value Parse found in Text. Neither end may fall inside a
// stub's padding.
func (s *Skeleton) Span(a, e int) (int64, int64) {
	return s.realOffset(a, false), s.realOffset(e, true)
}

// realOffset maps a skeleton offset outside any stub's padding to the
// line: the end of a span (end set) that reaches a stub's end maps to the
// end of its string.
func (s *Skeleton) realOffset(a int, end bool) int64 {
	shift := int64(0)
	for _, st := range s.Stubs {
		switch {
		case a < st.Start || a == st.Start && end:
			return int64(a) + shift
		case a <= st.Start+st.Kept:
			return st.Orig + int64(a-st.Start)
		case a <= st.End-1 || a < st.End && !end:
			return st.OrigEnd - int64(st.End-a)
		case a == st.End && end:
			return st.OrigEnd
		}
		shift += (st.OrigEnd - st.Orig) - int64(st.End-st.Start)
	}
	return int64(a) + shift
}

// ErrSkeletonTooLarge is returned by BuildSkeleton for a line whose
// skeleton would pass the limit: too much of it is structure or short
// values.
var ErrSkeletonTooLarge = errors.New("line too large to process in bounded memory")

// SkeletonOptions size a Skeleton.
type SkeletonOptions struct {
	// Long is the length, quotes included, from which a string literal is
	// cut to a stub.
	Long int
	// StubLen is a stub's length, quotes included; at least 64 and at
	// most Long.
	StubLen int
	// Max bounds the skeleton's length.
	Max int
}

// BuildSkeleton reads one line (without its end of line) from r and returns
// its skeleton.
func BuildSkeleton(r io.Reader, o SkeletonOptions) (*Skeleton, error) {
	if o.StubLen < 64 || o.StubLen > o.Long {
		return nil, fmt.Errorf("skeleton: stub length %d not in [64, %d]", o.StubLen, o.Long)
	}
	b := &skeletonBuilder{o: o, sk: &Skeleton{}}
	// The line is hashed on another core while its skeleton is built.
	h := sha256.New()
	hw := ahead.NewWriter(h)
	defer hw.Close()
	buf := make([]byte, 256<<10)
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		hw.Write(chunk)
		if ferr := b.feed(chunk); ferr != nil {
			return nil, ferr
		}
		b.off += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if b.inString {
		// Unterminated: not JSON. What was buffered goes in as it is, and
		// an open stub is closed; Parse then fails on the skeleton too.
		b.sk.Invalid = true
		if b.stub {
			b.closeStub(b.off)
		} else {
			b.sk.Text = append(b.sk.Text, b.str...)
		}
	}
	hw.Close()
	b.sk.Sum = [32]byte(h.Sum(nil))
	b.sk.Len = b.off
	return b.sk, nil
}

type skeletonBuilder struct {
	o   SkeletonOptions
	sk  *Skeleton
	off int64 // offset of the chunk being fed

	inString bool
	start    int64  // offset of the open string's quote
	str      []byte // the open string so far, quote included, until it is long
	stub     bool   // the open string is long: its bytes are skipped
	esc      int    // bytes of an escape still to come: -1 after a backslash, n of \u hex digits
}

func (b *skeletonBuilder) feed(chunk []byte) error {
	for i := 0; i < len(chunk); {
		if !b.inString {
			j := bytes.IndexByte(chunk[i:], '"')
			if j < 0 {
				j = len(chunk)
			} else {
				j += i
			}
			b.sk.Text = append(b.sk.Text, chunk[i:j]...)
			if len(b.sk.Text) > b.o.Max {
				return ErrSkeletonTooLarge
			}
			if j == len(chunk) {
				return nil
			}
			b.inString, b.stub, b.esc = true, false, 0
			b.start = b.off + int64(j)
			b.str = append(b.str[:0], '"')
			i = j + 1
			continue
		}
		j, closed := b.stringEnd(chunk, i)
		end := j
		if closed {
			end = j + 1
		}
		if !b.stub {
			b.str = append(b.str, chunk[i:end]...)
			switch {
			case closed && len(b.str) >= b.o.Long:
				b.openStub()
			case closed:
				b.sk.Text = append(b.sk.Text, b.str...)
				if len(b.sk.Text) > b.o.Max {
					return ErrSkeletonTooLarge
				}
			case len(b.str) >= b.o.Long-1:
				b.openStub()
			}
		}
		if closed {
			if b.stub {
				b.closeStub(b.off + int64(end))
			}
			b.inString = false
		}
		i = end
	}
	return nil
}

// stringEnd returns the offset of the open string's closing quote in
// chunk, from i on, and true; or len(chunk) and false when the string
// goes on past the chunk. What JSON forbids in a string sets
// sk.Invalid, and an escape the chunk's end cuts is kept in b.esc. Plain
// bytes and the common escapes are passed over sixteen at a time, as
// the parser does; the rest one by one.
func (b *skeletonBuilder) stringEnd(chunk []byte, j int) (int, bool) {
	for j < len(chunk) {
		if b.esc == 0 {
			j += skipEscaped(chunk[j:])
			if j == len(chunk) {
				break
			}
		}
		c := chunk[j]
		j++
		switch {
		case b.esc == -1:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b.esc = 0
			case 'u':
				b.esc = 4
			default:
				b.esc = 0
				b.sk.Invalid = true
			}
		case b.esc > 0:
			if !isHex(c) {
				b.sk.Invalid = true
			}
			b.esc--
		case c == '\\':
			b.esc = -1
		case c == '"':
			return j - 1, true
		default: // a control character
			b.sk.Invalid = true
		}
	}
	return len(chunk), false
}

// openStub turns the open string, now known to be long, into a stub: its
// kept prefix goes into the skeleton and the rest of it is skipped.
func (b *skeletonBuilder) openStub() {
	b.stub = true
	b.sk.Stubs = append(b.sk.Stubs, Stub{Start: len(b.sk.Text), Orig: b.start})
	room := b.o.StubLen - 2 - stubTagLen
	kept := stubPrefix(b.str, room)
	b.sk.Stubs[len(b.sk.Stubs)-1].Kept = kept
	b.sk.Text = append(b.sk.Text, b.str[:kept]...)
}

// stubTagLen is room kept at the end of every stub for its tag: its
// number, which keeps two stubs with the same prefix apart, between NUL
// escapes, so that a stub decodes to a text holding StubMark.
const stubTagLen = 32

// StubMark is in the decoded text of every stub: a key or a value that
// holds it may come from a cut string, not from the line.
const StubMark = "\x00stub"

// closeStub pads the open stub to its length and records where the string
// ended in the line.
func (b *skeletonBuilder) closeStub(origEnd int64) {
	s := &b.sk.Stubs[len(b.sk.Stubs)-1]
	tag := `\u0000stub` + strconv.Itoa(len(b.sk.Stubs)) + `\u0000`
	for len(b.sk.Text)-s.Start < b.o.StubLen-1-len(tag) {
		b.sk.Text = append(b.sk.Text, '.')
	}
	b.sk.Text = append(b.sk.Text, tag...)
	b.sk.Text = append(b.sk.Text, '"')
	s.End = len(b.sk.Text)
	s.OrigEnd = origEnd
	b.stub = false
}

// stubPrefix returns how much of str, a string literal's opening quote and
// first bytes, a stub keeps: at most n bytes, cut neither inside an escape
// sequence nor inside a UTF-8 sequence.
func stubPrefix(str []byte, n int) int {
	if n >= len(str) {
		n = len(str)
	}
	cut := 1
	for i := 1; i < n; {
		c := str[i]
		w := 1
		switch {
		case c == '\\':
			w = 2
			if i+1 < len(str) && str[i+1] == 'u' {
				w = 6
			}
		case c >= utf8.RuneSelf:
			_, w = utf8.DecodeRune(str[i:])
		}
		if i+w > n {
			break
		}
		i += w
		cut = i
	}
	return cut
}

// TooDeep reports whether the line read from r opens an array or object
// deeper than MaxDepth, reading it in pieces, for a line too long to hold
// (and whose skeleton is too large). A true answer means that Parse fails
// on the line: it is too deep, or not JSON before it gets that deep.
func TooDeep(r io.Reader) (bool, error) {
	buf := make([]byte, 256<<10)
	depth := 0
	inString, escaped := false, false
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			switch {
			case escaped:
				escaped = false
			case inString:
				switch c {
				case '\\':
					escaped = true
				case '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '[' || c == '{':
				if depth >= MaxDepth {
					return true, nil
				}
				depth++
			case c == ']' || c == '}':
				depth--
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
