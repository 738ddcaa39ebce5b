package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The names below a store's root (see the package doc, # Layout).
const (
	// ObjectsDir holds the objects, in shards named by the first two
	// hex characters of their names.
	ObjectsDir = "objects"
	// SegmentsDir holds the registry's segments, one per writer.
	SegmentsDir = "registry"
	// RegistryFile is the single-file registry of versions before
	// segments (see Legacy).
	RegistryFile = "registry.jsonl"
	// LockFile is a local store's lock: writers hold it shared, a
	// collector exclusively (see Locker).
	LockFile = "lock"
)

// IsTemp reports whether a name below a store's root is hidden, which no
// file of the store's is: a writer's temporary file, or an S3 touch's
// copy. List skips them.
func IsTemp(name string) bool { return strings.HasPrefix(name, ".") }

// IsFolder reports whether the local folder dir holds a store: its
// single-file registry of earlier versions, or a segments folder beside
// its objects or its lock (a folder that merely has a "registry"
// subfolder is no store), or, when named defaultName, objects. Walks of
// transcripts skip stores.
func IsFolder(dir, defaultName string) bool {
	if exists(filepath.Join(dir, RegistryFile)) {
		return true
	}
	objects := exists(filepath.Join(dir, ObjectsDir))
	if isDir(filepath.Join(dir, SegmentsDir)) && (objects || exists(filepath.Join(dir, LockFile))) {
		return true
	}
	return filepath.Base(dir) == defaultName && objects
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// Process returns this process's host name ("unknown-host" when it has
// none) and id, by which the files it writes into a store name their
// writer: registry segments, S3 lock leases.
func Process() (host string, pid int) { return hostname(), os.Getpid() }

var hostname = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown-host"
	}
	return h
})
