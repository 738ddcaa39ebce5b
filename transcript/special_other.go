//go:build !amd64 || purego

package transcript

// indexSpecial returns the index of the first byte of b that strSpecial
// marks, or len(b).
func indexSpecial(b []byte) int { return indexSpecialGeneric(b) }

// skipPlain16 returns 0: other architectures go over every string byte
// by byte past plainLen.
func skipPlain16(b []byte) int { return 0 }

// hasSkipPlain reports whether skipPlain16 does its work here.
const hasSkipPlain = false
