package s3

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestModTime: the writer's time refines the header's second, is clamped
// to it, and never moves a file's time back past the second it is in.
func TestModTime(t *testing.T) {
	header := time.Date(2026, 11, 26, 2, 52, 32, 0, time.UTC)
	at := func(ns int) string { return header.Add(time.Duration(ns)).Format(time.RFC3339Nano) }
	assert.Equal(t, header.Add(989559921), modTime(header, at(989559921)), "within the second")
	assert.Equal(t, header, modTime(header, ""), "no writer's time")
	assert.Equal(t, header, modTime(header, "yesterday"), "not a time")
	assert.Equal(t, header, modTime(header, at(-5e8)), "before the header")
	late := modTime(header, at(1e9+1e7)) // touched past the second, the header kept
	assert.Equal(t, header.Add(time.Second-time.Nanosecond), late)
	assert.True(t, late.After(modTime(header, at(989559921))), "a later touch never reads earlier")
}
