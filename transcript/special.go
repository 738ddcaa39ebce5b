package transcript

import "encoding/binary"

// plainLen returns the length of the run of plain string content b starts
// with: the index of the first byte of b that strSpecial marks, or len(b).
func plainLen(b []byte) int {
	// In text dense with escapes the next special byte is often within
	// a few bytes: two words are tested in line before indexSpecial's
	// call.
	j := 0
	if len(b) >= 16 && !special8(binary.LittleEndian.Uint64(b)) {
		if !special8(binary.LittleEndian.Uint64(b[8:])) {
			return 16 + indexSpecial(b[16:])
		}
		j = 8
	}
	for j < len(b) && !strSpecial[b[j]] {
		j++
	}
	return j
}

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

// hasHigh reports whether b holds DEL or a byte of a non-ASCII character
// (0x7f and above): adding one to a byte below 0x80 sets its high bit
// only when it is DEL.
func hasHigh(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	var acc uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		acc |= x | (x + ones)
	}
	if acc&highs != 0 {
		return true
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x7f {
			return true
		}
	}
	return false
}

// IndexSpecial returns the index of the first quote, backslash or control
// character of b, or len(b): where a run of plain string content ends.
// It is the parser's scanner, sixteen bytes at a time where there is
// assembly for it, for code that follows strings through bytes of its
// own.
func IndexSpecial(b []byte) int { return plainLen(b) }

// shortEscape marks the letters of the two-byte escapes.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// skipEscaped returns the length of the run of string content b starts
// with that holds only plain bytes and two-byte escapes: it stops at a
// quote, a control character, a \u escape, a backslash that begins no
// escape, or one that ends b.
func skipEscaped(b []byte) int {
	j := 0
	for {
		if len(b)-j >= 32 {
			j += skipPlain16(b[j:])
		}
		j += plainLen(b[j:])
		if j+1 >= len(b) || b[j] != '\\' || !shortEscape[b[j+1]] {
			return j
		}
		j += 2
	}
}
