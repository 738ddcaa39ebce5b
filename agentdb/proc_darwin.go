package agentdb

import "golang.org/x/sys/unix"

// startTime returns the start time OpenClaw records for process pid
// (getFileLockProcessStartTime): on macOS the second it started, as
// `ps -o lstart=` prints it.
func startTime(pid int) (int64, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k.Proc.P_pid != int32(pid) {
		return 0, false
	}
	return k.Proc.P_starttime.Sec, true
}

// zombie reports whether process pid has exited and awaits its parent's
// wait; OpenClaw only tells on Linux.
func zombie(int) bool { return false }
