package agentdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/session"
)

// FileName is the name OpenClaw gives an agent's database, in the agent
// folder agents/<id>/agent of its state folder.
const FileName = "openclaw-agent.sqlite"

// Database is an agent's SQLite database of transcripts.
type Database struct {
	// Path is the database file, absolute with its links resolved.
	Path string
	// AgentID is the <id> of agents/<id>/agent/openclaw-agent.sqlite, and
	// StateDir the OpenClaw state folder holding agents/; both are "" for
	// a database outside that layout (a copy), whose state OpenClaw
	// cannot know either.
	AgentID, StateDir string
}

// AgentDir returns the agent folder: the folder of the database,
// OpenClaw's agentDir.
func (d *Database) AgentDir() string { return filepath.Dir(d.Path) }

// Store returns the database's default artifact store: artifacts/ in the
// agent folder, so that one store serves all the agent's sessions and is
// backed up with the folder.
func (d *Database) Store() string { return filepath.Join(d.AgentDir(), session.StoreDirName) }

// String returns the database's path.
func (d *Database) String() string { return d.Path }

// Find returns the agent databases that path names, in the order of their
// paths: the database itself, named directly (by its name, FileName); the
// one of an agent folder (agents/<id>/agent) or of an agent
// (agents/<id>); those of every agent of an agents/ folder or of an
// OpenClaw state folder (~/.openclaw, or $OPENCLAW_STATE_DIR). Any other
// path holds none; Find does not search a tree.
func Find(path string) ([]*Database, error) {
	p, err := canon.Path(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		if filepath.Base(p) != FileName || !fi.Mode().IsRegular() {
			return nil, nil
		}
		return []*Database{newDatabase(p)}, nil
	}
	var dbs []*Database
	for _, pattern := range [][]string{
		{FileName},
		{"agent", FileName},
		{"*", "agent", FileName},
		{"agents", "*", "agent", FileName},
	} {
		found, err := match(p, pattern)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			dbs = append(dbs, newDatabase(f))
		}
	}
	sort.Slice(dbs, func(i, j int) bool { return dbs[i].Path < dbs[j].Path })
	return dbs, nil
}

// match returns the regular files below dir whose path relative to dir
// has the segments of pattern, "*" standing for any folder. Unlike
// filepath.Glob it takes dir's own name literally, brackets and all.
func match(dir string, pattern []string) ([]string, error) {
	if len(pattern) == 1 {
		f := filepath.Join(dir, pattern[0])
		fi, err := os.Lstat(f)
		switch {
		case missing(err):
			return nil, nil
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
			return nil, nil
		}
		return []string{f}, nil
	}
	var names []string
	if pattern[0] == "*" {
		entries, err := os.ReadDir(dir)
		if missing(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find agent databases: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	} else {
		names = []string{pattern[0]}
	}
	var out []string
	for _, n := range names {
		found, err := match(filepath.Join(dir, n), pattern[1:])
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// missing reports whether err says a path does not exist, or that one of
// its folders is a file.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// newDatabase returns the Database at path, an absolute resolved path,
// with its agent and state folder when it lies where OpenClaw keeps one,
// <state>/agents/<id>/agent/openclaw-agent.sqlite.
func newDatabase(path string) *Database {
	d := &Database{Path: path}
	agentDir := filepath.Dir(path)
	agent := filepath.Dir(agentDir)
	agents := filepath.Dir(agent)
	if filepath.Base(agentDir) == "agent" && filepath.Base(agents) == "agents" {
		d.AgentID = filepath.Base(agent)
		d.StateDir = filepath.Dir(agents)
	}
	return d
}
