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
// A failure in one file is recorded in its FileResult and the other files go
// on. Progress is reported through the Progress interface, never to a
// terminal.
package migrate
