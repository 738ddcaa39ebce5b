package inspect

// SetMaxHeld sets how many findings of a file are held before its turn,
// and returns the function that sets it back.
func SetMaxHeld(n int) (restore func()) {
	old := maxHeld
	maxHeld = n
	return func() { maxHeld = old }
}

// ReadWhole makes Check and Stats read every line whole, as they read
// lines shorter than session.LongLine, and returns the function that sets
// it back.
func ReadWhole() (restore func()) {
	holdLong = true
	return func() { holdLong = false }
}
