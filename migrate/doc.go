// Package migrate runs migrations and rehydrations over many transcript
// files, as package session finds and opens them: it runs a pool of
// workers, writes every output atomically and reports per file.
//
// # Guarantees
//
// For each transcript, in this order: artifacts are written and made
// durable, then the registry records are appended, then the new transcript
// is written to a temporary file beside its destination and fsynced. Each
// rewritten line was proved to rebuild the original from its marker
// (externalizer.Rewrite checks it); the source is checked not to have
// changed since it was read
// (size, modification time, inode); only then is the temporary file renamed
// over the destination and the directory fsynced. A crash at any point
// leaves the original transcript or the complete migrated one, and at worst
// artifacts that nothing references yet.
//
// # Agents writing meanwhile
//
// A transcript that changed while it was read is left untouched. In place,
// the last check is made under a read lease (session.Lease), taken once no
// process has the transcript open for writing; one that keeps it open
// (waited for up to 200 ms) is refused with session.ErrWriterOpen. An
// agent that opens the transcript to append between that check and the
// rename waits in open(2) until the rename and the directory's fsync are
// done, then writes to the file replaced: the lease tells. Once such
// agents are done (waited for up to 5 s), what they wrote is carried into
// a new transcript, after the bytes rewritten and before what was
// appended to the new file since (FileResult.Carried); the new one is
// renamed into place in the same way, ten times at most. A carried line
// is an original line, which the next migration migrates. A compressed
// transcript written to so is put back as it was, with the bytes written,
// and reported changed. Bytes that cannot be carried (a failed write, an
// agent still appending after ten carries) are kept in path.appended-TIME
// beside the transcript; the error names it and where they belong.
//
// What is not covered: where no lease is to be had (other systems, NFS,
// another user's file without CAP_LEASE), the file replaced is looked at
// after the directory's fsync instead, and an append that found it before
// the rename but writes after that look is lost; with a lease, so is one
// whose open(2) found the file before the rename and reaches the lease
// only after the fsync. Bytes being carried are lost when the process is
// killed before the carry's rename: the file replaced lives only as long
// as the process holds it.
//
// A file with several names (hard links) is refused in place: replacing
// it under one name would leave the others with the old bytes. Named or
// found under several names, it is processed once (session.Collect).
//
// Before anything is written for a transcript, an exclusive advisory lock
// is taken on it and the destination directory, the store and its registry
// are checked to be writable: a transcript that could not be replaced is
// refused with nothing written. A run killed before its rename leaves
// temporary files; the next run removes those beside the transcript once it
// holds the lock, and those in the store once they are older than
// safefile.StaleAge. A backup left by a killed run is kept and used when it
// holds the original's bytes. When only the fsync of the directory after
// the rename fails, the file is reported failed, yet it is the complete
// migrated transcript and its backup stays.
//
// A transcript that is no file of its own (an object in a bucket, rows of
// an agent's database: session.Remote) is fetched to a local copy when a
// worker takes it, rewritten there like any file, and put back with
// Remote.Replace, which writes only if the original is still what was
// fetched; a run holds at most --jobs + 1 such copies at once, and results
// and registry records name the transcript, not its copy.
//
// A failure in one file is recorded in its FileResult and the other files go
// on. Progress is reported through the Progress interface, never to a
// terminal.
package migrate
