package format

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestContentSite: a tool result's content is what the model saw; a copy
// beside it (pi's details, Claude Code's toolUseResult) is not.
func TestContentSite(t *testing.T) {
	for site, want := range map[string]bool{
		"/message/content":                        true,
		"/message/content/0/content":              true,
		"/data/message/message/content/2/content": true,
		"/payload/output":                         true,
		"/output":                                 true,
		"/content":                                true,
		"/messages/3/content":                     true,
		"/message/details/aggregated":             false,
		"/message/details/truncation/content":     false,
		"/toolUseResult/content":                  false,
		"/toolUseResult/file/content":             false,
		"/payload/stdout":                         false,
		"/message/content/1/data":                 false,
		"":                                        false,
		"not a pointer":                           false,
	} {
		assert.Equal(t, want, ContentSite(site), "%q", site)
	}
}
