package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Object is an entry of the store's objects directory.
type Object struct {
	Digest Digest
	Path   string
	Info   fs.FileInfo
}

// Objects calls fn for each object file in the store, in lexical order.
// Entries that cannot be objects (names that are not 64 lower-case hex
// characters in their shard, symbolic links, directories where a file
// belongs) are passed to bad with a reason and never followed; temporary
// files of writers are skipped. A store without objects has none.
func (s *Store) Objects(fn func(Object) error, bad func(path string, reason error)) error {
	root := filepath.Join(s.dir, ObjectsDir)
	shards, err := s.readDir(ObjectsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, sh := range shards {
		shardPath := filepath.Join(root, sh.Name())
		if !sh.IsDir() || sh.Type()&fs.ModeSymlink != 0 || !isShardName(sh.Name()) {
			bad(shardPath, errors.New("not a shard directory"))
			continue
		}
		entries, err := s.readDir(ObjectsDir, sh.Name())
		if errors.Is(err, ErrLinked) {
			bad(shardPath, errors.New("not a shard directory"))
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			path := filepath.Join(shardPath, e.Name())
			if isTemp(e.Name()) {
				continue
			}
			d, err := ParseDigest(e.Name())
			switch {
			case err != nil:
				bad(path, errors.New("not an artifact name"))
				continue
			case e.Name()[:2] != sh.Name():
				bad(path, fmt.Errorf("artifact in shard %s, not %s", sh.Name(), e.Name()[:2]))
				continue
			case !e.Type().IsRegular():
				bad(path, errors.New("not a regular file"))
				continue
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			if err := fn(Object{Digest: d, Path: path, Info: info}); err != nil {
				return err
			}
		}
	}
	return nil
}

func isShardName(name string) bool {
	if len(name) != 2 {
		return false
	}
	_, err := ParseDigest(name + "00000000000000000000000000000000000000000000000000000000000000")
	return err == nil
}

// isTemp reports whether name is a writer's temporary file.
func isTemp(name string) bool { return len(name) > 0 && name[0] == '.' }
