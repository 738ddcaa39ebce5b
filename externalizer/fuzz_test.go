package externalizer

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// fuzzThreshold is small so that short inputs reach payload sites.
const fuzzThreshold = 64

// pad is a payload over fuzzThreshold that moves: larger than the
// placeholder and marker edit that would stand for it.
var pad = strings.Repeat("payload-", 200)

// pngPad is the base64 data of an image that moves at fuzzThreshold: a
// PNG of one pixel followed by bytes no decoder reads.
var pngPad = base64.StdEncoding.EncodeToString(append(pngPixel, bytes.Repeat([]byte{0, 255}, 600)...))

var pngPixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// fuzzTemplates put fuzz input where payload sites are: as a content block,
// inside a large string, as a details key and value, inside image data, as
// command output; and as the key of a last member that looks like a broken
// marker. Most inputs make the line invalid JSON, which is fine:
// the line must then be kept as it is.
var fuzzTemplates = []struct{ before, after string }{
	{`{"type":"message","id":"e1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"` + pad + `"},`,
		`],"details":{"aggregated":"` + pad + `"},"isError":false}}`},
	{`{"type":"message","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"` + pad,
		`"}],"details":{"diff":"` + pad + `"}}}`},
	{`{"type":"message","message":{"role":"toolResult","content":"` + pad + `","details":{"`,
		`":"` + pad + `"}}}`},
	{`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + pad + `"}],"details":`,
		`}}`},
	{`{"type":"message","message":{"role":"user","content":[{"type":"image","data":"` + pngPad,
		`","mimeType":"image/png"}]}}`},
	{`{"type":"message","message":{"role":"bashExecution","command":"ls","output":`,
		`,"exitCode":0}}`},
	{`{"type":"message","message":{"role":"toolResult","content":"` + pad + `"},"`,
		`":{"v":1,"edits":[]}}`},
}

// fuzzSeeds are lines in the spirit of testdata/sessions' hostile cases,
// with payloads that move.
var fuzzSeeds = []string{
	`{"type":"session","version":3,"id":"s","timestamp":"2025-07-01T10:00:00.000Z","cwd":"/tmp"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + pad + `"}],"isError":false,"timestamp":1}}` + "\n",
	"\uFEFF" + `{"type":"message","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"` + pad + `"}]}}` + "\r\n\r\n",
	`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"` + pad + `\r\n\t\u0000\u001b[0m","exitCode":-0.0,"timestamp":1E+400}}`,
	`{"type": "message", "message": {"role": "toolResult", "content": [{"type": "text", "text": "caf\u00e9 \ud83c\udf89 \u2028 ` + pad + `"}]}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"https:\/\/example.com\/caf\u00E9 ` + pad + `"}]}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"lone \ud800 ` + pad + `"}],"details":{"diff":"\udc00\ud800 ` + pad + `"}}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + pad + `"}],"content":"small","details":{"diff":"` + pad + `","diff":1}}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"[Tool result omitted: stored as artifact]\nid: 0000000000000000000000000000000000000000000000000000000000000000\npath: x ` + pad + `"}],"details":{"artifactRef":{"id":"art_1","type":"tool-result"},"artifactVersion":1}}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + pad + `"}],"details":{"openclawSyntheticMissingToolResult":true,"aggregated":"` + pad + `"},"isError":true}}`,
	`{"message":{"details":{"truncation":{"content":"` + pad + `"}},"content":[{"text":"` + pad + `","type":"text"}],"role":"toolResult"},"type":"message"}`,
	`{"type":"m\u0065ssage","message":{"\u0072ole":"toolResult","con\u0074ent":"` + pad + `","details":{"a/b~c":"` + pad + `","":"` + pad + `"}}}`,
	`{"type":"message","message":{"role":"toolResult","content":[[[[[[[[[[[[[[[[["` + pad + `"]]]]]]]]]]]]]]]]]}}`,
	"{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"toolName\":\"re\xffad\",\"content\":[{\"type\":\"te\xffxt\",\"text\":\"\xe6\x97 " + pad + "\"}]}}",
	`{"type":"message","message":{"role":"user","content":[{"type":"image","data":"` + pngPad + `","mimeType":"image/png"}]}}`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + pad + `"}]}}` + "\nnot json\n" + `{"type":"message","message":{"role":"toolResult","content":[{"type":"te`,
	`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` + pad + `"}],"details":{"transcriptTool":{"v":1}}}}`,
	`{"type":"message","message":{"role":"toolResult","content":"` + pad + `"},"transcriptTool":"an entry's own member"}`,
	`{"transcriptTool":1,"type":"note"}` + "\n" + `{"type":"note","transcriptTool":{"v":1,"sha256":"00","edits":[]}}`,
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, store := roundTrip(t, piFormat, fuzzThreshold, data)
		checkMigrated(t, piFormat, fuzzThreshold, data, out, store)
		for _, tpl := range fuzzTemplates {
			line := []byte(tpl.before + string(data) + tpl.after)
			out, store := roundTrip(t, piFormat, fuzzThreshold, line)
			checkMigrated(t, piFormat, fuzzThreshold, line, out, store)
		}
	})
}
