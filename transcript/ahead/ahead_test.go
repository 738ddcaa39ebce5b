package ahead

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestWriterOrder: what W receives is every write, in order, though the
// caller reuses its buffer as soon as Write returns.
func TestWriterOrder(t *testing.T) {
	var got, want bytes.Buffer
	a := NewWriter(&got)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1000)
	for range 2000 {
		p := buf[:rng.IntN(len(buf))]
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		want.Write(p)
		if n, err := a.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("W got %d bytes, not the %d written in order", got.Len(), want.Len())
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// failAfter accepts n writes and fails the others.
type failAfter struct{ n int }

var errFull = errors.New("full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errFull
	}
	f.n--
	return len(p), nil
}

// TestWriterError: W's error comes back from a later Write or from
// Close, and W gets no write after it.
func TestWriterError(t *testing.T) {
	f := &failAfter{n: 3}
	a := NewWriter(f)
	var werr error
	for range 100 {
		if _, werr = a.Write([]byte("x")); werr != nil {
			break
		}
	}
	if err := a.Close(); !errors.Is(err, errFull) {
		t.Fatalf("Close = %v, want %v", err, errFull)
	}
	if werr != nil && !errors.Is(werr, errFull) {
		t.Fatalf("Write = %v, want %v", werr, errFull)
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, errFull) {
		t.Fatalf("Write after Close = %v, want %v", err, errFull)
	}
	if f.n != 0 {
		t.Fatalf("W took %d writes, want 3", 3-f.n)
	}
}
