// Package inspect reads transcripts to judge and measure them: Check finds
// what a CI gate should refuse (inline payloads, long lines, large files,
// references that do not restore) and Stats reports where the bytes are and
// what a migration would save.
//
// # Guarantees
//
// Read-only: nothing is written, renamed or created, not even an empty
// store; artifacts are opened for reading only. Streaming: a transcript is
// read one line at a time and no more than that line (and, for Stats, one
// decoded payload beside it) is held, so files of any size are fine. What
// is kept from line to line is small: the names of tool calls (at most
// 65,536 per file), table rows (at most 1,000 a table), the largest
// payloads, and for Stats a digest per distinct artifact. Every format: each file is read with the
// format migrate would use for it (detected from its first lines, or the
// one named), through the same payload sites, so a payload Check reports
// is one that migrate moves at the same threshold, and a tree migrated at a
// threshold passes a check at that size: a site that its entry's marker
// records as replaced is a placeholder, not a payload (with a store, Check
// proves every marker by restoring its line). Stats predicts savings
// by running the externalizer migrate runs, with a store that only records
// digests, so prediction and migration cannot drift apart. A file of no
// known format is still measured by its lines and size.
//
// Files are read one after another, in the order given, so that reports
// come out in a stable order.
package inspect
