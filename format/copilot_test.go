package format

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// copilotSession is a session that Copilot CLI 1.0.102 wrote, run
// offline against a stand-in model (see e2e/copilot_test.go): it viewed a
// text file too large to show, ran a command with a large output, one
// that failed with a large output, viewed a PNG and ran a small command,
// and was resumed once. The system prompt is replaced with one of ours,
// as long.
const copilotSession = "../testdata/sessions/copilot-session.jsonl"

// copilotEntries returns the events of copilotSession.
func copilotEntries(t *testing.T) []transcript.Value {
	t.Helper()
	data, err := os.ReadFile(copilotSession)
	require.NoError(t, err)
	var entries []transcript.Value
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		v, err := transcript.Parse(l, 0)
		require.NoError(t, err)
		entries = append(entries, v)
	}
	return entries
}

// TestCopilotSession: what the format finds in a session Copilot wrote.
func TestCopilotSession(t *testing.T) {
	entries := copilotEntries(t)
	f, ok := Detect(entries[0])
	require.True(t, ok)
	assert.Equal(t, Copilot, f.Name())
	assert.Equal(t, "edc43c2c-c9e0-4366-9834-ddb3b4a3889b", f.Session(entries[0]))

	var sites []string
	calls := map[string]string{}
	var requests []string
	for _, e := range entries {
		assert.True(t, f.Knows(e), "%s", e.Raw()[:min(80, e.Len())])
		assert.True(t, f.Detect(e), "every event tells the format")
		for _, c := range f.Sites(e, 4096, nil) {
			typ, _ := e.Get("type")
			sites = append(sites, strings.Join([]string{typ.Text(), c.Path.String(), c.ToolCallID, c.Exit,
				map[bool]string{true: "failed"}[c.Failed], c.Media}, " "))
			v, ok := c.Path.Resolve(e)
			require.True(t, ok, c.Path.String())
			assert.Equal(t, v, c.Value, "the site's value is the one its path names")
			assert.Equal(t, "view", c.ViewTool)
		}
		if MayCall(f, e.Raw()) {
			f.Calls(e, func(c Call) {
				if !c.Relayed {
					calls[c.ID] = c.Name + " " + c.MainArgument()
				}
			})
		}
		f.Requests(e, func(r Request) { requests = append(requests, r.Text) })
	}
	assert.Equal(t, []string{
		"system.message /data/content    ",
		"tool.execution_complete /data/result/content call_standin_0002 0  ",
		"tool.execution_complete /data/result/content call_standin_0003 3 failed ",
		"session.binary_asset /data/data    image/png",
	}, sites)
	assert.Equal(t, map[string]string{
		"call_standin_0001": "view /tmp/copilot-fixture/work/notes.txt",
		"call_standin_0002": "bash seq -f 'row %05g of the shell output' 1 600",
		"call_standin_0003": "bash seq -f 'error %05g' 1 700 >&2; exit 3",
		"call_standin_0004": "view /tmp/copilot-fixture/work/noise.png",
		"call_standin_0005": "bash echo small",
	}, calls)
	assert.Equal(t, []string{"Look at the notes and the image, run the commands", "Anything else?"}, requests)
}

// TestCopilotResultShapes: the other places of a tool's output in a
// tool.execution_complete event, as Copilot's session-events schema
// declares them.
func TestCopilotResultShapes(t *testing.T) {
	big := strings.Repeat("x", 5000)
	entry := `{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"result":{` +
		`"content":"` + big + `","detailedContent":"` + big + `","contents":[` +
		`{"type":"text","text":"` + big + `"},{"type":"terminal","text":"` + big + `","exitCode":1},` +
		`{"type":"shell_exit","shellId":"0","exitCode":1,"outputPreview":"` + big + `"},` +
		`{"type":"image","data":"` + big + `","mimeType":"image/png"},` +
		`{"type":"resource","resource":{"uri":"file:///a","text":"` + big + `"}},` +
		`{"type":"resource","resource":{"uri":"file:///b","mimeType":"image/jpeg","blob":"` + big + `"}},` +
		`{"type":"text","text":"small"}],` +
		`"structuredContent":{"rows":{"body":"` + big + `"}}}},"id":"e1","timestamp":"t","parentId":null}`
	f, v := entryOf(t, Copilot, entry)
	var got []string
	for _, s := range f.Sites(v, 4096, nil) {
		got = append(got, s.Path.String()+" "+map[Shape]string{ShapePlain: "plain", ShapeToolResult: "result", ShapeImageBlock: "image"}[s.Shape]+
			" "+s.Media+" "+map[bool]string{true: "failed"}[s.Failed])
	}
	assert.Equal(t, []string{
		"/data/result/content result  failed",
		"/data/result/detailedContent plain  failed",
		"/data/result/contents/0/text plain  failed",
		"/data/result/contents/1/text plain  failed",
		"/data/result/contents/2/outputPreview plain  failed",
		"/data/result/contents/3 image  failed",
		"/data/result/contents/4/resource/text plain  failed",
		"/data/result/contents/5/resource/blob plain image/jpeg failed",
		"/data/result/structuredContent/rows/body plain  failed",
	}, got)
}

// TestCopilotFailure: a failed call has no result but an error, whose
// message the model is shown.
func TestCopilotFailure(t *testing.T) {
	entry := `{"type":"tool.execution_complete","data":{"toolCallId":"c2","success":false,"error":{"message":"` +
		strings.Repeat("y", 5000) + `","code":"failure"}},"id":"e2","timestamp":"t","parentId":"e1"}`
	f, v := entryOf(t, Copilot, entry)
	sites := f.Sites(v, 4096, nil)
	require.Len(t, sites, 1)
	assert.Equal(t, "/data/error/message", sites[0].Path.String())
	assert.Equal(t, ShapeToolResult, sites[0].Shape)
	assert.Equal(t, "c2", sites[0].ToolCallID)
	assert.True(t, sites[0].Failed)
}

// TestCopilotDetect: an event is told by its type and the members every
// event has, and nothing else is taken for one.
func TestCopilotDetect(t *testing.T) {
	for entry, want := range map[string]bool{
		`{"type":"session.start","data":{"sessionId":"s"},"id":"a","timestamp":"t","parentId":null}`: true,
		`{"type":"user.message","data":{"content":"hi"},"id":"a","timestamp":"t","parentId":"b"}`:    true,
		`{"type":"user.message","data":{"content":"hi"}}`:                                            false,
		`{"type":"user","sessionId":"s","parentUuid":null,"message":{}}`:                             false,
		`{"type":"session.brand_new","data":{},"id":"a","parentId":null}`:                            false,
	} {
		v, err := transcript.Parse([]byte(entry), 0)
		require.NoError(t, err)
		assert.Equal(t, want, copilot{}.Detect(v), entry)
	}
}
