package agentdb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refused checks that Replace of a migrated session A is refused because
// a process holds d, and that nothing changed; it returns the refusal.
func refused(t *testing.T, d *Database) *HeldError {
	t.Helper()
	before := readState(t, d, sessionA)
	snap, _, _ := fetchFile(t, d, sessionA)
	_, err := d.Replace(context.Background(), snap, writeLines(t, migrated(fixtureLines()[sessionA])))
	h := errHeld(t, err)
	_, _, got := fetchFile(t, d, sessionA)
	assert.Equal(t, fixtureLines()[sessionA], got)
	assert.Equal(t, before, readState(t, d, sessionA))
	return h
}

// replaced checks that Replace of a migrated session A succeeds.
func replaced(t *testing.T, d *Database) {
	t.Helper()
	snap, _, _ := fetchFile(t, d, sessionA)
	n, err := d.Replace(context.Background(), snap, writeLines(t, migrated(fixtureLines()[sessionA])))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func TestOwnerCoordinators(t *testing.T) {
	d := fixtureDB(t)
	stateDB, err := filepath.EvalSymlinks(d.stateDB())
	require.NoError(t, err)
	gateway := filepath.Join(d.StateDir, "tmp", fmt.Sprintf("openclaw-%d", os.Getuid()), "gateway.state.lock")
	for _, file := range []string{
		coordinatorPath(t, "gateway-lifecycle", stateDB),
		coordinatorPath(t, "state-handles", d.Path),
		d.Path + ".reindex-lock.sqlite",
		gateway + ".sqlite",
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o700))
			require.NoError(t, os.WriteFile(file, nil, 0o644))
			holder := startChild(t, "ready", "hold", file)
			if file == gateway+".sqlite" {
				payload := fmt.Sprintf(`{"pid":%d,"role":"agent-embedded","startTime":1}`, holder.Process.Pid)
				require.NoError(t, os.WriteFile(gateway, []byte(payload), 0o600))
			}
			h := errHeld(t, d.CheckOwner(context.Background()))
			assert.Equal(t, "lock "+file, h.Holder)
			assert.EqualValues(t, holder.Process.Pid, h.PID, "the process is named")
			if file == gateway+".sqlite" {
				assert.Equal(t, "agent-embedded", h.Role)
			}
			h = refused(t, d)
			assert.EqualValues(t, holder.Process.Pid, h.PID)

			// The lock dies with its process, and the file stays.
			require.NoError(t, holder.Process.Kill())
			_ = holder.Wait()
			require.NoError(t, d.CheckOwner(context.Background()))
		})
	}
	replaced(t, d)
}

// startTimeOf returns the start time of process pid, failing t when it
// cannot be read here.
func startTimeOf(t *testing.T, pid int) int64 {
	t.Helper()
	s, ok := startTime(pid)
	if !ok {
		t.Skip("process start times are not read on this system")
	}
	return s
}

// deadPID returns the pid of a process that has exited and been waited
// for.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestOwnerAgentLeases(t *testing.T) {
	d := fixtureDB(t)
	state := sqlDB(t, d.stateDB())
	me := os.Getpid()
	lease := func(id string, pid int, start any) {
		t.Helper()
		_, err := state.Exec(`INSERT INTO agent_database_leases (lease_id, agent_id, path, owner_pid, owner_start_time, opened_at)
			VALUES (?, 'main', ?, ?, ?, 0)`, id, d.Path, pid, start)
		require.NoError(t, err)
	}
	// Leases whose process is gone, or another process by now, as
	// OpenClaw leaves them after a crash: they hold nothing.
	lease("dead", deadPID(t), nil)
	lease("reused", me, startTimeOf(t, me)+1)
	require.NoError(t, d.CheckOwner(context.Background()))

	lease("live", me, startTimeOf(t, me))
	h := errHeld(t, d.CheckOwner(context.Background()))
	assert.EqualValues(t, me, h.PID)
	assert.Contains(t, h.Holder, "database lease live")
	FenceWait = 200 * time.Millisecond
	t.Cleanup(func() { FenceWait = 5 * time.Second })
	refused(t, d)

	// A lease on another agent's database holds nothing of this one.
	_, err := state.Exec(`UPDATE agent_database_leases SET path = ? WHERE lease_id = 'live'`, d.StateDir)
	require.NoError(t, err)
	replaced(t, d)
}

func TestOwnerMaintenanceLease(t *testing.T) {
	d := fixtureDB(t)
	state := sqlDB(t, d.stateDB())
	host, err := os.Hostname()
	require.NoError(t, err)
	FenceWait = 200 * time.Millisecond
	t.Cleanup(func() { FenceWait = 5 * time.Second })
	setLease := func(expires time.Duration, pid int) {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"owner": leaseOwner{PID: int64(pid), Host: host}})
		now := time.Now().UnixMilli()
		_, err := state.Exec(`INSERT OR REPLACE INTO state_leases VALUES (?, ?, 'doctor', ?, ?, ?, ?, ?)`,
			maintenanceScope, maintenanceKey, now+expires.Milliseconds(), now, string(payload), now, now)
		require.NoError(t, err)
	}

	// OpenClaw's doctor, alive, maintains the databases.
	setLease(time.Minute, os.Getpid())
	h := errHeld(t, d.CheckOwner(context.Background()))
	assert.EqualValues(t, os.Getpid(), h.PID)
	assert.Contains(t, h.Holder, "maintenance lease")
	start := time.Now()
	refused(t, d)
	assert.GreaterOrEqual(t, time.Since(start), FenceWait, "waited for the lease")
	var owner string
	require.NoError(t, state.QueryRow(`SELECT owner FROM state_leases WHERE scope = ?`, maintenanceScope).Scan(&owner))
	assert.Equal(t, "doctor", owner, "another's lease is left alone")

	// A lease past its time, or whose process is gone, is taken over.
	setLease(-time.Second, os.Getpid())
	require.NoError(t, d.CheckOwner(context.Background()))
	setLease(time.Minute, deadPID(t))
	require.NoError(t, d.CheckOwner(context.Background()))
	replaced(t, d)
	assert.Zero(t, readState(t, d, sessionA).maintenanceRows)
}

// TestReplaceKilled kills a process replacing a session at the points
// where a crash leaves the most behind: every row is whole, old or new,
// and the next replace takes over the dead process's maintenance lease.
func TestReplaceKilled(t *testing.T) {
	orig := fixtureLines()[sessionA]
	for _, tc := range []struct {
		point string
		want  []string
	}{
		{"verified", orig},            // rows checked, none changed
		{"updated", orig},             // rows changed, not committed
		{"committed", migrated(orig)}, // committed, lease not released
	} {
		t.Run(tc.point, func(t *testing.T) {
			d := fixtureDB(t)
			file := writeLines(t, migrated(orig))
			c := startChild(t, "paused", "replace", d.Path, sessionA, file, tc.point)
			require.NoError(t, c.Process.Signal(syscall.SIGKILL))
			_ = c.Wait()

			_, _, got := fetchFile(t, d, sessionA)
			assert.Equal(t, tc.want, got)
			checkIntegrity(t, d.Path)
			assert.Equal(t, 1, readState(t, d, sessionA).maintenanceRows, "the dead process's lease is left")

			next := orig
			if tc.want[3] == orig[3] {
				next = migrated(orig)
			}
			snap, _, _ := fetchFile(t, d, sessionA)
			n, err := d.Replace(context.Background(), snap, writeLines(t, next))
			require.NoError(t, err)
			assert.Equal(t, 2, n)
			_, _, got = fetchFile(t, d, sessionA)
			assert.Equal(t, next, got)
			assert.Zero(t, readState(t, d, sessionA).maintenanceRows)
			checkIntegrity(t, d.Path)
		})
	}
}

// TestReplaceConcurrent replaces two sessions of one database at once, as
// migrate --jobs does: the calls share this process's maintenance lease
// and take the database's write lock in turn instead of failing it.
func TestReplaceConcurrent(t *testing.T) {
	d := fixtureDB(t)
	lines := map[string][]string{sessionA: migrated(fixtureLines()[sessionA]), sessionC: imagesMigrated(fixtureLines()[sessionC])}
	errs := make(chan error, len(lines))
	for id, want := range lines {
		snap, _, _ := fetchFile(t, d, id)
		file := writeLines(t, want)
		go func() {
			_, err := d.Replace(context.Background(), snap, file)
			errs <- err
		}()
	}
	for range lines {
		require.NoError(t, <-errs)
	}
	for id, want := range lines {
		_, _, got := fetchFile(t, d, id)
		assert.Equal(t, want, got)
	}
	assert.Zero(t, readState(t, d, sessionA).maintenanceRows)
}
