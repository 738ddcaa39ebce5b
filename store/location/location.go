// Package location parses where a store is, the value of --store, and
// opens its backend: the one place below the command line that names the
// concrete backends.
package location

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// Open returns the backend of the store at spec: a local folder, or (when
// spec has a URL scheme) the object storage it names: s3://BUCKET/PREFIX,
// configured from the standard AWS environment and files (see s3.Open).
func Open(spec string) (store.Backend, error) {
	if scheme, _, ok := strings.Cut(spec, "://"); ok && !strings.ContainsAny(scheme, `/\.`) {
		if scheme == s3.Scheme {
			return s3.Open(context.Background(), spec)
		}
		return nil, fmt.Errorf("store %s: unknown kind of store %q (want a folder or s3://BUCKET/PREFIX)", spec, scheme)
	}
	return local.New(spec), nil
}

// IsStore reports whether the local folder dir holds a store: its
// single-file registry of earlier versions, or a registry folder beside
// its objects or its lock (a folder that merely has a "registry"
// subfolder is no store), or, when named defaultName, objects. Walks of
// transcripts skip stores.
func IsStore(dir, defaultName string) bool {
	if exists(filepath.Join(dir, "registry.jsonl")) {
		return true
	}
	objects := exists(filepath.Join(dir, local.ObjectsDir))
	if isDir(filepath.Join(dir, local.SegmentsDir)) && (objects || exists(filepath.Join(dir, local.LockFile))) {
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
