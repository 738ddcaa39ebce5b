package externalizer

import (
	"testing"

	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// siteSeeds are one entry per format with payloads that move.
var siteSeeds = []string{
	`{"type":"message","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":"` + pad + `"}],"details":{"diff":"` + pad + `","truncation":{"content":"` + pad + `"}}}}`,
	`{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":[{"type":"text","text":"` + pad + `"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngPad + `"}}]}]},"toolUseResult":{"stdout":"` + pad + `","file":{"content":"` + pad + `"},"structuredPatch":[{"lines":["` + pad + `"]}]}}`,
	`{"type":"progress","sessionId":"s","data":{"type":"agent_progress","message":{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"` + pad + `"}]}},"fullOutput":"` + pad + `"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"` + pad + `"},{"type":"input_image","image_url":"data:image/png;base64,` + pngPad + `"}]}}`,
	`{"timestamp":"t","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","stdout":"` + pad + `","aggregated_output":"` + pad + `"}}`,
	`{"timestamp":"t","type":"compacted","payload":{"replacement_history":[{"type":"custom_tool_call_output","call_id":"c","output":"` + pad + `"}]}}`,
	`{"type":"function_call_output","call_id":"c","output":"` + pad + `"}`,
	`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"` + pad + `"}]}`,
	`{"id":"x","messages":[{"role":"user","content":"hi"},{"role":"tool","content":"` + pad + `"}]}`,
	`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"result":{"content":"` + pad + `","detailedContent":"` + pad + `","contents":[{"type":"text","text":"` + pad + `"},{"type":"image","data":"` + pngPad + `","mimeType":"image/png"}]},"error":{"message":"` + pad + `"}},"id":"e","parentId":null}`,
	`{"type":"session.binary_asset","data":{"assetId":"sha256:0","type":"image","mimeType":"image/png","data":"` + pngPad + `"},"id":"e","parentId":"d"}`,
}

// FuzzSites runs every format's site finder on arbitrary entries: it must
// not panic; its sites must be in document order, not overlap, and be
// named by pointers that resolve to them; and rewriting the entry with
// that format must restore exactly.
func FuzzSites(f *testing.F) {
	for _, s := range siteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		root, err := transcript.Parse(line, 0)
		if err != nil || root.Kind() != transcript.Object {
			return
		}
		for _, fm := range format.Formats() {
			sites := fm.Sites(root, fuzzThreshold, nil)
			end := 0
			for _, s := range sites {
				if s.Value.Start < end {
					t.Fatalf("%s: site %s overlaps or is out of order", fm.Name(), s.Path)
				}
				end = s.Value.End
				v, ok := s.Path.Resolve(root)
				if !ok || v.Start != s.Value.Start || v.End != s.Value.End {
					t.Fatalf("%s: pointer %s does not name its site", fm.Name(), s.Path)
				}
			}
			roundTrip(t, fm, fuzzThreshold, append(line, '\n'))
		}
	})
}
