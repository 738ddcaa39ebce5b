// Package summary says in one line what an artifact is: the description
// a placeholder carries in place of a payload, and that recall lists.
//
// # Descriptions
//
// DescribeIn, and a Describer for bytes streamed from the store, describe
// an artifact by its bytes, its media type and a Context: what the
// transcript says of the tool call whose output it is (the tool's name,
// the command run or the file read, the exit status). A file read, a
// command's output, a diff, JSON, an image and other text are each
// described their own way; Of also says which of these Kinds it took the
// artifact for. Only the output of a call the transcript marks as failed
// is ever described by its error line.
//
// # Guarantees
//
// A description is one line of at most Max code points, free of control
// characters, and depends only on the bytes, the media type and the
// Context: not on how the bytes were cut into writes. The work is
// bounded: a Describer keeps at most 192 KiB of an artifact, however
// long. A Cache, shared by a run's workers, describes an artifact once per
// Context. Nothing here reads or writes a file.
package summary
