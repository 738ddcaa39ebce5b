package benchgen

import (
	"math/bits"
	"math/rand/v2"
)

// fix is one in the fixed-point numbers of the size laws: 20 bits of
// fraction.
const fix = 1 << 20

// The laws of sizes, in powers of two, in fixed point. Payloads have a
// median of 2^9.4 (about 680 bytes) and a shape of 2.16 powers of two, so
// that about a third of the payload bytes are in payloads over
// LargePayload bytes and about 60% in payloads of at least 4096 bytes.
// Session files vary by a factor of about 3 for one standard deviation.
const (
	payloadMu    = 94 * fix / 10
	payloadSigma = 216 * fix / 100
	fileMu       = 20 * fix
	fileSigma    = 16 * fix / 10
)

// logNormal draws an integer from the log-normal law whose logarithm in
// base 2 has mean mu and standard deviation sigma (fixed point), cut to
// [lo, hi] by drawing again. Only integer arithmetic is used, so that every
// platform draws the same numbers: the normal deviate is the sum of twelve
// uniform ones minus six (Irwin-Hall), and 2^x is interpolated linearly
// between consecutive powers of two.
func logNormal(r *rand.Rand, mu, sigma, lo, hi int64) int64 {
	for {
		var sum int64
		for range 4 {
			u := r.Uint64() // three uniform 20-bit numbers
			sum += int64(u>>44) + int64(u>>24&(fix-1)) + int64(u>>4&(fix-1))
		}
		z := sum - 6*fix
		x := mu + sigma*z/fix
		if x < 0 || x >= 40*fix {
			continue
		}
		v := (fix + x%fix) << (x / fix) / fix
		if v >= lo && v <= hi {
			return v
		}
	}
}

// payloadSize draws the size of a payload.
func payloadSize(r *rand.Rand) int {
	return int(logNormal(r, payloadMu, payloadSigma, MinPayload, MaxPayload))
}

// share returns total * part / whole without overflow, for part <= whole.
func share(total, part, whole uint64) uint64 {
	hi, lo := bits.Mul64(total, part)
	q, _ := bits.Div64(hi, lo, whole)
	return q
}
