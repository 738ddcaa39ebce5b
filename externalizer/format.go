package externalizer

import (
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/summary"
)

// The names of package format that the externalizer's code uses, so that
// it reads as it did when the formats were declared here.
type (
	// Format is format.Format: where one agent keeps payloads and calls.
	Format = format.Format
	// Site is format.Site: one payload inside an entry.
	Site = format.Site
	// Pointer is format.Pointer: a JSON pointer from an entry's root.
	Pointer = format.Pointer
	// Call is format.Call: one tool call of an entry.
	Call = format.Call
)

// siteContext returns what the summary of site s is told of the call it
// answers.
func siteContext(s *Site) summary.Context {
	return summary.Context{Tool: s.Tool, Input: s.Input, Exit: s.Exit, Failed: s.Failed,
		Diff: len(s.Path) > 0 && s.Path[len(s.Path)-1] == "diff"}
}
