package migrate

import (
	"os"
	"time"

	"github.com/transcript-tool/transcript-tool/session"
)

// LargestFirst exposes the order in which workers take the inputs.
var LargestFirst = largestFirst

// NoLeases makes the rewrites in place go without leases, as where none
// is to be had, until restore is called.
func NoLeases() (restore func()) {
	takeLease = func(*os.File) (*session.Lease, error) { return nil, nil }
	return func() { takeLease = session.TakeLease }
}

// SettleQuiet sets how long a replaced file without a lease must stay
// quiet, until restore is called.
func SettleQuiet(d time.Duration) (restore func()) {
	old := settleQuiet
	settleQuiet = d
	return func() { settleQuiet = old }
}
