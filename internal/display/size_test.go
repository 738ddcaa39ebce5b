package display_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/transcript-tool/transcript-tool/internal/display"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"4096", 4096},
		{"4096B", 4096},
		{"5MB", 5_000_000},
		{"5mb", 5_000_000},
		{"5 MB", 5_000_000},
		{"1kB", 1000},
		{"512KiB", 512 << 10},
		{"512kib", 512 << 10},
		{"1.5GB", 1_500_000_000},
		{"1.5 MiB", 3 << 19},
		{".5KB", 500},
		{"2TiB", 2 << 40},
		{" 1MB ", 1_000_000},
		{"4k", 4096},
		{"4K", 4096},
		{"5M", 5 << 20},
		{"1g", 1 << 30},
	} {
		got, err := display.ParseSize(tc.in)
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
	for _, in := range []string{"", "MB", "k", "5kk", "5 megabytes", "-1", "1e3", "1.2.3KB", "0x10", "9999999TB"} {
		_, err := display.ParseSize(in)
		assert.Error(t, err, in)
	}
}
