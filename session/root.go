package session

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

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

var (
	twoDigits  = regexp.MustCompile(`^[0-9]{2}$`)
	fourDigits = regexp.MustCompile(`^[0-9]{4}$`)
	piProject  = regexp.MustCompile(`^--.*--$`)
)

// Root returns the folder whose store serves the transcript at
// path: the root of the agent's sessions it belongs to, known from where
// each agent keeps them, so that one store serves the whole tree and
// deduplicates across it:
//
//   - a Claude Code subagent, <project>/<session>/subagents/agent-*.jsonl:
//     the project folder, the one of its main session;
//   - a Codex rollout, sessions/YYYY/MM/DD/rollout-*.jsonl: sessions/, and
//     for an archived one, archived_sessions/rollout-*.jsonl, the
//     sessions/ beside it, so that archiving a rollout keeps its store;
//   - a pi session, sessions/--<cwd>--/*.jsonl: sessions/;
//   - a Gemini CLI subagent, tmp/<project>/chats/<session>/*.jsonl: the
//     chats/ of its main session, inside the project's folder, the only
//     one besides the workspace that Gemini CLI's read_file opens;
//   - a Qwen Code subagent, projects/<project>/subagents/<session>/
//     agent-*.jsonl: the chats/ of the project, where its main session is.
//
// Any other transcript's root is its own folder: a Claude Code project
// folder, OpenClaw's sessions/, a folder of the user's.
func Root(path string) string {
	dir := filepath.Dir(path)
	parent := filepath.Dir(dir)
	switch base := filepath.Base(dir); {
	case base == "subagents":
		return filepath.Dir(parent)
	case base == "archived_sessions":
		return filepath.Join(parent, "sessions")
	case twoDigits.MatchString(base) && twoDigits.MatchString(filepath.Base(parent)) &&
		fourDigits.MatchString(filepath.Base(filepath.Dir(parent))) &&
		filepath.Base(filepath.Dir(filepath.Dir(parent))) == "sessions":
		return filepath.Dir(filepath.Dir(parent))
	case piProject.MatchString(base) && filepath.Base(parent) == "sessions":
		return parent
	case filepath.Base(parent) == "chats" && filepath.Base(filepath.Dir(filepath.Dir(parent))) == "tmp":
		return parent
	case filepath.Base(parent) == "subagents" && filepath.Base(filepath.Dir(filepath.Dir(parent))) == "projects":
		return filepath.Join(filepath.Dir(parent), "chats")
	}
	return dir
}

// Subagents returns the transcripts of the subagents of the session whose
// transcript is at path, in name order: a Claude Code session's,
// <project>/<session>/subagents/*.jsonl beside <project>/<session>.jsonl.
// A transcript of any other kind has none.
func Subagents(path string) []string {
	dir := strings.TrimSuffix(strings.TrimSuffix(path, ".zst"), ".jsonl")
	if dir == path || filepath.Base(filepath.Dir(path)) == "subagents" {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "subagents", "*.jsonl"))
	var subs []string
	for _, f := range found {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			subs = append(subs, f)
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
