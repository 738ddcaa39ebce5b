package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/store"
)

// Input is one transcript to process.
type Input struct {
	Path string // as found
	Rel  string // relative to the PATH argument it was found under
	// Explicit is true for a file named on the command line: a file of
	// unknown format is then a failure, not something to skip.
	Explicit bool
	Size     int64
	// Store is the input's default store, used when no --store is given,
	// or "" for session.StoreFor's: a transcript fetched from S3 has its
	// store in its bucket, not beside its local copy.
	Store string
	// Remote, when set, is where the transcript lives, Path its local
	// copy in a Copies folder, there once it is fetched (see Remote), ""
	// until Place gives it one.
	Remote Remote
}

// Collect expands paths into transcripts: files as given, directories
// searched recursively for *.jsonl and *.jsonl.zst. Every path is first
// given its one name (package canon: absolute, links resolved), so that
// inputs are named alike however the command line spelled them. Artifact
// stores (and the registry of a store that is itself walked), Claude
// Code's tool-results folders, hidden and temporary files, and symbolic
// links found while walking are skipped, but for the agents' homes
// (format.Agents), of which only the session folders are searched,
// whether named or found (see agentHome). A path inside a store
// is refused. A file named twice, or under two names (links, hard links),
// is processed once, under the name found first.
//
// An agent's database (format.Agent.Database: OpenClaw's), named or
// found, gives one input for each of its sessions (a path
// sqlite://DB#SESSION names one), whose Remote is its rows and whose
// local copy's path is left for Place to give. An OpenClaw home's session
// folders are its agents' sessions/ (JSONL, before 2026.8) and agent/
// folders, which hold the databases.
func Collect(paths []string) ([]Input, error) {
	var inputs []Input
	seen := map[FileKey]bool{}
	seenNames := map[string]bool{} // of sessions of databases
	add := func(in Input, fi os.FileInfo) {
		key := KeyOf(in.Path, fi)
		if !seen[key] {
			seen[key] = true
			inputs = append(inputs, in)
		}
	}
	// An agent's database, named or found: its sessions (only the one
	// named id, if id is not ""), those not seen before. A database found
	// under a second name keeps the first.
	dbNames := map[FileKey]string{}
	addDB := func(path, rel, id string, explicit bool, fi os.FileInfo) error {
		key := KeyOf(path, fi)
		if first, ok := dbNames[key]; ok {
			path = first
		}
		dbNames[key] = path
		in, err := dbInputs(path, rel, id, explicit)
		if err != nil {
			return err
		}
		for _, in := range in {
			if name := in.Name(); !seenNames[name] {
				seenNames[name] = true
				inputs = append(inputs, in)
			}
		}
		return nil
	}
	for _, arg := range paths {
		arg, id := parseDBName(arg)
		fi, err := os.Stat(arg)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", arg, pe.Err) // not "stat ARG: ..."
			}
			return nil, err
		}
		root, err := canon.Path(arg)
		if err != nil {
			return nil, err
		}
		if st, ok := InsideStore(root); ok {
			return nil, &InStoreError{Path: arg, Store: st}
		}
		_, isDB := format.DatabaseOf(root)
		if id != "" && (fi.IsDir() || !isDB) {
			return nil, notDatabase(arg)
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: not a regular file", root)
			}
			if isDB {
				if err := addDB(root, "", id, true, fi); err != nil {
					return nil, err
				}
				continue
			}
			// Named by the user: a link is followed to the file it names,
			// which is what is rewritten, and Rel keeps the name given.
			add(Input{Path: root, Rel: filepath.Base(arg), Explicit: true, Size: fi.Size()}, fi)
			continue
		}
		var walk func(start string) error
		walk = func(start string) error {
			return filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				name := d.Name()
				if d.IsDir() {
					if folders, ok := agentHome(path); ok {
						// An agent's home, named or found: only its
						// session folders hold transcripts.
						for _, f := range folders {
							if err := walk(f); err != nil {
								return err
							}
						}
						return filepath.SkipDir
					}
					if path != start && (strings.HasPrefix(name, ".") || isStore(path) || sidecar(path)) ||
						name == store.SegmentsDir && isStore(filepath.Dir(path)) {
						// A store, and the registry of a store walked
						// itself: its segments are JSONL, never sessions.
						return filepath.SkipDir
					}
					return nil
				}
				if _, ok := format.DatabaseOf(name); ok && d.Type().IsRegular() {
					info, err := d.Info()
					if err != nil {
						return err
					}
					rel, err := filepath.Rel(root, filepath.Dir(path))
					if err != nil {
						return err
					}
					return addDB(path, rel, "", false, info)
				}
				if !d.Type().IsRegular() || strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".jsonl") || Compressed(name)) ||
					notSession(name) || name == store.RegistryFile && isStore(filepath.Dir(path)) {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				add(Input{Path: path, Rel: rel, Size: info.Size()}, info)
				return nil
			})
		}
		if err := walk(root); err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// Folders returns the agents' session folders under home (the user's
// home folder) that exist, in the agents' order (format.Agents): where
// the agents keep their sessions.
func Folders(home string) []string {
	var folders []string
	for _, a := range format.Agents() {
		f, _ := agentHome(filepath.Join(home, a.Home))
		folders = append(folders, f...)
	}
	return folders
}

// agentHome returns the session folders of dir when it is an agent's
// home (format.Agent.Home and Sessions). A "*" in a pattern stands for
// every folder there; dir itself is never read as a pattern.
func agentHome(dir string) ([]string, bool) {
	var patterns []string
	found := false
	for _, a := range format.Agents() {
		if a.Home == filepath.Base(dir) {
			patterns, found = append(patterns, a.Sessions...), true
		}
	}
	if !found {
		return nil, false
	}
	var folders []string
	for _, p := range patterns {
		found := []string{dir}
		for _, elem := range strings.Split(p, string(filepath.Separator)) {
			var next []string
			for _, f := range found {
				if elem != "*" {
					next = append(next, filepath.Join(f, elem))
					continue
				}
				entries, _ := os.ReadDir(f)
				for _, e := range entries {
					if e.IsDir() {
						next = append(next, filepath.Join(f, e.Name()))
					}
				}
			}
			found = next
		}
		for _, f := range found {
			if fi, err := os.Lstat(f); err == nil && fi.IsDir() {
				folders = append(folders, f)
			}
		}
	}
	return folders, true
}

// notDatabase is Collect's error for a session of a database,
// DB#SESSION, whose DB is no agent's database: it says which files are.
func notDatabase(path string) error {
	var dbs []string
	for _, a := range format.Agents() {
		if a.Database != "" {
			dbs = append(dbs, fmt.Sprintf("an %s agent database (a file named %s)", a.Name, a.Database))
		}
	}
	return fmt.Errorf("%s: not %s", path, strings.Join(dbs, " or "))
}

// notSession reports whether a .jsonl file is known by its name to hold
// no session (format.Agent.Skip): OpenClaw's trajectories beside its
// sessions.
func notSession(name string) bool {
	for _, a := range format.Agents() {
		if a.Skip != nil && a.Skip(name) {
			return true
		}
	}
	return false
}

// sidecar reports whether dir is a folder in which an agent keeps its own
// files of a session that exists beside it (format.Agent.Sidecar):
// Claude Code's tool-results. Whatever their names, they are the agent's
// files, never sessions.
func sidecar(dir string) bool {
	for _, a := range format.Agents() {
		if a.Sidecar == nil {
			continue
		}
		if t, ok := a.Sidecar.Transcript(dir); ok {
			if fi, err := os.Stat(t); err == nil && fi.Mode().IsRegular() {
				return true
			}
		}
	}
	return false
}

// isStore reports whether dir is an artifact store (see store.IsFolder).
func isStore(dir string) bool { return store.IsFolder(dir, StoreDirName) }

// InStoreError is Collect's error for a path inside an artifact store:
// its objects, registry segments, index, lock and temporary files are
// never transcripts, whatever their text, and rewriting one would break
// the store (an object would no longer hash to its name).
type InStoreError struct {
	Path  string // as given
	Store string // the store it is in
}

func (e *InStoreError) Error() string {
	if e.Path == e.Store || canon.Must(e.Path) == e.Store {
		return fmt.Sprintf("%s is an artifact store, not a folder of transcripts", e.Path)
	}
	return fmt.Sprintf("%s is inside the artifact store %s, which holds no transcripts", e.Path, e.Store)
}

// InsideStore reports the store that path, a canonical path (see package
// canon), is in or is, if any. It looks at path and each folder above it.
func InsideStore(path string) (string, bool) {
	for dir := path; ; {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && isStore(dir) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
