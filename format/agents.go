package format

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Agent is one coding agent whose sessions the tool reads: the format it
// writes them in and where it keeps them. Each agent is declared once,
// in agents; the walker, the default store, the folders listed when a
// command is given no PATH and the help texts all read it from here.
// Paths are the host's (filepath), but Root and Subagents only read
// them, so that a bucket's keys, slash-separated, work alike.
type Agent struct {
	// Name is the agent's name as its users know it.
	Name string
	// Format is the name of the format of its sessions.
	Format string
	// Home is the hidden folder of the user's home folder that holds the
	// agent's state, and Sessions the patterns of its session folders
	// under Home, a "*" standing for every folder there: the rest of the
	// home holds prompt histories, logs and settings, some of them JSONL,
	// never sessions.
	Home     string
	Sessions []string
	// Root, when set, returns the session root of a transcript at path
	// laid out as the agent lays out its sessions: the folder whose store
	// serves its whole tree, so that one store deduplicates across it.
	// ok is false for a path not laid out so.
	Root func(path string) (root string, ok bool)
	// Subagents, when set, returns the glob pattern of the transcripts of
	// the subagents of the session whose transcript is at path, or "".
	Subagents func(path string) string
	// Skip, when set, reports whether a .jsonl file of a session folder is
	// known to hold no session, by its name.
	Skip func(name string) bool
	// Sidecar, when set, is the folder in which the agent keeps its own
	// files of a session beside the session's transcript.
	Sidecar *Sidecar
	// State, when set, is what the agent keeps about a session outside
	// its transcript and that a rewrite in place makes stale.
	State *State
	// Database, when set, is the name of the files in which the agent
	// keeps its sessions as the rows of a database rather than as JSONL
	// files (package agentdb reads and writes them): a file of that
	// name, named or found, stands for every session it holds.
	Database string
	// FolderLog, when set, is the name of the file that holds a session
	// in a folder of its own named by the session's id: a user knows
	// the session by the folder's name, not the file's, which every
	// session shares.
	FolderLog string
}

// Sidecar is a folder in which an agent keeps its own files of one
// session, beside the session's transcript: never sessions, whatever
// their names, and left as they are; stats counts them.
type Sidecar struct {
	// Name is the folder's name.
	Name string
	// Transcript returns the transcript whose own files the folder dir
	// would hold, ok false when dir is no such folder by its name.
	Transcript func(dir string) (transcript string, ok bool)
	// Folder returns the folder that would hold the agent's files of the
	// session of the transcript at path (a subagent's are its main
	// session's), and group, the folder of sessions under which reports
	// add it up.
	Folder func(path string) (dir, group string)
}

// agents are the agents, in the order their folders are listed.
var agents = []Agent{
	{
		Name: "Claude Code", Format: ClaudeCode, Home: ".claude", Sessions: []string{"projects"},
		// A subagent, <project>/<session>/subagents/agent-*.jsonl: the
		// project folder, the one of its main session.
		Root: func(path string) (string, bool) {
			dir := filepath.Dir(path)
			if filepath.Base(dir) != "subagents" {
				return "", false
			}
			return filepath.Dir(filepath.Dir(dir)), true
		},
		// <project>/<session>/subagents/*.jsonl beside
		// <project>/<session>.jsonl.
		Subagents: func(path string) string {
			dir := strings.TrimSuffix(strings.TrimSuffix(path, ".zst"), ".jsonl")
			if dir == path || filepath.Base(filepath.Dir(path)) == "subagents" {
				return ""
			}
			return filepath.Join(dir, "subagents", "*.jsonl")
		},
		// The outputs Claude Code stored itself for a session,
		// <project>/<session>/tool-results beside <project>/<session>.jsonl,
		// added up by project.
		Sidecar: &Sidecar{Name: "tool-results",
			Transcript: func(dir string) (string, bool) {
				if filepath.Base(dir) != "tool-results" {
					return "", false
				}
				return filepath.Dir(dir) + ".jsonl", true
			},
			// A subagent's, <project>/<session>/subagents/*.jsonl, are
			// its main session's.
			Folder: func(path string) (string, string) {
				dir, name := filepath.Split(path)
				project, session := filepath.Clean(dir), filepath.Join(dir, strings.TrimSuffix(name, ".jsonl"))
				if filepath.Base(project) == "subagents" {
					session = filepath.Dir(project)
					project = filepath.Dir(session)
				}
				return filepath.Join(session, "tool-results"), project
			},
		},
	},
	{
		Name: "Codex", Format: Codex, Home: ".codex", Sessions: []string{"sessions", "archived_sessions"},
		// Its thread history projects a rollout by byte offsets (package
		// agentstate).
		State: &State{What: "Codex's thread history"},
		// A rollout, sessions/YYYY/MM/DD/rollout-*.jsonl: sessions/; an
		// archived one, archived_sessions/rollout-*.jsonl: the sessions/
		// beside it, so that archiving a rollout keeps its store.
		Root: func(path string) (string, bool) {
			day := filepath.Dir(path)
			month := filepath.Dir(day)
			year := filepath.Dir(month)
			switch {
			case filepath.Base(day) == "archived_sessions":
				return filepath.Join(month, "sessions"), true
			case twoDigits.MatchString(filepath.Base(day)) && twoDigits.MatchString(filepath.Base(month)) &&
				fourDigits.MatchString(filepath.Base(year)) && filepath.Base(filepath.Dir(year)) == "sessions":
				return filepath.Dir(year), true
			}
			return "", false
		},
	},
	{
		Name: "pi", Format: Pi, Home: ".pi", Sessions: []string{filepath.Join("agent", "sessions")},
		// A session, sessions/--<cwd>--/*.jsonl: sessions/.
		Root: func(path string) (string, bool) {
			dir := filepath.Dir(path)
			if !piProject.MatchString(filepath.Base(dir)) || filepath.Base(filepath.Dir(dir)) != "sessions" {
				return "", false
			}
			return filepath.Dir(dir), true
		},
	},
	{
		// Its root is its own sessions/ folder.
		// agents/<id>/sessions holds the JSONL sessions of versions before
		// 2026.8, agents/<id>/agent the SQLite database of later ones.
		Name: "OpenClaw", Format: Pi, Home: ".openclaw",
		Sessions: []string{filepath.Join("agents", "*", "sessions"), filepath.Join("agents", "*", "agent")},
		// Its trajectories beside the sessions.
		Skip: func(name string) bool { return strings.HasSuffix(name, ".trajectory.jsonl") },
		// In the agent folder, agents/<id>/agent.
		Database: "openclaw-agent.sqlite",
	},
	{
		Name: "Gemini CLI", Format: Gemini, Home: ".gemini", Sessions: []string{filepath.Join("tmp", "*", "chats")},
		// A subagent, tmp/<project>/chats/<session>/*.jsonl: the chats/ of
		// its main session, inside the project's folder, the only one
		// besides the workspace that Gemini CLI's read_file opens.
		Root: func(path string) (string, bool) {
			chats := filepath.Dir(filepath.Dir(path))
			if filepath.Base(chats) != "chats" || filepath.Base(filepath.Dir(filepath.Dir(chats))) != "tmp" {
				return "", false
			}
			return chats, true
		},
	},
	{
		Name: "Qwen Code", Format: Qwen, Home: ".qwen",
		Sessions: []string{filepath.Join("projects", "*", "chats"), filepath.Join("projects", "*", "subagents")},
		// A subagent, projects/<project>/subagents/<session>/agent-*.jsonl:
		// the chats/ of the project, where its main session is.
		Root: func(path string) (string, bool) {
			subagents := filepath.Dir(filepath.Dir(path))
			if filepath.Base(subagents) != "subagents" || filepath.Base(filepath.Dir(filepath.Dir(subagents))) != "projects" {
				return "", false
			}
			return filepath.Join(filepath.Dir(subagents), "chats"), true
		},
	},
	{
		// A session is a folder of its own, session-state/<id>/events.jsonl
		// beside workspace.yaml: its root is that folder.
		Name: "Copilot CLI", Format: Copilot, Home: ".copilot", Sessions: []string{"session-state"},
		FolderLog: "events.jsonl",
	},
}

var (
	twoDigits  = regexp.MustCompile(`^[0-9]{2}$`)
	fourDigits = regexp.MustCompile(`^[0-9]{4}$`)
	piProject  = regexp.MustCompile(`^--.*--$`)
)

// Agents returns every agent whose sessions the tool reads, in the order
// their folders are listed.
func Agents() []Agent { return agents }

// Named returns the agent called name (Agent.Name); ok is false for
// none.
func Named(name string) (Agent, bool) {
	for _, a := range agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// DatabaseOf returns the agent that keeps its sessions in database files
// named as the file at path is (Agent.Database); ok is false for a name
// no agent gives its databases.
func DatabaseOf(path string) (Agent, bool) {
	name := filepath.Base(path)
	for _, a := range agents {
		if a.Database == name {
			return a, true
		}
	}
	return Agent{}, false
}

// FolderID returns the name of the folder of the transcript at path when
// an agent keeps each session in a folder named by its id, in a file
// named as the transcript is (Agent.FolderLog): the id the user knows the
// session by. ok is false for any other transcript.
func FolderID(path string) (id string, ok bool) {
	name := filepath.Base(path)
	for _, a := range agents {
		if a.FolderLog == name {
			return filepath.Base(filepath.Dir(path)), true
		}
	}
	return "", false
}

// SessionFolders returns the patterns of the agents' session folders in a
// home folder, as "~/" followed by the path, in the agents' order: for
// help texts.
func SessionFolders() []string {
	var folders []string
	for _, a := range agents {
		for _, s := range a.Sessions {
			folders = append(folders, "~/"+filepath.ToSlash(filepath.Join(a.Home, s)))
		}
	}
	return folders
}
