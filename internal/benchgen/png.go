package benchgen

import (
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
)

// A PNG here is a square 8-bit RGB image of noise, each row unfiltered,
// compressed into stored (uncompressed) deflate blocks, one per IDAT
// chunk: its size is known in advance and its bytes are the same with
// every Go release.

const (
	pngSignature = "\x89PNG\r\n\x1a\n"
	maxStored    = 65535 // bytes of a stored deflate block
	chunkCost    = 12    // length, type and CRC of a chunk
	// pngFixed is what a PNG holds besides pixels and block headers: the
	// signature, IHDR, the zlib header and checksum, IEND.
	pngFixed = len(pngSignature) + chunkCost + 13 + 2 + 4 + chunkCost
)

// pngSide is the side in pixels of the image writePNG writes for n bytes.
func pngSide(n int) int {
	return max(1, int(math.Sqrt(float64(max(n-pngFixed, 0)/3))))
}

// pngLen is the size of the PNG writePNG writes for n bytes: about n.
func pngLen(n int) int {
	side := pngSide(n)
	raw := side * (1 + 3*side)
	blocks := (raw + maxStored - 1) / maxStored
	return pngFixed + blocks*(chunkCost+5) + raw
}

// writePNG writes to w a PNG image of about n bytes of noise drawn from r.
func writePNG(w io.Writer, r *rand.Rand, n int) error {
	side := pngSide(n)
	row := 1 + 3*side
	raw := side * row
	if _, err := io.WriteString(w, pngSignature); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(side))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(side))
	ihdr[8], ihdr[9] = 8, 2 // bit depth, colour type RGB; compression, filter and interlace 0
	if err := writeChunk(w, "IHDR", ihdr[:]); err != nil {
		return err
	}
	sum := adler32.New()
	buf := make([]byte, 0, 2+5+maxStored+4)
	col, bits, noise := 0, 0, uint64(0)
	for done := 0; done < raw; {
		size := min(maxStored, raw-done)
		buf = buf[:0]
		if done == 0 {
			buf = append(buf, 0x78, 0x01) // zlib: deflate, 32 KiB window, no dictionary
		}
		last := done+size == raw
		var final byte
		if last {
			final = 1
		}
		buf = append(buf, final, byte(size), byte(size>>8), ^byte(size), ^byte(size>>8))
		start := len(buf)
		buf = buf[:start+size]
		for i := start; i < len(buf); i++ {
			switch {
			case col == 0:
				buf[i] = 0 // filter type None
			default:
				if bits == 0 {
					noise, bits = r.Uint64(), 8
				}
				buf[i] = byte(noise)
				noise >>= 8
				bits--
			}
			if col++; col == row {
				col = 0
			}
		}
		_, _ = sum.Write(buf[start:])
		done += size
		if last {
			buf = binary.BigEndian.AppendUint32(buf, sum.Sum32())
		}
		if err := writeChunk(w, "IDAT", buf); err != nil {
			return err
		}
	}
	return writeChunk(w, "IEND", nil)
}

func writeChunk(w io.Writer, typ string, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(data)))
	copy(head[4:], typ)
	crc := crc32.NewIEEE()
	_, _ = crc.Write(head[4:])
	_, _ = crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	for _, b := range [][]byte{head[:], data, tail[:]} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
