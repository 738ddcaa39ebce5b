// Package recall builds the bounded artifact-recall section of one session:
// the text an agent is shown so that it knows which large tool outputs of
// its session were moved to the artifact store, what they hold, and how to
// read them back (OpenClaw PR #9415: "Recall path injects top-K artifact
// summaries within a fixed budget").
//
// # The section
//
// A fixed header (a title and one line saying how to print an artifact
// with `transcript-tool cat`), a narrative of deterministic facts about the
// session (its id and format, number of entries, time span, tool calls by
// name, number and total size of its artifacts, and its last user request
// shortened), and one line per artifact, most recent first, with its short
// id, tool, size, summary and path. An artifact is as recent as the last
// entry whose marker references it; each artifact is listed once. The
// summary is summary.DescribeIn of the artifact's bytes, read from the
// store and checked against their hash; an artifact that is missing or
// corrupt is listed with a summary that says so.
//
// # Guarantees
//
// Bounded: all lengths are counted in Unicode code points
// (utf8.RuneCountInString), newlines included. Section.Text, the rendered
// markdown, is never longer than Options.MaxChars; Section.Items never has
// more than Options.MaxItems entries; Section.Narrative is never longer
// than Options.NarrativeMaxChars. Artifacts are chosen greedily, newest
// first: each is listed whole while it fits, the first that does not fit
// whole is listed with its summary shortened when at least a few
// characters of it fit, and the older ones are counted in one last line.
// A budget too small for the header gets a cut header and nothing else.
//
// Deterministic: the same transcript bytes, store contents and options
// give the same section, byte for byte: nothing depends on the clock, the
// environment or map iteration order.
//
// Read-only and confined: the transcript is read once, as a stream, one
// line at a time; the store is only read (Store.Open re-hashes every
// artifact described), and no more artifacts are read than can be listed.
// Text taken from the transcript, the registry or an artifact is made one
// line, free of control characters and terminal escapes, before it is
// shown.
package recall
