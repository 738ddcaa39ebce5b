package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/transcript-tool/transcript-tool/agentdb"
)

// DBScheme starts the name of a session kept in an agent's database:
// sqlite:///ABS/PATH/openclaw-agent.sqlite#SESSION, a URL as transcripts
// in a bucket have, so that registry records and gc tell it from a file.
const DBScheme = "sqlite://"

// dbSession is a session of an OpenClaw agent database, as a Remote: its
// rows, one JSONL line each (see package agentdb).
type dbSession struct {
	db   *agentdb.Database
	id   string
	snap *agentdb.Snapshot // what Fetch read, which Replace requires
}

func (s *dbSession) Name() string { return DBScheme + s.db.Path + "#" + s.id }

// parseDBName returns the database and session that name, a session's
// Name, names; any other name is returned as it is, with id "". The
// session id is what follows the last "#", which a path may hold too.
func parseDBName(name string) (path, id string) {
	rest, ok := strings.CutPrefix(name, DBScheme)
	i := strings.LastIndexByte(rest, '#')
	if !ok || i < 0 || i == len(rest)-1 {
		return name, ""
	}
	return rest[:i], rest[i+1:]
}

// Fetch writes the session's rows to a new file at path, one line each.
func (s *dbSession) Fetch(ctx context.Context, path string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	snap, err := s.db.Fetch(ctx, s.id, w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return 0, err
	}
	s.snap = snap
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Writable returns the error Replace would refuse with while an OpenClaw
// process holds the database (agentdb.ErrInUse), and nil otherwise.
func (s *dbSession) Writable(ctx context.Context) error { return s.db.CheckOwner(ctx) }

// Replace writes the lines of the file at path into the session's rows,
// if they still hold what Fetch read. A backup is refused: the rows have
// no file to keep a copy of beside them, and a copy of the whole database
// per session is not what --backup promises.
func (s *dbSession) Replace(ctx context.Context, path string, backup bool) error {
	if s.snap == nil {
		return fmt.Errorf("%s: replaced before it was fetched", s.Name())
	}
	if backup {
		return fmt.Errorf("%s: --backup keeps no copy of a session in a database; left as it is (copy the state folder while no OpenClaw runs, or run without --backup: rehydrate restores the rows)", s.Name())
	}
	_, err := s.db.Replace(ctx, s.snap, path)
	if errors.Is(err, agentdb.ErrChanged) {
		return changedError{err}
	}
	return err
}

// changedError is agentdb.ErrChanged as the ErrSourceChanged a Remote's
// Replace fails with, in agentdb's words.
type changedError struct{ err error }

func (e changedError) Error() string   { return e.err.Error() }
func (e changedError) Unwrap() []error { return []error{e.err, ErrSourceChanged} }

// dbInputs returns the sessions of the agent database at path, a file
// named agentdb.FileName, or only the one named id when id is not "", as
// inputs whose Remote is their rows, named rel below the PATH they were
// found under: REL-FOLDER/SESSION.jsonl. Each has no local copy yet (see
// Place) and its default store is the agent's (see dbStore). Sessions
// OpenClaw moved to a cold archive are left out: their events are no
// longer rows. A database without the session id is agentdb.ErrNotFound.
func dbInputs(path, relDir, id string, explicit bool) ([]Input, error) {
	db, err := agentdb.Open(path)
	if err != nil {
		return nil, err
	}
	sessions, err := db.Sessions(context.Background())
	if err != nil {
		return nil, err
	}
	store := dbStore(db)
	var inputs []Input
	for _, s := range sessions {
		if s.Cold || id != "" && s.ID != id {
			continue
		}
		inputs = append(inputs, Input{
			Rel:      filepath.Join(relDir, url.PathEscape(s.ID)+".jsonl"),
			Explicit: explicit,
			Size:     s.Bytes + s.Rows,
			Store:    store,
			Remote:   &dbSession{db: db, id: s.ID},
		})
	}
	if id != "" && len(inputs) == 0 {
		return nil, fmt.Errorf("%s: %w: %s", path, agentdb.ErrNotFound, id)
	}
	return inputs, nil
}

// dbStore returns the default store of db's sessions, one for all the
// agent's sessions: the store of the agent's JSONL sessions of before
// OpenClaw 2026.8, agents/<id>/sessions/artifacts, when there is one,
// since OpenClaw's doctor --fix imports migrated sessions as they are,
// placeholders, markers and all, and their artifacts are there;
// otherwise artifacts/ in the agent folder, beside the database.
func dbStore(db *agentdb.Database) string {
	legacy := filepath.Join(filepath.Dir(db.AgentDir()), "sessions", StoreDirName)
	if db.AgentID != "" && isStore(legacy) {
		return legacy
	}
	return filepath.Join(db.AgentDir(), StoreDirName)
}

// Place gives each input whose Remote is a session of an agent's database
// and that has no local copy's path yet, as Collect returns them, the
// path of its local copy in the folder of local copies that dir returns
// (see Copies), called only if one needs it:
// DIR/sqlite/DATABASE-PATH/SESSION.jsonl, one file for each session.
func Place(inputs []Input, dir func() (string, error)) error {
	for i := range inputs {
		s, ok := inputs[i].Remote.(*dbSession)
		if !ok || inputs[i].Path != "" {
			continue
		}
		d, err := dir()
		if err != nil {
			return err
		}
		inputs[i].Path = filepath.Join(d, "sqlite", s.db.Path, url.PathEscape(s.id)+".jsonl")
	}
	return nil
}
