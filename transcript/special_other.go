//go:build !amd64 || purego

package transcript

// indexSpecial returns the index of the first byte of b that strSpecial
// marks, or len(b).
func indexSpecial(b []byte) int { return indexSpecialGeneric(b) }

// skipPlain16 returns 0: without assembly, scanString's Go loop goes
// over every string.
func skipPlain16(b []byte) int { return 0 }
