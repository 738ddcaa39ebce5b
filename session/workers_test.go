package session_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/session"
)

func TestWorkers(t *testing.T) {
	cores := runtime.NumCPU()
	for _, tt := range []struct{ jobs, inputs, want int }{
		{0, 1000, cores},
		{-3, 1000, cores},
		{1, 1000, 1},
		{10_000_000, 3, 3},
		{10_000_000, 1_000_000, 4 * cores},
		{2, 0, 1},
	} {
		assert.Equal(t, tt.want, session.Workers(tt.jobs, tt.inputs), "%d jobs, %d inputs", tt.jobs, tt.inputs)
	}
}
