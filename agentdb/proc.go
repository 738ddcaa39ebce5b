package agentdb

import (
	"errors"
	"io/fs"
	"syscall"
)

// stale reports whether a lease or lock recorded for process pid, which
// started at start (when known), no longer has an owner: the process is
// gone, or the pid now names another process, one that started at
// another time. These are OpenClaw's rules (isAgentDatabaseLeaseStale):
// a live process whose start time cannot be read still owns its lease.
func stale(pid int64, start *int64) bool {
	if pid <= 0 || pid != int64(int(pid)) || dead(int(pid)) {
		return true
	}
	now, ok := startTime(int(pid))
	return start != nil && ok && now != *start
}

// dead reports whether no process pid exists, or only its zombie.
func dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	return zombie(pid)
}

// fileID returns the device and inode of the file fi describes, as
// OpenClaw records them.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino)
}
