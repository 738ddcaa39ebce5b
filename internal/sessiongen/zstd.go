package sessiongen

import "encoding/binary"

// ZstdFrame returns data as one zstd frame of raw blocks that declares a
// window of 1<<windowLog bytes (10 to 41), however short data is, as
// zstd --long=windowLog does for a stream of unknown length: a decoder
// that allocates the window it is told takes that much memory for it.
func ZstdFrame(data []byte, windowLog int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	// No content size, no checksum, no dictionary; the window's exponent.
	out = append(out, 0, byte(windowLog-10)<<3)
	for {
		n := min(len(data), 128<<10, 1<<windowLog) // a block fits in the window
		h := uint32(n) << 3                        // a raw block
		if n == len(data) {
			h |= 1 // the last
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		out = append(out, data[:n]...)
		data = data[n:]
		if len(data) == 0 {
			return out
		}
	}
}
