// Package ahead passes what is written to it on to another writer in a
// goroutine of its own, so that making the next bytes overlaps taking
// these: on a long line, decoding a string on one core while its text
// is hashed on the other.
package ahead

import "io"

// buffers is how many writes may wait for the other writer: one being
// written, one ready.
const buffers = 2

// Writer writes to W, in order, in a goroutine of its own, copies of
// what is written to it. Close must be called, also after an error: it
// waits for the last write and ends the goroutine. A Writer is not safe
// for concurrent use.
type Writer struct {
	w    io.Writer
	free chan []byte
	full chan []byte
	errc chan error // W's first error
	done chan struct{}
	err  error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer {
	a := &Writer{w: w, free: make(chan []byte, buffers), full: make(chan []byte, buffers),
		errc: make(chan error, 1), done: make(chan struct{})}
	for range buffers {
		a.free <- nil
	}
	go a.run()
	return a
}

func (a *Writer) run() {
	defer close(a.done)
	failed := false
	for b := range a.full {
		if !failed {
			if _, err := a.w.Write(b); err != nil {
				failed = true
				a.errc <- err
			}
		}
		a.free <- b
	}
}

// Write hands a copy of p to the goroutine and returns; it waits only
// while both buffers are taken. An error W returned for an earlier write
// is returned instead, and by every later call.
func (a *Writer) Write(p []byte) (int, error) {
	if a.failed() {
		return 0, a.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	b := <-a.free
	a.full <- append(b[:0], p...)
	return len(p), nil
}

// failed reports whether W has returned an error, keeping it in a.err.
func (a *Writer) failed() bool {
	if a.err == nil {
		select {
		case a.err = <-a.errc:
		default:
		}
	}
	return a.err != nil
}

// Close waits until W has taken every write, ends the goroutine and
// returns W's first error. Calls after the first do nothing but return
// that error again.
func (a *Writer) Close() error {
	select {
	case <-a.done:
	default:
		close(a.full)
		<-a.done
	}
	a.failed()
	return a.err
}
