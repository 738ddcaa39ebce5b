package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// Line is one line of a transcript.
type Line struct {
	// Num is the 1-based line number.
	Num int
	// Offset is the byte offset of the line's first byte in the input.
	Offset int64
	// Text is the line without its terminator. It is valid until the next
	// call to Next.
	Text []byte
	// EOL is "\n", "\r\n", or empty for a last line without a newline.
	EOL []byte
	// Long is set, and Text nil, for a line longer than the Reader's
	// Limit; Len is then its length without EOL, and its bytes are
	// Offset to Offset+Len of the input.
	Long bool
	Len  int64
}

var (
	eolLF   = []byte("\n")
	eolCRLF = []byte("\r\n")
)

// Reader reads lines of any length from a stream, one at a time, keeping
// every byte of the input.
type Reader struct {
	// Limit, when positive, is the longest line Next returns with its
	// text; a longer one is skipped and returned as Long.
	Limit int

	br     *bufio.Reader
	pooled bool // br is NewReader's, from bufReaders
	buf    []byte
	num    int
	offset int64
}

// bufReaders are the buffers of Readers over unbuffered streams, reused:
// a run over a hundred thousand small files, or over as many artifacts
// restored, would otherwise allocate and clear a quarter of a megabyte
// for each.
var bufReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// NewReader returns a Reader over r. Release gives back the buffer it
// takes when r is not a *bufio.Reader.
func NewReader(r io.Reader) *Reader {
	if br, ok := r.(*bufio.Reader); ok {
		return &Reader{br: br}
	}
	br := bufReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return &Reader{br: br, pooled: true}
}

// Release ends the use of r: the buffer NewReader took for it goes back
// for another Reader. Neither r nor the lines it returned may be used
// after. Release may be called more than once.
func (r *Reader) Release() {
	if r.pooled {
		r.br.Reset(nil)
		bufReaders.Put(r.br)
		r.br, r.pooled = nil, false
	}
}

// Next returns the next line, or io.EOF when the input is exhausted. A line
// is returned whole whatever its length; its Text aliases a buffer that the
// next call reuses.
func (r *Reader) Next() (Line, error) {
	r.buf = r.buf[:0]
	// Pieces that do not fit the buffer are kept aside and joined once at
	// the end, so a huge line costs one exact allocation, not a series of
	// growing copies.
	var aside [][]byte
	size := 0
	long := false
	var last2 [2]byte // the line's last two bytes, once Long
	for {
		chunk, err := r.br.ReadSlice('\n')
		size += len(chunk)
		if !long && r.Limit > 0 && size > r.Limit+2 {
			// Only a CR LF may follow the text of a line of Limit bytes.
			long, aside = true, nil
			r.buf = r.buf[:0]
		}
		if long {
			if len(chunk) >= 2 {
				last2 = [2]byte{chunk[len(chunk)-2], chunk[len(chunk)-1]}
			} else if len(chunk) == 1 {
				last2 = [2]byte{last2[1], chunk[0]}
			}
		} else if aside == nil && (size <= cap(r.buf) || err == nil) {
			// A line that ends in this chunk is copied once, the buffer
			// grown if it must be: set aside, it would be copied twice.
			r.buf = append(r.buf, chunk...)
		} else {
			aside = append(aside, bytes.Clone(chunk))
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if size == 0 {
				return Line{}, io.EOF
			}
			break
		}
		return Line{}, err
	}
	if long {
		line := Line{Num: r.num + 1, Offset: r.offset, Long: true, Len: int64(size)}
		switch {
		case last2 == [2]byte{'\r', '\n'}:
			line.EOL, line.Len = eolCRLF, line.Len-2
		case last2[1] == '\n':
			line.EOL, line.Len = eolLF, line.Len-1
		}
		r.num++
		r.offset += int64(size)
		return line, nil
	}
	if aside != nil {
		buf := make([]byte, 0, size)
		buf = append(buf, r.buf...)
		for _, c := range aside {
			buf = append(buf, c...)
		}
		r.buf = buf
	}
	line := Line{Num: r.num + 1, Offset: r.offset, Text: r.buf}
	switch {
	case bytes.HasSuffix(r.buf, eolCRLF):
		line.Text, line.EOL = r.buf[:len(r.buf)-2], eolCRLF
	case bytes.HasSuffix(r.buf, eolLF):
		line.Text, line.EOL = r.buf[:len(r.buf)-1], eolLF
	}
	r.num++
	r.offset += int64(len(r.buf))
	return line, nil
}

// BOM is the UTF-8 byte order mark some editors put at the start of a file.
var BOM = []byte{0xEF, 0xBB, 0xBF}

// JSONStart returns the offset in text where JSON content may begin: past a
// byte order mark on the first line. Leading white space is left to Parse.
func JSONStart(l Line) int {
	i := 0
	if l.Num == 1 && bytes.HasPrefix(l.Text, BOM) {
		i = len(BOM)
	}
	return i
}
