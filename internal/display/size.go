package display

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize accepts, matched without regard to
// case: decimal ones as disk makers and `ls -h --si` count, binary ones as
// `ls -h` does; a bare letter is binary, as for `ls -h`, dd and sort -S.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

// ParseSize parses a size in bytes written for people: a number, possibly
// with a fraction, and an optional unit: B, KB, MB, GB, TB (powers of 1000),
// KiB, MiB, GiB, TiB or a bare K, M, G, T (powers of 1024), with or without
// a space and in any case. "4096", "4k", "5MB", "512KiB" and "1.5 GB" are
// sizes. Every size flag of the command line takes what it takes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	f, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number of bytes, such as 4096, 4k, 5MB or 512KiB", s)
	}
	unit := strings.TrimSpace(t[i:])
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or K, M, G, T for KiB to TiB)", s, unit)
	}
	n := math.Round(f * mult)
	if n >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}
