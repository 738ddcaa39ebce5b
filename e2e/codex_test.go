package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// codexPin is the Codex release the tests drive.
const codexPin = "@openai/codex@0.171.0"

// codexMarker ends the large output, and nothing else: not its first
// line, which a placeholder's summary shows, nor the command, which cuts it
// in two. Finding it proves the model was shown the output's last bytes.
const codexMarker = "MARKER-codex-large-output-7f3a"

// TestCodexResumesMigratedSession has Codex write a session with large
// shell outputs, migrates it in place with the default store, and resumes
// it next to an unmigrated twin: the model is shown the same items in a
// fraction of the bytes, and opens a placeholder's path with Codex's own
// shell tool to get the output back.
func TestCodexResumesMigratedSession(t *testing.T) {
	forEachPin(t, codexPin, testCodexResume)
}

func testCodexResume(t *testing.T, pin string) {
	twin := "seq -f 'twin row %05g, the same output twice' 1 1500"
	run := newCodexRollout(t, pin, []responsesStep{
		reply(execCommand("call_big", bigCommand)),
		reply(execCommand("call_twin1", twin)),
		reply(execCommand("call_twin2", twin)),
		reply(execCommand("call_fail", "echo about to fail >&2; ls /no/such/dir; exit 3")),
		reply(assistantMessage("All four commands ran.")),
	}, "Run the commands.")
	home, rollout := run.home, run.rollout
	thread := rolloutThread(t, rollout)

	// The resumed turn: the model opens the path of the large output's
	// placeholder with exec_command, when there is one, then ends the turn.
	recall := func(req recordedRequest) []map[string]any {
		if _, done := req.functionOutput("call_cat"); done {
			return []map[string]any{assistantMessage("I read the stored output.")}
		}
		out, ok := req.functionOutput("call_big")
		require.True(t, ok, "the resumed request holds the large output's call")
		if m := pathLine.FindStringSubmatch(out); m != nil {
			return []map[string]any{execCommand("call_cat", "cat "+m[1])}
		}
		return []map[string]any{assistantMessage("The output is above.")}
	}
	resume := func() []recordedRequest { return run.resume(t, "Show me the first output again.", recall, recall) }
	before, original, migrated := run.twinThenMigrate(t, resume)
	require.Less(t, len(migrated), len(original), "migrate shrinks the rollout")
	// Each output is written twice, in an item_completed event and after
	// a header in the function_call_output: the large output once, the
	// twin command's twice, make six references to two objects.
	ids := regexp.MustCompile(`artifact ([0-9a-f]{64})|\\nid: ([0-9a-f]{64})`).FindAllSubmatch(migrated, -1)
	distinct := map[string]int{}
	for _, id := range ids {
		distinct[string(id[1])+string(id[2])]++
	}
	t.Logf("the rollout refers %d times to %d artifacts", len(ids), len(distinct))
	assert.Len(t, ids, 6, "item_completed outputs and function_call_outputs are externalized")
	assert.Len(t, distinct, 2, "identical outputs, and each output's two copies, are one artifact")

	after := resume()
	placeholder, _ := after[0].functionOutput("call_big")
	t.Logf("the model saw, for the large output:\n%s", placeholder)
	require.Equal(t, 1, len(before), "unmigrated, the model answers at once")
	require.Equal(t, 2, len(after), "migrated, the model runs cat, then answers")

	// (a) The model is shown the same items, whatever their size, (b) in
	// a fraction of the bytes.
	assertLeaner(t, before[0], after[0], codexMarker)
	// (c) cat of the placeholder's path gives the model the artifact.
	m := pathLine.FindStringSubmatch(placeholder)
	require.NotNil(t, m, "the placeholder has a path: line")
	path := m[1]
	require.True(t, filepath.IsAbs(path), "the placeholder's path is absolute: %s", path)
	artifact, err := os.ReadFile(path)
	require.NoError(t, err)
	cat, ok := after[1].functionOutput("call_cat")
	require.True(t, ok, "Codex returns the output of cat to the model")
	t.Logf("cat %s gave the model %d bytes, beginning:\n%.300s", path, len(cat), cat)
	assert.Contains(t, cat, string(artifact), "the model reads the whole artifact")
	assert.Contains(t, cat, codexMarker+"\n")

	// (d) Codex's thread history holds the resumed turn, and no offset
	// points past the rollout.
	assertThreadHistory(t, home, thread, rollout, "call_cat")
}

// bigCommand prints a large output that ends with codexMarker.
var bigCommand = fmt.Sprintf("seq -f 'row %%05g of the large shell output' 1 1800; m=%s; echo $m%s", codexMarker[:12], codexMarker[12:])

// codexRun is a Codex home in which Codex wrote one rollout.
type codexRun struct {
	codex               agent
	api                 *responsesAPI
	home, work, rollout string
}

// newCodexRollout has Codex release pin run `codex exec` once in a new
// home and working folder, with args (a prompt and more), against a new
// stand-in answering steps, and returns the rollout it wrote.
func newCodexRollout(t *testing.T, pin string, steps []responsesStep, args ...string) codexRun {
	t.Helper()
	r := newCodexHome(t, pin)
	r.exec(t, steps, args...)
	return r
}

// newCodexHome returns a new home and working folder for Codex release
// pin, and its stand-in, with no rollout yet.
func newCodexHome(t *testing.T, pin string) codexRun {
	t.Helper()
	r := codexRun{codex: findAgent(t, pin, "codex"), api: newResponsesAPI(t), work: t.TempDir()}
	r.home = codexHome(t, r.api)
	return r
}

// exec runs `codex exec` with args against the stand-in answering steps,
// and sets r.rollout to the rollout Codex wrote.
func (r *codexRun) exec(t *testing.T, steps []responsesStep, args ...string) {
	t.Helper()
	r.api.Play(steps, func() {
		runCodex(t, r.codex, r.home, r.work, append([]string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, args...)...)
	})
	rollouts, err := filepath.Glob(filepath.Join(r.home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	require.NoError(t, err)
	require.Len(t, rollouts, 1, "Codex writes one rollout")
	r.rollout = rollouts[0]
}

// resume runs `codex exec resume` of r's rollout with prompt against the
// stand-in answering steps, and returns the requests it made.
func (r codexRun) resume(t *testing.T, prompt string, steps ...responsesStep) []recordedRequest {
	t.Helper()
	return r.api.Play(steps, func() {
		runCodex(t, r.codex, r.home, r.work, "exec", "resume", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
			rolloutThread(t, r.rollout), prompt)
	})
}

// twinThenMigrate is the package's twinThenMigrate for r's rollout and
// sessions folder. The unmigrated twin resumes at the same path, its home
// copied first and put back after, because Codex finds a rollout by its
// absolute path (state_5.sqlite) and tells the model where its home's
// skills are: a copy elsewhere gets one more developer message and no
// rollout. migrate resets Codex's thread history of the rollout.
func (r codexRun) twinThenMigrate(t *testing.T, resume func() []recordedRequest) (twin []recordedRequest, original, migrated []byte) {
	t.Helper()
	return twinThenMigrate(t, r.home, r.rollout, filepath.Join(r.home, "sessions"), resume)
}

// twinThenMigrate resumes the session at path unmigrated with resume,
// with home copied first and put back after, migrates the sessions
// folder in place with the default store, as a user would, and checks
// that rehydrate gives the original bytes back. It returns the
// unmigrated resume's requests and the session's bytes before and after
// the migration.
func twinThenMigrate(t *testing.T, home, path, sessions string, resume func() []recordedRequest) (twin []recordedRequest, original, migrated []byte) {
	t.Helper()
	original, err := os.ReadFile(path)
	require.NoError(t, err)
	saved := filepath.Join(t.TempDir(), "home")
	copyTree(t, home, saved)
	twin = resume()
	require.NoError(t, os.RemoveAll(home))
	copyTree(t, saved, home)
	runTool(t, "migrate", sessions)
	migrated, err = os.ReadFile(path)
	require.NoError(t, err)
	t.Logf("%s: %d bytes, migrated in place: %d bytes (%.1f%%)", filepath.Base(path), len(original), len(migrated), 100*float64(len(migrated))/float64(len(original)))
	assert.Equal(t, original, runTool(t, "rehydrate", path), "rehydrate gives the original bytes back")
	return twin, original, migrated
}

// assertLeaner checks what the model was shown resuming a session, before
// and after its migration: the same input items, in at most a quarter of
// the bytes, marker (which ends a large output) only before.
func assertLeaner(t *testing.T, before, after recordedRequest, marker string) {
	t.Helper()
	assert.Equal(t, itemShapes(before), itemShapes(after), "the same input items, in the same order")
	t.Logf("request body resuming the session: %d bytes unmigrated, %d bytes migrated (%.1f%%)",
		len(before.Body), len(after.Body), 100*float64(len(after.Body))/float64(len(before.Body)))
	assert.LessOrEqual(t, 4*len(after.Body), len(before.Body), "the migrated request is at most a quarter of the original")
	assert.Contains(t, string(before.Body), marker, "the twin's request carries the large output inline")
	assert.NotContains(t, string(after.Body), marker, "the migrated request does not")
}

// codexHome writes a CODEX_HOME whose config points Codex at api.
func codexHome(t *testing.T, api *responsesAPI) string {
	home := t.TempDir()
	config := fmt.Sprintf(`model = "stand-in"
model_provider = "standin"
# Codex keeps about 12 KB of a tool's output unless told otherwise; the
# test needs the large outputs users' sessions hold.
tool_output_token_limit = 1000000
check_for_update_on_startup = false

[model_providers.standin]
name = "stand-in"
base_url = %q
wire_api = "responses"
env_key = "STANDIN_API_KEY"
`, api.URL()+"/v1")
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600))
	return home
}

// runCodex runs Codex with its home in home and nothing of the
// developer's own.
func runCodex(t *testing.T, codex agent, home, dir string, args ...string) {
	t.Helper()
	env := []string{"CODEX_HOME=" + home, "HOME=" + filepath.Dir(home), "STANDIN_API_KEY=stand-in"}
	runAgent(t, codex, dir, env, 60*time.Second, args...)
}

// rolloutThread returns the thread id that ends a rollout's file name.
func rolloutThread(t *testing.T, rollout string) string {
	m := regexp.MustCompile(`-([0-9a-f-]{36})\.jsonl$`).FindStringSubmatch(rollout)
	require.NotNil(t, m, "a rollout's name ends with its thread id: %s", rollout)
	return m[1]
}

func openCodexDB(t *testing.T, home, name string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(home, name)+"?mode=rw")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// itemShapes is what a request's input items are, without their content:
// type, role and call id.
func itemShapes(req recordedRequest) []string {
	shapes := make([]string, len(req.Input))
	for i, it := range req.Input {
		shapes[i] = fmt.Sprintf("%v %v %v", it["type"], it["role"], it["call_id"])
	}
	return shapes
}

// assertThreadHistory checks Codex's projection of the thread after the
// resume: two turns, the second with the call callID, and every turn's
// byte range inside the rollout.
func assertThreadHistory(t *testing.T, home, thread, rollout, callID string) {
	fi, err := os.Stat(rollout)
	require.NoError(t, err)
	db := openCodexDB(t, home, "thread_history_1.sqlite")
	rows, err := db.Query(`SELECT turn_id, rollout_end_byte_offset FROM thread_turns WHERE thread_id = ? ORDER BY rollout_ordinal`, thread)
	require.NoError(t, err)
	defer rows.Close()
	var turns []string
	for rows.Next() {
		var turn string
		var end sql.NullInt64
		require.NoError(t, rows.Scan(&turn, &end))
		turns = append(turns, turn)
		assert.LessOrEqual(t, end.Int64, fi.Size(), "turn %s ends inside the rollout", turn)
	}
	require.NoError(t, rows.Err())
	require.Len(t, turns, 2, "the thread history holds the first turn and the resumed one")

	var itemTurn string
	var size int
	err = db.QueryRow(`SELECT turn_id, length(item_json) FROM thread_items WHERE thread_id = ? AND item_id = ?`, thread, callID).Scan(&itemTurn, &size)
	require.NoError(t, err, "the thread history holds the resumed turn's %s", callID)
	assert.Equal(t, turns[1], itemTurn)
	var bigItem int
	require.NoError(t, db.QueryRow(`SELECT length(item_json) FROM thread_items WHERE thread_id = ? AND item_id = 'call_big'`, thread).Scan(&bigItem))
	assert.Less(t, bigItem, 4096, "re-read from the migrated rollout, the large output's item is a placeholder")
	var next int64
	require.NoError(t, db.QueryRow(`SELECT next_rollout_byte_offset FROM thread_history_projection_state WHERE thread_id = ?`, thread).Scan(&next))
	assert.Equal(t, fi.Size(), next, "Codex read the rollout to its end")
	t.Logf("thread history: %d turns, call_big's item %d bytes, %s's item %d bytes, read up to byte %d of %d",
		len(turns), bigItem, callID, size, next, fi.Size())
}

// TestCodexCompressedRollout: a rollout Codex compressed itself, as its
// compression of idle rollouts writes it (one zstd frame at level 3 with
// its content size and checksum, mtime and mode kept, the plain file
// gone), migrates in place and rehydrates to its JSONL bytes; Codex
// resumes the migrated one, which it decompresses back to a plain
// rollout, and shows the model the placeholder.
func TestCodexCompressedRollout(t *testing.T) {
	forEachPin(t, codexPin, func(t *testing.T, pin string) {
		run := newCodexRollout(t, pin, []responsesStep{reply(execCommand("call_big", bigCommand)), reply(assistantMessage("Done."))}, "Run the command.")
		home, rollout := run.home, run.rollout
		plain, err := os.ReadFile(rollout)
		require.NoError(t, err)
		fi, err := os.Stat(rollout)
		require.NoError(t, err)
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
		require.NoError(t, err)
		compressed := enc.EncodeAll(plain, nil)
		require.NoError(t, os.WriteFile(rollout+".zst", compressed, fi.Mode().Perm()))
		require.NoError(t, os.Chtimes(rollout+".zst", fi.ModTime(), fi.ModTime()))
		require.NoError(t, os.Remove(rollout))

		runTool(t, "migrate", filepath.Join(home, "sessions"))
		migrated, err := os.ReadFile(rollout + ".zst")
		require.NoError(t, err)
		t.Logf("rollout: %d bytes, compressed %d, migrated %d", len(plain), len(compressed), len(migrated))
		assert.NoFileExists(t, rollout)
		assert.Equal(t, plain, runTool(t, "rehydrate", rollout+".zst"), "rehydrate gives the JSONL bytes back")

		require.Len(t, run.resume(t, "Show me the output again.", func(req recordedRequest) []map[string]any {
			out, ok := req.functionOutput("call_big")
			require.True(t, ok, "the resumed request holds the large output's call")
			assert.Contains(t, out, placeholderHead, "the model is shown the placeholder")
			assert.NotContains(t, out, codexMarker)
			return []map[string]any{assistantMessage("Seen.")}
		}), 1)
		resumed, err := os.ReadFile(rollout)
		require.NoError(t, err, "Codex decompressed the rollout it resumed")
		d, err := zstd.NewReader(nil)
		require.NoError(t, err)
		defer d.Close()
		migratedPlain, err := d.DecodeAll(migrated, nil)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(resumed, migratedPlain), "Codex resumed the migrated rollout and appended to it")
		t.Logf("verify: %s", runTool(t, "verify", filepath.Join(home, "sessions")))
	})
}
