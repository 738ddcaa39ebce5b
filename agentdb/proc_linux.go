package agentdb

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// startTime returns the start time OpenClaw records for process pid
// (getFileLockProcessStartTime): on Linux the starttime field of
// /proc/<pid>/stat, in clock ticks since boot.
func startTime(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, false
	}
	t, err := strconv.ParseInt(f[19], 10, 64)
	return t, err == nil && t >= 0
}

var (
	zombieState  = regexp.MustCompile(`(?m)^State:\s+Z`)
	singleThread = regexp.MustCompile(`(?m)^Threads:[ \t]+1[ \t]*$`)
)

// zombie reports whether process pid has exited and awaits its parent's
// wait, as OpenClaw tells (isZombieProcess).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	return err == nil && zombieState.Match(b) && singleThread.Match(b)
}
