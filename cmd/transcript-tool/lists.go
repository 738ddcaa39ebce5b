package main

import (
	"bufio"
	"bytes"
	varint "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
)

// listSpill keeps the lists of a run's reports (what gc collects from each
// store, what verify finds in each), each element some bytes, in order,
// in an unlinked temporary file rather than in memory: one list may hold
// millions.
type listSpill struct {
	what   string // what the lists hold, for messages
	sp     extsort.Spill
	buf    []byte
	chunks [][]extsort.Chunk // each list's
	n      int               // elements of the current list
}

// open makes the temporary file now, so that a command finds out that it
// cannot be made before it does anything.
func (l *listSpill) open() error {
	if err := l.sp.Open(); err != nil {
		return fmt.Errorf("keep the list of %s: %w", l.what, err)
	}
	return nil
}

// begin starts the next list and returns its number.
func (l *listSpill) begin() int {
	l.flush()
	l.chunks = append(l.chunks, nil)
	l.n = 0
	return len(l.chunks) - 1
}

// count returns how many elements the current list has.
func (l *listSpill) count() int { return l.n }

// add appends e to the current list; an error says that the lists could
// not be kept.
func (l *listSpill) add(e []byte) error {
	l.n++
	l.buf = append(varint.AppendUvarint(l.buf, uint64(len(e))), e...)
	if len(l.buf) >= 64<<10 {
		l.flush()
	}
	if err := l.sp.Err(); err != nil {
		return fmt.Errorf("keep the list of %s: %w", l.what, err)
	}
	return nil
}

func (l *listSpill) flush() {
	if len(l.buf) > 0 {
		last := len(l.chunks) - 1
		l.chunks[last] = append(l.chunks[last], l.sp.Write(l.buf))
		l.buf = l.buf[:0]
	}
}

// each calls fn with each element of list i, in order; e is valid until
// fn returns.
func (l *listSpill) each(i int, fn func(e []byte) error) error {
	l.flush()
	if err := l.sp.Err(); err != nil {
		return fmt.Errorf("keep the list of %s: %w", l.what, err)
	}
	var e []byte
	for _, ch := range l.chunks[i] {
		r := l.sp.Reader(ch)
		for {
			n, err := varint.ReadUvarint(r)
			if err == io.EOF {
				break
			}
			if err == nil {
				e = slices.Grow(e[:0], int(n))[:n]
				_, err = io.ReadFull(r, e)
			}
			if err != nil {
				return fmt.Errorf("read the list of %s: %w", l.what, err)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *listSpill) close() { l.sp.Close() }

// writeListsJSON writes reports as writeJSON does, the list of each
// report under key (an empty list in the report) made of the values
// elems passes put for the report's number, as json.MarshalIndent of
// the whole would write them.
func writeListsJSON[R any](w io.Writer, reports []R, key string, elems func(i int, put func(v any) error) error) error {
	if len(reports) == 0 {
		return writeJSON(w, reports)
	}
	empty := []byte(`"` + key + `": []`)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[\n")
	for i, rep := range reports {
		b, err := json.MarshalIndent(rep, "  ", "  ")
		if err != nil {
			return err
		}
		head, tail, ok := bytes.Cut(b, empty)
		if !ok {
			return fmt.Errorf("a report without its empty list %q", key)
		}
		bw.WriteString("  ")
		bw.Write(head)
		bw.Write(empty[:len(empty)-1])
		n := 0
		err = elems(i, func(v any) error {
			e, err := json.MarshalIndent(v, "      ", "  ")
			if err != nil {
				return err
			}
			if n > 0 {
				bw.WriteByte(',')
			}
			n++
			bw.WriteString("\n      ")
			bw.Write(e)
			return nil
		})
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString("\n    ")
		}
		bw.WriteByte(']')
		bw.Write(tail)
		if i < len(reports)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
}
