//go:build !amd64 || purego

package transcript

// indexSpecial returns the index of the first byte of b that strSpecial
// marks, or len(b).
func indexSpecial(b []byte) int { return indexSpecialGeneric(b) }
