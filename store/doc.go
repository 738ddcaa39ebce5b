// Package store is content addressing over a small Backend interface: an
// artifact's name is the lower-case hex SHA-256 of its bytes.
//
// # Layout
//
// Every backend keeps the same keys below its root (see Key), so that a
// plain copy of one store's files is a valid store of another kind:
//
//	objects/<hh>/<64 hex>      artifact bytes; <hh> = the first two hex characters
//	registry/<writer>.jsonl    registry segments, and their indexes (package registry)
//	registry.jsonl             the single-file registry of earlier versions, still read
//
// and the store's lock (see Locker), which is no file of a kind: a local
// store's lock file, an S3 store's leases below locks/, which expire.
// IsFolder tells a local folder that holds a store by these names.
//
// # Backends
//
// A Backend saves, loads (a byte range), stats, lists, removes and touches
// files named by a Handle, a kind and a name, and makes what it was given
// durable on Flush; every method takes a context first. What only some
// backends can do is an optional interface, which a caller asks for with
// As: a lock (Locker), appending in place (Appender), reading a file in
// place (Opener), a file's own lock (FileLocker). The backends are
// store/local (a folder, which has them all), store/s3 (S3-compatible
// object storage, s3://BUCKET/PREFIX, which has a lock), store/mem
// (memory, for tests) and, wrapping any of them, store/faulty (fault
// injection for tests). Package store/location parses where a store is;
// only the command line imports it, and passes the backends it opens
// down. Package store/storetest is the conformance suite every backend
// passes.
//
// # Guarantees
//
// Store writes an object only when no intact one is there (or, where the
// Backend made the object's folder itself, may be: see Newcomer), re-hashes on
// every read that serves bytes (a mismatch is ErrCorrupt, never served),
// and replaces a damaged object on the next Put of its bytes. An object
// is durable, and may be named by a registry record, once Flush returns
// without error for it. Store is safe for concurrent use; it remembers
// for a minute the objects it wrote or checked, so a run reads each
// distinct artifact at most once.
package store
