package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewHint is how an image's placeholder tells Codex's model to see the
// image again, and captures the artifact's path.
var viewHint = regexp.MustCompile(`call view_image with path (\S+) to see it again`)

// TestCodexScreenshotInCompactions: a Codex rollout holding the same
// screenshot in a user message and in the histories of two compactions
// (as Codex's compactions keep it: the replaced history's user message,
// input_image and all) shrinks to a few percent of its size, with one
// image artifact; Codex resumes it, its model is shown an input_text
// naming the artifact's path, calls view_image on it, and is shown the
// screenshot.
func TestCodexScreenshotInCompactions(t *testing.T) {
	forEachPin(t, codexPin, func(t *testing.T, pin string) {
		shot := noisePNG(t, 360, 360)
		shotPath := filepath.Join(t.TempDir(), "screenshot.png")
		require.NoError(t, os.WriteFile(shotPath, shot, 0o644))
		run := newCodexRollout(t, pin, []responsesStep{reply(assistantMessage("I see the screenshot."))}, "Look at this screenshot.", "-i", shotPath)
		home, rollout := run.home, run.rollout
		appendCompactions(t, rollout, 2)

		// The resumed turn: the model looks at the placeholder's path with
		// view_image, then answers.
		var seen []byte
		look := func(req recordedRequest) []map[string]any {
			if out, ok := req.functionOutput("call_img"); ok {
				var items []struct {
					Type     string `json:"type"`
					ImageURL string `json:"image_url"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &items), "view_image's output: %.200s", out)
				for _, it := range items {
					if data, ok := strings.CutPrefix(it.ImageURL, "data:image/png;base64,"); ok && it.Type == "input_image" {
						var derr error
						seen, derr = base64.StdEncoding.DecodeString(data)
						require.NoError(t, derr)
					}
				}
				return []map[string]any{assistantMessage("It is the same screenshot.")}
			}
			m := viewHint.FindStringSubmatch(string(req.Body))
			if m == nil {
				return []map[string]any{assistantMessage("The screenshot is above.")}
			}
			args, _ := json.Marshal(map[string]string{"path": m[1]})
			return []map[string]any{{"type": "function_call", "call_id": "call_img", "name": "view_image", "arguments": string(args)}}
		}
		resume := func() []recordedRequest { return run.resume(t, "Look at the screenshot again.", look, look) }
		twin, original, migrated := run.twinThenMigrate(t, resume)
		require.Equal(t, 3, bytes.Count(original, []byte(`"type":"input_image"`)), "the screenshot in the user message and in two compactions")
		t.Logf("screenshot: %d bytes", len(shot))
		assert.Less(t, 10*len(migrated), len(original), "the migrated rollout is under 10% of its size")
		var listed []struct {
			ID    string `json:"id"`
			Media string `json:"media"`
		}
		require.NoError(t, json.Unmarshal(runTool(t, "ls", "--json", "--store", filepath.Join(home, "sessions", "artifacts")), &listed))
		var images []string
		for _, a := range listed {
			if strings.HasPrefix(a.Media, "image/") {
				images = append(images, a.ID)
			}
		}
		assert.Len(t, images, 1, "one image artifact for the three copies: %+v", listed)

		after := resume()
		require.Len(t, twin, 1, "unmigrated, the model is shown the screenshot")
		require.Len(t, after, 2, "migrated, the model calls view_image on the placeholder's path")
		t.Logf("resumed request: %d bytes unmigrated, %d migrated", len(twin[0].Body), len(after[0].Body))
		assert.Equal(t, itemShapes(twin[0]), itemShapes(after[0]), "the same input items, in the same order")
		assert.Less(t, len(after[0].Body), len(twin[0].Body)/4)
		m := viewHint.FindStringSubmatch(string(after[0].Body))
		require.NotNil(t, m)
		assert.True(t, filepath.IsAbs(m[1]), "the path is absolute: %s", m[1])
		assert.Equal(t, shotBytes(t, original), seen, "view_image on the placeholder's path shows the model the screenshot")
	})
}

// appendCompactions appends n compacted items to a rollout whose user
// message holds an image: each replaces the history by that message and
// the assistant's answer, as a compaction that keeps the user's messages
// writes them.
func appendCompactions(t *testing.T, rollout string, n int) {
	t.Helper()
	data, err := os.ReadFile(rollout)
	require.NoError(t, err)
	var user json.RawMessage
	var ordinal int
	var ts string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var l struct {
			Timestamp string          `json:"timestamp"`
			Ordinal   int             `json:"ordinal"`
			Type      string          `json:"type"`
			Payload   json.RawMessage `json:"payload"`
		}
		require.NoError(t, json.Unmarshal(line, &l))
		ordinal, ts = l.Ordinal, l.Timestamp
		if l.Type == "response_item" && bytes.Contains(l.Payload, []byte(`"input_image"`)) {
			user = l.Payload
		}
	}
	require.NotNil(t, user, "the rollout holds the user's image")
	f, err := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	for i := 0; i < n; i++ {
		ordinal++
		history := []any{user, assistantMessage("I see the screenshot.")}
		line, err := json.Marshal(map[string]any{"timestamp": ts, "ordinal": ordinal, "type": "compacted", "payload": map[string]any{
			"message": "The user showed a screenshot (compaction " + string(rune('1'+i)) + ").", "replacement_history": history}})
		require.NoError(t, err)
		_, err = f.Write(append(line, '\n'))
		require.NoError(t, err)
	}
}

// shotBytes returns the image a rollout's user message holds: the bytes
// Codex sent of the screenshot.
func shotBytes(t *testing.T, rollout []byte) []byte {
	t.Helper()
	m := regexp.MustCompile(`"image_url":"data:image/png;base64,([A-Za-z0-9+/=]+)"`).FindSubmatch(rollout)
	require.NotNil(t, m)
	b, err := base64.StdEncoding.DecodeString(string(m[1]))
	require.NoError(t, err)
	return b
}
