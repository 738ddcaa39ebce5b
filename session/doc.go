// Package session finds, opens and locks agents' session transcripts: the
// read side that migrate, inspect, fsck, show and recall share, so that
// none of them depends on another's writer.
//
// # What it does
//
// Collect walks PATH arguments into transcripts, skipping stores, hidden
// and temporary files, and searching only the session folders of the
// agents' homes; a file under several names is taken once. StoreFor and
// Root say where a transcript's default store is. Open reads a
// transcript, zstd-compressed or not, with its format and session id
// detected from its first lines; lines longer than LongLine are streamed,
// never held. Lock and LockAgentState keep other transcript-tool runs,
// and the agent that owns a transcript, away while it is rewritten in
// place; a Lease tells whether an agent opened it for writing as it
// was replaced.
//
// # Guarantees
//
// Nothing here writes a transcript or a store: rewriting stays with
// migrate. Memory does not grow with the length of a line: a compressed
// transcript's long lines are read back from an unlinked scratch file in
// the system's temporary directory, which no run leaves behind. A
// compressed transcript that declares a zstd window over 128 MiB is
// refused as such (ErrWindowTooLarge), and the windows being decoded at
// once, by every goroutine of the process, add up to 128 MiB at most: a
// decoder waits for its share, so that --jobs does not multiply them. Collect refuses a symbolic link to a file named on the command
// line and follows none found while walking. Lock never waits: a
// transcript another run holds is refused with ErrBusy.
//
// # Concurrency
//
// A Transcript is used by one goroutine; the functions may be called from
// many at once. Locks are advisory (flock) and go with the file
// descriptor: agents that append without locking are not hindered, and
// the caller detects their changes before it replaces a transcript. A
// Lease holds back an agent's open(2) of the file it covers until it is
// released, which its holder does within milliseconds.
package session
