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
// # Prefixes
//
// A Scanner reads the tokens of a JSON value that may be cut short: a
// bounded window at the start of a payload too large to look at whole. It
// checks the syntax of what the window holds and reports the end of the
// window inside the value as ErrTruncated, not as an error of the value.
//
// # Strings
//
// Decode turns a JSON string literal into its UTF-8 text; Encode writes text
// back in one of a few fixed escaping styles. A caller that needs the exact
// original bytes back checks that Encode(Decode(raw)) equals raw for some
// style before it relies on the text alone. AppendLossy decodes for people
// and summaries: it never fails, turns unpaired surrogates into U+FFFD, and
// reads the start of a literal a Scanner cut. Every one of them reads
// escapes through Unescape.
//
// # Speed
//
// Most of a transcript's bytes are inside strings. On amd64, Parse and
// AppendTextForm go over string content sixteen bytes at a time with SSE2
// (special_amd64.s; every amd64 processor has it), passing the common
// two-byte escapes without returning to Go; elsewhere, and with the
// purego build tag, eight bytes at a time in Go. Both are tested against
// the same rules, and Parse against encoding/json by fuzzing.
package transcript
