//go:build !linux && !darwin

package agentdb

// startTime returns false: OpenClaw's start times of processes on this
// system are not read here, and a live process keeps its leases.
func startTime(int) (int64, bool) { return 0, false }

// zombie returns false: only Linux's zombies are told apart.
func zombie(int) bool { return false }
