package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/bucket"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/show"
	"github.com/transcript-tool/transcript-tool/store/location"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// sessionID is the id an agent writes into a session file's name: the
// UUID of a Claude Code, Codex (rollout-<time>-<id>), pi (<time>_<id>) or
// OpenClaw session; or into the name of the folder that holds it, where
// the agent keeps each session in a folder of its own
// (format.Agent.FolderLog).
var sessionID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// shortID is the end of the name of a file that holds only the start of
// its session's id, as Gemini CLI's session-<time>-<id8> does: the whole
// id is read from the file.
var shortID = regexp.MustCompile(`-([0-9a-f]{8})$`)

// findSession returns the transcript that arg names: arg itself when it is
// a file, or looks like a file's path; the local copy of the object when
// it is an s3:// URL; the session of an OpenClaw database it names
// (sqlite:///DB#SESSION, or the database when it holds one session);
// otherwise the one transcript under paths (by default the agents'
// session folders in the home folder) whose session id, or name, arg is
// or begins. Several give a usage error that lists them, as cat does for
// an ambiguous prefix. A transcript that is no file of its own is fetched
// to its local copy.
func findSession(ctx context.Context, st streams, arg string, paths []string) (session.Input, error) {
	var none session.Input
	if bucket.IsURL(arg) && len(paths) == 0 {
		inputs, err := collect(ctx, st, []string{arg}, nil, registry.Shard{})
		if err != nil {
			return none, err
		}
		if len(inputs) != 1 || !inputs[0].Explicit {
			return none, usageErr("%s names %d transcripts, not one", arg, len(inputs))
		}
		return inputs[0], nil
	}
	fi, err := os.Stat(arg)
	isFile := err == nil && !fi.IsDir()
	if isFile && len(paths) > 0 {
		return none, usageErr("%s is a file: the PATHs after SESSION are where to look for a session id", arg)
	}
	if isFile || strings.HasPrefix(arg, session.DBScheme) && len(paths) == 0 {
		inputs, err := placed(st, []string{arg})
		if err != nil {
			return none, err
		}
		return pickSession(ctx, st, inputs, func(session.Input) bool { return true }, arg, arg)
	}
	if strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl") || strings.HasSuffix(arg, ".zst") {
		return session.Input{Path: arg, Explicit: true}, nil // a file's path: opening it says what is wrong
	}
	if len(paths) == 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			return none, fatal(fmt.Errorf("session %q: no home folder to look in: %w", arg, err), "name the folders to look in after it")
		}
		paths = session.Folders(home)
		if len(paths) == 0 {
			return none, &exitError{code: exitUsage, err: fmt.Errorf("%s is no file, and no agent's session folder is in %s to look for it", arg, home),
				hint: "name the transcript's path, or the folders to look in after the id"}
		}
	}
	var exact bool
	byID := func(in session.Input) (match, isExact bool) {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(in.Path), ".zst"), ".jsonl")
		id := name
		if ids := sessionID.FindAllString(name, -1); len(ids) > 0 {
			id = ids[len(ids)-1]
		} else if dir, ok := format.FolderID(strings.TrimSuffix(in.Path, ".zst")); ok && sessionID.FindString(dir) == dir {
			id = dir // a session folder's log, compressed since or not
		} else if m := shortID.FindStringSubmatch(name); m != nil {
			id = fileSession(in.Path, m[1])
		}
		if arg == id || arg == name {
			return true, true
		}
		return strings.HasPrefix(id, arg) || strings.HasPrefix(name, arg), false
	}
	inputs, err := placed(st, paths)
	if err != nil {
		return none, err
	}
	for _, in := range inputs {
		if _, e := byID(in); e {
			exact = true
		}
	}
	return pickSession(ctx, st, inputs, func(in session.Input) bool {
		m, e := byID(in)
		return m && e == exact
	}, arg, strings.Join(paths, ", "))
}

// placed collects the transcripts under paths, those in agents' databases
// given the paths of their local copies, not fetched.
func placed(st streams, paths []string) ([]session.Input, error) {
	inputs, err := session.Collect(paths)
	if err != nil {
		return nil, collectErr(err)
	}
	if err := session.Place(inputs, st.remote.copiesDir); err != nil {
		return nil, fatal(err, "")
	}
	return inputs, nil
}

// pickSession returns the one of inputs, found in where, that match
// accepts, fetched if it is no file of its own; none or several are a
// usage error that says what arg matched.
func pickSession(ctx context.Context, st streams, inputs []session.Input, match func(session.Input) bool, arg, where string) (session.Input, error) {
	var none session.Input
	var found []session.Input
	for _, in := range inputs {
		if match(in) {
			found = append(found, in)
		}
	}
	switch len(found) {
	case 0:
		return none, &exitError{code: exitUsage, err: fmt.Errorf("no session %q in %s", arg, where),
			hint: "a session is named by its file, its id or the start of its id"}
	case 1:
		fetched, failed := st.remote.fetch(ctx, found)
		if len(failed) > 0 {
			return none, fatal(failed[0], "")
		}
		return fetched[0], nil
	}
	var names []string
	for _, in := range found {
		names = append(names, in.Name())
	}
	sort.Strings(names)
	return none, &exitError{code: exitUsage, err: fmt.Errorf("%q names %d sessions:\n  %s", arg, len(found), strings.Join(names, "\n  ")),
		hint: "give more of the id, or the file's path"}
}

// fileSession returns the session id that the transcript at path
// records, when it begins with start, the part of it the file's name
// holds; else start.
func fileSession(path, start string) string {
	f, err := os.Open(path)
	if err != nil {
		return start
	}
	defer f.Close()
	if _, id, err := session.Detect(f, session.Compressed(path), ""); err == nil && strings.HasPrefix(id, start) {
		return id
	}
	return start
}

// collectErr is the usage error of session.Collect's err, with a hint
// where the likely mistake is known.
func collectErr(err error) error {
	var in *session.InStoreError
	switch {
	case errors.As(err, &in):
		return fatal(err, "name the transcripts, or the folders that hold them; a store is named with --store")
	case errors.Is(err, fs.ErrNotExist):
		return fatal(err, "without a PATH, migrate, stats and check list the agents' session folders on this machine")
	}
	return fatal(err, "")
}

// requirePaths is requireArgs for the commands that take transcripts to
// read: given no PATH, its hint lists the agents' session folders on this
// machine with the size and number of their transcripts, so that a new
// user sees where to point the tool.
func requirePaths(c *cli.Context) ([]string, error) {
	paths, err := requireArgs(c, "path")
	var ee *exitError
	if err == nil || !errors.As(err, &ee) {
		return paths, err
	}
	home, herr := os.UserHomeDir()
	if herr != nil {
		return nil, err
	}
	var b strings.Builder
	for _, f := range session.Folders(home) {
		inputs, cerr := session.Collect([]string{f})
		if cerr != nil {
			continue
		}
		var size int64
		for _, in := range inputs {
			size += in.Size
		}
		fmt.Fprintf(&b, "\n  %s (%s in %s)", f, human(size), display.Plural(len(inputs), "transcript"))
	}
	if b.Len() > 0 {
		ee.hint += "\nthe agents' session folders on this machine:" + b.String()
	}
	return nil, ee
}

// skeletons gives the skeletons of t's long lines, as show and recall read
// them (show.LongOptions): a line whose skeleton would be too large is
// told apart as one nested too deeply for JSON, transcript.ErrTooDeep.
func skeletons(t *session.Transcript) func(transcript.Line) (*transcript.Skeleton, error) {
	return func(l transcript.Line) (*transcript.Skeleton, error) {
		sk, src, err := t.ReadLong(l, show.LongOptions)
		if errors.Is(err, transcript.ErrSkeletonTooLarge) {
			// Mostly structure: perhaps nested past what JSON allows.
			if deep, derr := transcript.TooDeep(io.NewSectionReader(src, 0, l.Len)); derr == nil && deep {
				return nil, transcript.ErrTooDeep
			}
		}
		return sk, err
	}
}

// storeMissing reports, for a store in a local folder, why it cannot be
// seen (an error wrapping fs.ErrNotExist when the folder is not there);
// a store in object storage is found or not by the reads themselves.
func storeMissing(spec string) error {
	if strings.Contains(spec, "://") {
		return nil
	}
	_, err := os.Stat(spec)
	return err
}

// openStore opens the store that --store (or its default) names.
func openStore(spec string) (*registry.Store, error) {
	s, err := registry.Open(location.Open, spec)
	if err != nil {
		return nil, usageErr("--store: %v", err)
	}
	return s, nil
}
