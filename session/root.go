package session

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
)

// StoreDirName is the default store's name, in the agent's session root
// (see Root).
const StoreDirName = "artifacts"

// StoreFor returns the store directory for a transcript at path (written
// to, for migrate): opt when it is given; otherwise a store already beside
// the transcript, as earlier versions made one beside each transcript, so
// that a tree they migrated keeps its one store per folder; otherwise
// artifacts/ in the transcript's session root. A path that is not
// absolute is first given its one name (package canon), so that the
// store does not depend on how the path was spelled; Collect's paths
// already have it.
func StoreFor(opt, path string) string {
	if opt != "" {
		return opt
	}
	if !filepath.IsAbs(path) {
		path = canon.Must(path)
	}
	dir := filepath.Dir(path)
	beside := filepath.Join(dir, StoreDirName)
	root := Root(path)
	if root == dir {
		return beside
	}
	if fi, err := os.Stat(beside); err == nil && fi.IsDir() {
		return beside
	}
	return filepath.Join(root, StoreDirName)
}

// Root returns the folder whose store serves the transcript at path: the
// root of the agent's sessions it belongs to, where the agent's layout
// says it is (format.Agent.Root), so that one store serves the whole tree
// and deduplicates across it. Any other transcript's root is its own
// folder: a Claude Code project folder, OpenClaw's sessions/, a folder of
// the user's.
func Root(path string) string {
	for _, a := range format.Agents() {
		if a.Root == nil {
			continue
		}
		if root, ok := a.Root(path); ok {
			return root
		}
	}
	return filepath.Dir(path)
}

// Subagents returns the transcripts of the subagents of the session whose
// transcript is at path, in name order, where its agent keeps them
// (format.Agent.Subagents): regular files only.
func Subagents(path string) []string {
	var subs []string
	for _, a := range format.Agents() {
		if a.Subagents == nil {
			continue
		}
		pattern := a.Subagents(path)
		if pattern == "" {
			continue
		}
		found, _ := filepath.Glob(pattern)
		for _, f := range found {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				subs = append(subs, f)
			}
		}
	}
	return subs
}

// PathFor returns where the artifacts of store are shown to readers of
// migrated transcripts, as migrate writes them into placeholders: the
// object's absolute path, which an agent opens with its own read tool from
// whatever its working directory, or its path under storeAs, the store's
// location as the agent sees it, when that is set.
func PathFor(st *registry.Store, storeAs string) func(store.Digest) string {
	if storeAs == "" {
		return st.Path
	}
	// Joined as text, not cleaned: storeAs may be a URL.
	base := strings.TrimSuffix(storeAs, "/") + "/"
	return func(d store.Digest) string {
		return base + store.Key(store.ObjectHandle(d))
	}
}
