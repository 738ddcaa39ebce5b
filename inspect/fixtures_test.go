package inspect_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// threshold is the payload size of the tests: small, so sessions stay
// readable. Their payloads are larger than the placeholders and marker
// edits that stand for them, so that migrate moves them.
const threshold = 200

// text returns a tool output of size bytes, different for each i.
func text(i, size int) string { return testsession.Text(i, size) }

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Sessions of each format with two payloads over threshold each, and
// their tools named only by the calls they answer (pi names its own).
func piSession() string { return string(testsession.Pi("pi-1", 2, 2000)) }

func claudeSession() string {
	out := jsonString(text(11, 2000))
	return strings.Join([]string{
		`{"type":"user","sessionId":"cc-1","uuid":"u1","parentUuid":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"read x"}}`,
		`{"type":"assistant","sessionId":"cc-1","uuid":"a1","parentUuid":"u1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/x"}}]}}`,
		`{"type":"user","sessionId":"cc-1","uuid":"u2","parentUuid":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + out + `}]},"toolUseResult":{"type":"text","file":{"filePath":"/x","content":` + out + `}}}`,
	}, "\n") + "\n"
}

func codexSession() string {
	return strings.Join([]string{
		`{"timestamp":"2025-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"cx-1","cwd":"/w"}}`,
		`{"timestamp":"2025-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}}`,
		`{"timestamp":"2025-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":` + jsonString(text(12, 2000)) + `}}`,
		`{"timestamp":"2025-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"call_1","stdout":` + jsonString(text(13, 1800)) + `,"exit_code":0}}`,
	}, "\n") + "\n"
}

func chatSession() string {
	return strings.Join([]string{
		`{"role":"system","content":"be brief"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`,
		`{"role":"tool","tool_call_id":"call_9","content":` + jsonString(text(14, 2000)) + `}`,
		`{"messages":[{"role":"tool","tool_call_id":"call_9","content":` + jsonString(text(15, 1800)) + `}]}`,
	}, "\n") + "\n"
}

// sessions are one session per format, by file name.
func sessions() map[string]string {
	return map[string]string{
		"pi.jsonl":     piSession(),
		"claude.jsonl": claudeSession(),
		"codex.jsonl":  codexSession(),
		"chat.jsonl":   chatSession(),
	}
}

// tree writes files into a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	}
	return dir
}

func collect(t *testing.T, paths ...string) []session.Input {
	t.Helper()
	inputs, err := session.Collect(paths)
	require.NoError(t, err)
	return inputs
}

// migrateTree migrates everything under dir at threshold.
func migrateTree(t *testing.T, dir string) migrate.Summary {
	t.Helper()
	sum := migrate.Run(context.Background(), collect(t, dir), migrate.Options{OpenStore: local.Open, Threshold: threshold, Jobs: 1})
	require.Zero(t, sum.Failed, "%+v", sum.Results)
	return sum
}

// snapshot returns every file under dir with its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	}))
	return files
}
