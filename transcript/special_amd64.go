//go:build !purego

package transcript

// indexSpecial returns the index of the first byte of b that strSpecial
// marks, or len(b). Sixteen bytes are tested at once with SSE2, which
// every amd64 processor has; the last few bytes one by one.
func indexSpecial(b []byte) int {
	i := indexSpecial16(b)
	return i + indexSpecialGeneric(b[i:])
}

// indexSpecial16 returns the index of the first byte that strSpecial marks
// in the first len(b) &^ 15 bytes of b, or len(b) &^ 15.
//
//go:noescape
func indexSpecial16(b []byte) int

// skipPlain16 returns how many bytes of the string content b starts with
// are plain bytes or two-byte escapes (\" \\ \/ \b \f \n \r \t), with
// SSE2; it stops at anything else, and within the last sixteen bytes of
// b, which the caller goes over itself.
//
//go:noescape
func skipPlain16(b []byte) int
