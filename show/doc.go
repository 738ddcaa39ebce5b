// Package show renders an agent session transcript as a person reads it:
// for each entry its time and role, the conversation's text, thinking and
// tool calls on one line each, tool results cut to their first lines, and
// images and migrated payloads as one line each.
//
// # Read-only and streaming
//
// Render reads a transcript one line at a time and writes each entry as it
// goes. It never writes to the transcript or to the artifact store, and holds
// one line at a time: with Options.Rehydrate, the line is rebuilt from the
// store in memory first, so memory is bounded by the longest original line.
//
// # References
//
// A payload that migration moved into the store is recognised from the
// entry's marker (its last member, "transcriptTool"), whose edits point at
// the values that placeholders replaced; placeholder text is never taken
// for a reference, so a genuine payload that looks like one is shown as the
// text it is. A reference is shown as one line: the artifact's short id, its
// size and kind, and its path in the store. With Options.Rehydrate the
// original entry is rebuilt from the store (and checked against the hash its
// marker records) and shown instead.
//
// # Output
//
// The output depends only on the input, the options and the store: times
// are shown in UTC, and nothing depends on the clock or the locale. Escape
// sequences and control characters in the transcript's text are removed or
// made visible, so that only Render's own colours (Options.Color) reach a
// terminal.
package show
