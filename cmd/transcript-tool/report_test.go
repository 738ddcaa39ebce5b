package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/migrate"
)

// TestReportFilesCarried: a transcript replaced with bytes an agent wrote
// to it meanwhile carried into it is reported with their count; a failed
// one by its error alone, which says what became of them.
func TestReportFilesCarried(t *testing.T) {
	var stderr bytes.Buffer
	reportFiles(streams{stderr: &stderr}, migrate.Summary{Results: []migrate.FileResult{
		{Path: "/s/a.jsonl", Status: migrate.StatusMigrated, Carried: 352},
		{Path: "/s/b.jsonl", Status: migrate.StatusFailed, Carried: 352, Err: errors.New("/s/b.jsonl: kept aside")},
	}})
	assert.Equal(t, "transcript-tool: warning: /s/a.jsonl: 352 bytes an agent wrote to it as it was replaced carried into it\n"+
		"transcript-tool: error: /s/b.jsonl: kept aside\n", stderr.String())
}
