package externalizer

import (
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/transcript"
)

func init() { siteCheckers[format.Copilot] = copilotPayloads }

// copilotPayloads: a failed call's error message; every large string of
// a tool.execution_complete's result (its content, detailedContent,
// contents blocks, structured content) and the image data of its
// binaryResultsForLlm; a system message's prompt; a binary asset's data
// and a user message's inline attachment data.
func copilotPayloads(root transcript.Value, c siteCheck) {
	typ, _ := root.Get("type")
	data, _ := root.Get("data")
	switch {
	case typ.IsString("tool.execution_complete"):
		msg, _ := Pointer{"error", "message"}.Resolve(data)
		c.whole("error", msg)
		result, _ := data.Get("result")
		result.Members(func(m transcript.Member) bool {
			if m.Key.IsString("binaryResultsForLlm") {
				m.Value.Elems(func(_ int, b transcript.Value) bool {
					d, _ := b.Get("data")
					c.whole("binary result", d)
					return true
				})
			} else if !m.Key.IsString("mcpMeta") && !m.Key.IsString("citableSources") && !m.Key.IsString("uiResource") {
				c.strings("result", m.Value)
			}
			return true
		})
	case typ.IsString("system.message"):
		content, _ := data.Get("content")
		c.whole("system prompt", content)
	case typ.IsString("session.binary_asset"):
		d, _ := data.Get("data")
		c.whole("binary asset", d)
	case typ.IsString("user.message"):
		atts, _ := data.Get("attachments")
		atts.Elems(func(_ int, a transcript.Value) bool {
			d, _ := a.Get("data")
			c.whole("attachment", d)
			return true
		})
	}
}
