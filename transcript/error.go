package transcript

import "fmt"

// InputError is a problem with a transcript's content at a known place.
type InputError struct {
	Path   string
	Line   int   // 1-based
	Offset int64 // byte offset of the line in the file
	Err    error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s:%d: byte %d: %v", e.Path, e.Line, e.Offset, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }
