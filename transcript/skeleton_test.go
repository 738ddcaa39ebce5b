package transcript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// expand rebuilds the line from a skeleton and the line's bytes.
func expand(sk *Skeleton, line []byte) []byte {
	var out []byte
	pos := 0
	for _, s := range sk.Stubs {
		out = append(out, sk.Text[pos:s.Start]...)
		out = append(out, line[s.Orig:s.OrigEnd]...)
		pos = s.End
	}
	return append(out, sk.Text[pos:]...)
}

func skeletonLines(rng *rand.Rand) [][]byte {
	long := strings.Repeat(`ab\"c\\\n\u00e9é漢字😀 `, 40)
	lines := [][]byte{
		[]byte(`{"a":"` + long + `","b":[1,2,"` + long + long + `"],"` + long + `":true}`),
		[]byte(`{"short":"x","n":1e400,"s":"` + strings.Repeat("y", 300) + `"}`),
		[]byte(`{"bad":"` + long + "\x01" + `"}`),
		[]byte(`{"bad":"` + long + `\x"}`),
		[]byte(`{"bad":"` + long + `\u12G4"}`),
		[]byte(`{"open":"` + long),
		[]byte(`not json "` + long + `" at all`),
		[]byte(`["` + long + `\`),
		[]byte(`{"esc":"` + strings.Repeat(`\\`, 400) + `"}`),
		[]byte(`{"u":"` + strings.Repeat(`\ud83d\ude00`, 100) + `"}`),
		[]byte(``),
	}
	for n := 0; n < 200; n++ {
		var b bytes.Buffer
		b.WriteString(`{"k":[`)
		for i := rng.IntN(6); i >= 0; i-- {
			b.WriteString(`"`)
			for j := rng.IntN(120); j >= 0; j-- {
				b.WriteString([]string{"a", `\n`, `\"`, "é", `\u0041`, "xyz", `\\`}[rng.IntN(7)])
			}
			b.WriteString(`",`)
		}
		b.WriteString(`0]}`)
		lines = append(lines, b.Bytes())
	}
	return lines
}

func TestBuildSkeleton(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	o := SkeletonOptions{Long: 200, StubLen: 100, Max: 1 << 20}
	for _, line := range skeletonLines(rng) {
		sk, err := BuildSkeleton(bytes.NewReader(line), o)
		if err != nil {
			t.Fatalf("%.200q: %v", line, err)
		}
		one, err := BuildSkeleton(iotest.OneByteReader(bytes.NewReader(line)), o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Text, sk.Text) || len(one.Stubs) != len(sk.Stubs) || one.Invalid != sk.Invalid {
			t.Fatalf("line of %d bytes: byte by byte, another skeleton:\n%.300q\n%.300q", len(line), one.Text, sk.Text)
		}
		if sk.Len != int64(len(line)) || sk.Sum != sha256.Sum256(line) {
			t.Errorf("%q: Len %d, Sum %x", line, sk.Len, sk.Sum)
		}
		if got := expand(sk, line); !bytes.Equal(got, line) {
			t.Fatalf("expanded skeleton differs:\n%q\n%q", got, line)
		}
		for _, s := range sk.Stubs {
			if s.End-s.Start != o.StubLen {
				t.Errorf("%q: stub of %d bytes, want %d", line, s.End-s.Start, o.StubLen)
			}
			if s.OrigEnd-s.Orig < int64(o.Long) && !sk.Invalid {
				t.Errorf("%q: a string of %d bytes was cut", line, s.OrigEnd-s.Orig)
			}
		}
		_, perr := Parse(line, 0)
		_, serr := Parse(sk.Text, 0)
		if (perr == nil) != (serr == nil && !sk.Invalid) {
			t.Errorf("%q: line parses: %v; skeleton parses: %v, invalid %v", line, perr, serr, sk.Invalid)
		}
	}
}

func TestBuildSkeletonTooLarge(t *testing.T) {
	line := []byte(`[` + strings.Repeat(`1,`, 1000) + `1]`)
	if _, err := BuildSkeleton(bytes.NewReader(line), SkeletonOptions{Long: 200, StubLen: 100, Max: 1000}); err != ErrSkeletonTooLarge {
		t.Fatalf("err = %v, want ErrSkeletonTooLarge", err)
	}
}

func TestReaderLimit(t *testing.T) {
	long := strings.Repeat("x", 5000)
	input := "short\n" + long + "\r\n" + "mid" + long[:97] + "\n" + long + "\n\r\n" + long
	for _, chunked := range []bool{false, true} {
		var src io.Reader = strings.NewReader(input)
		if chunked {
			src = iotest.HalfReader(src)
		}
		r := NewReader(bufio.NewReaderSize(src, 16))
		r.Limit = 100
		type got struct {
			text string
			long bool
			n    int64
			eol  string
			off  int64
		}
		var lines []got
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n := l.Len
			if !l.Long {
				n = int64(len(l.Text))
			}
			lines = append(lines, got{string(l.Text), l.Long, n, string(l.EOL), l.Offset})
		}
		want := []got{
			{"short", false, 5, "\n", 0},
			{"", true, 5000, "\r\n", 6},
			{"mid" + long[:97], false, 100, "\n", 5008},
			{"", true, 5000, "\n", 5109},
			{"", false, 0, "\r\n", 10110},
			{"", true, 5000, "", 10112},
		}
		if len(lines) != len(want) {
			t.Fatalf("chunked %v: %d lines, want %d: %+v", chunked, len(lines), len(want), lines)
		}
		for i := range want {
			if lines[i] != want[i] {
				t.Errorf("chunked %v: line %d = %+v, want %+v", chunked, i+1, lines[i], want[i])
			}
		}
	}
}

// FuzzSkeleton: any line's skeleton expands back to it, is the same fed
// byte by byte, keeps every stub's length, and parses exactly when the
// line does.
func FuzzSkeleton(f *testing.F) {
	for _, l := range skeletonLines(rand.New(rand.NewPCG(1, 1))) {
		f.Add(l)
	}
	o := SkeletonOptions{Long: 80, StubLen: 64, Max: 1 << 20}
	f.Fuzz(func(t *testing.T, line []byte) {
		sk, err := BuildSkeleton(bytes.NewReader(line), o)
		if err != nil {
			t.Fatal(err)
		}
		one, err := BuildSkeleton(iotest.OneByteReader(bytes.NewReader(line)), o)
		if err != nil {
			t.Fatal(err)
		}
		sameSkeleton(t, "whole", sk, one)
		if got := expand(sk, line); !bytes.Equal(got, line) {
			t.Fatalf("expands to %q, not %q", got, line)
		}
		for _, s := range sk.Stubs {
			if s.End-s.Start != o.StubLen || s.Kept < 1 || s.Kept > o.StubLen-2 {
				t.Fatalf("stub %+v", s)
			}
			if !bytes.Equal(sk.Text[s.Start:s.Start+s.Kept], line[s.Orig:s.Orig+int64(s.Kept)]) {
				t.Fatalf("stub %+v does not keep the string's first bytes", s)
			}
		}
		_, perr := Parse(line, 0)
		_, serr := Parse(sk.Text, 0)
		if (perr == nil) != (serr == nil && !sk.Invalid) {
			t.Fatalf("line parses: %v; skeleton parses: %v, invalid %v", perr, serr, sk.Invalid)
		}
	})
}

// chunkReader gives its bytes in reads of the lengths in sizes, the last
// repeated.
type chunkReader struct {
	b     []byte
	sizes []int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(r.sizes[0], len(p), len(r.b))
	if len(r.sizes) > 1 {
		r.sizes = r.sizes[1:]
	}
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// sameSkeleton fails unless got and want are the same skeleton.
func sameSkeleton(t *testing.T, what string, got, want *Skeleton) {
	t.Helper()
	if !bytes.Equal(got.Text, want.Text) || got.Invalid != want.Invalid || got.Sum != want.Sum || got.Len != want.Len || !slices.Equal(got.Stubs, want.Stubs) {
		t.Fatalf("%s: another skeleton:\n%+v %v\n%.300q\nbyte by byte:\n%+v %v\n%.300q", what, got.Stubs, got.Invalid, got.Text, want.Stubs, want.Invalid, want.Text)
	}
}

// TestSkeletonChunks: the skeleton of a line read in two pieces, cut at
// every offset (inside every escape, \u sequence, surrogate pair and
// UTF-8 sequence among them), or in pieces of every length up to 40, is
// the one built byte by byte, where every byte goes through the escape
// state machine alone.
func TestSkeletonChunks(t *testing.T) {
	long := strings.Repeat(`ab\"c\\\n\u00e9é漢字😀\ud83d\ude00\/\t `, 6)
	lines := []string{
		`{"a":"` + long + `","b":[1,"` + long + `"],"c":"short\n\u0041"}`,
		`{"bad":"` + long + "\x01" + `\x\u12G4\uD83D` + long + `"}`,
		`{"cut":"` + long + "\xe6\x97\xff" + `\`,
		`{"u":"` + strings.Repeat(`\ud83d\ude00`, 30) + `","e":"` + strings.Repeat(`\\`, 100) + `\"` + `"}`,
		`{"q":"\u12"` + long + `"}`,
	}
	o := SkeletonOptions{Long: 80, StubLen: 64, Max: 1 << 20}
	for _, line := range lines {
		want, err := BuildSkeleton(iotest.OneByteReader(strings.NewReader(line)), o)
		if err != nil {
			t.Fatal(err)
		}
		for cut := 0; cut <= len(line); cut++ {
			got, err := BuildSkeleton(&chunkReader{b: []byte(line), sizes: []int{cut, len(line)}}, o)
			if err != nil {
				t.Fatal(err)
			}
			sameSkeleton(t, fmt.Sprintf("%.40q cut at %d", line, cut), got, want)
		}
		for size := 2; size <= 40; size++ {
			got, err := BuildSkeleton(&chunkReader{b: []byte(line), sizes: []int{size}}, o)
			if err != nil {
				t.Fatal(err)
			}
			sameSkeleton(t, fmt.Sprintf("%.40q in pieces of %d", line, size), got, want)
		}
	}
}

// TestTooDeep: TooDeep says true exactly where Parse refuses a line as too
// deep, brackets inside strings not counting.
func TestTooDeep(t *testing.T) {
	open := func(n int) string { return strings.Repeat(`{"a":[`, n/2) + strings.Repeat("[", n%2) }
	close := func(n int) string { return strings.Repeat("]", n%2) + strings.Repeat("]}", n/2) }
	for _, line := range []string{
		open(MaxDepth) + "1" + close(MaxDepth),
		open(MaxDepth+1) + "1" + close(MaxDepth+1),
		`["` + strings.Repeat("[", 2*MaxDepth) + `"]`,
		`["\"` + strings.Repeat("{", 2*MaxDepth) + `"]`,
		`["\\",` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `]`,
		`["\\",` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `]`,
		strings.Repeat("[", 3*MaxDepth),
	} {
		_, perr := Parse([]byte(line), 0)
		deep, err := TooDeep(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if want := errors.Is(perr, ErrTooDeep); deep != want {
			t.Errorf("TooDeep(%.60q…) = %v; Parse says %v", line, deep, perr)
		}
	}
}
