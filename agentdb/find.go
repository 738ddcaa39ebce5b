package agentdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/canon"
)

// FileName is the name OpenClaw gives an agent's database, in the agent
// folder agents/<id>/agent of its state folder: the one OpenClaw's
// declaration gives (format.Agent.Database), by which the walker finds
// the databases it opens here.
var FileName = func() string {
	openClaw, _ := format.Named("OpenClaw")
	return openClaw.Database
}()

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

// String returns the database's path.
func (d *Database) String() string { return d.Path }

// Open returns the agent database at path, a file named FileName, which
// it does not open yet: every call opens it for as long as it needs it.
// The path is given its one name (package canon), so that a database is
// named alike however the path was spelled.
func Open(path string) (*Database, error) {
	p, err := canon.Path(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil, err
	case filepath.Base(p) != FileName || !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not an OpenClaw agent database (a file named %s)", path, FileName)
	}
	return newDatabase(p), nil
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

// missing reports whether err says a path does not exist, or that one of
// its folders is a file.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
