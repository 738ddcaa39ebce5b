// Package count counts the bytes that pass through a writer: the sizes
// migrate, stats and the benchmark generator report are those of what
// was written, not recomputed. A Writer is not safe for concurrent use.
package count

import "io"

// Writer counts the bytes written through it to W, or, with W nil, the
// bytes written to it, which it then keeps none of.
type Writer struct {
	W io.Writer
	N int64 // bytes written so far: those W accepted
}

// Write writes p to W, when there is one, and adds what was written to N.
func (c *Writer) Write(p []byte) (int, error) {
	if c.W == nil {
		c.N += int64(len(p))
		return len(p), nil
	}
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
