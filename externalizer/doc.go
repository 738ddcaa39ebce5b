// Package externalizer moves large payloads of transcript entries into
// artifacts and puts them back exactly.
//
// # Sites
//
// A Format of package format knows where one agent's transcripts keep
// their payloads (tool results, command output, images): the payload sites
// of an entry. A site whose JSON bytes reach the threshold is replaced by
// a placeholder of the same JSON type that tells a reader what was there,
// how big it was and where the full content lives, if that shortens the
// line: a placeholder and the marker's record of it take a few hundred
// bytes, more than a small payload under a low threshold, so a site moves
// only if its line gets shorter, marker included, and a line never grows
// (but for an entry's own member named like the marker; see below).
//
// # Tool calls and summaries
//
// A Format also knows where the tool calls are. An Externalizer remembers
// the most recent calls of the file it rewrites (their names and main
// arguments, bounded), so that a result that names only its call's id
// (Claude Code's tool_use_id, Codex's call_id, a chat tool_call_id) is
// recorded with the tool's name, and its summary (package summary) says
// what the payload is: a file read, a command's output and exit status, a
// diff, JSON, an image, or text. Lines must be rewritten in order, as they
// come.
//
// # Artifacts
//
// Inside a site the large string values become artifacts: readable UTF-8
// text when one of the escaping styles of package transcript re-encodes the
// text to exactly the original bytes, decoded bytes for base64 images, and
// the raw JSON bytes otherwise. The small JSON around them is kept in the
// entry's marker.
//
// # Marker and exact restore
//
// Every changed entry gains one last member, "transcriptTool", that records
// the SHA-256 of the original line and, for each change, the JSON pointer of
// the changed value and how to rebuild it. Restore works from the marker
// alone, so a genuine payload that looks like a placeholder or an
// artifactRef is never taken for one, and it checks the rebuilt line against
// the recorded hash: it returns the original bytes or an error, never
// something in between. An entry that already has a marker, and restores from
// the store, is left as it is, which makes migration idempotent. An entry with a member of that name
// that is not a marker gains a real one after it, so that it too comes
// back exactly; JSON readers that keep the last of duplicate keys then see
// the marker, not the entry's own member.
package externalizer
