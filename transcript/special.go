package transcript

import "encoding/binary"

// indexSpecialGeneric returns the index of the first byte of b that
// strSpecial marks, or len(b): eight bytes at a time, then one by one.
func indexSpecialGeneric(b []byte) int {
	j := 0
	for j+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:])) {
		j += 8
	}
	for j < len(b) && !strSpecial[b[j]] {
		j++
	}
	return j
}
