// Package transcript reads JSONL transcripts line by line and locates JSON
// values inside a line by byte span, so that a line is changed by splicing
// bytes and never re-serialized.
//
// # Lines
//
// A Reader yields every line of its input with the exact bytes that end it
// ("\n", "\r\n" or nothing for a last line without a final newline), so that
// writing Text followed by EOL for every line reproduces the input byte for
// byte: a byte order mark, blank lines, lines that are not JSON and a torn
// last line included. Lines of any length are read; the Reader holds one line
// at a time.
//
// # Values
//
// Parse validates a line as one JSON value and returns it as a Value: a span
// of the line's bytes. Accessors walk objects and arrays lazily and return
// spans, never decoded trees. Nesting deeper than MaxDepth is refused with an
// error rather than risking the stack, and the caller keeps the line as it is.
//
// # Strings
//
// Decode turns a JSON string literal into its UTF-8 text; Encode writes text
// back in one of a few fixed escaping styles. A caller that needs the exact
// original bytes back checks that Encode(Decode(raw)) equals raw for some
// style before it relies on the text alone.
package transcript
