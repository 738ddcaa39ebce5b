// Package migrate runs migrations and rehydrations over many transcript
// files: it finds the files, runs a pool of workers, writes every output
// atomically and reports per file.
//
// # Guarantees
//
// For each transcript, in this order: artifacts are written and made
// durable, then the registry records are appended, then the new transcript
// is written to a temporary file beside its destination and fsynced. The new
// transcript is then rehydrated from the store and compared with the source,
// line by line; the source is checked not to have changed since it was read
// (size, modification time, inode); only then is the temporary file renamed
// over the destination and the directory fsynced. A crash at any point
// leaves the original transcript or the complete migrated one, and at worst
// artifacts that nothing references yet.
//
// A failure in one file is recorded in its FileResult and the other files go
// on. Progress is reported through the Progress interface, never to a
// terminal.
package migrate
