package agentdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/transcript-tool/transcript-tool/internal/canon"
)

// HeldError is the error of a database that an OpenClaw process holds.
// It unwraps to ErrInUse.
type HeldError struct {
	// Database is the agent database.
	Database string
	// Holder says what holds it: the lock file the process keeps locked,
	// or the lease row it keeps in the state database.
	Holder string
	// PID is the holding process, 0 when it cannot be told, and Role what
	// OpenClaw says the process does (gateway, agent-embedded,
	// sqlite-maintenance, ...), when it says.
	PID  int64
	Role string
}

func (e *HeldError) Error() string {
	who := "an OpenClaw process"
	if e.PID > 0 {
		who += " (pid " + strconv.FormatInt(e.PID, 10)
		if e.Role != "" {
			who += ", " + e.Role
		}
		who += ")"
	}
	return fmt.Sprintf("%s: %s holds the database: %s; stop it and try again", e.Database, who, e.Holder)
}

// Unwrap returns ErrInUse.
func (e *HeldError) Unwrap() error { return ErrInUse }

// lockRuntimeDir is the folder below which OpenClaw keeps its lifecycle
// coordinators: /tmp on every system but Windows, whatever $TMPDIR says.
// Tests point it elsewhere.
var lockRuntimeDir = "/tmp"

// FenceWait is how long Replace waits for another process's maintenance
// lease, OpenClaw's doctor or another transcript-tool, before it gives
// up with ErrInUse: the wait OpenClaw's own maintenance allows.
var FenceWait = 5 * time.Second

// fenceLease is how long the maintenance lease Replace takes lasts before
// it is renewed; a lease whose process died frees the database after it
// at the latest. OpenClaw's doctor takes its lease for as long.
const fenceLease = 60 * time.Second

// maintenanceScope and maintenanceKey name OpenClaw's maintenance lease
// in state_leases: while it is live, no OpenClaw process opens an agent
// database (AGENT_DATABASE_MAINTENANCE_LEASE).
const (
	maintenanceScope = "core:agent-database-maintenance"
	maintenanceKey   = "global"
)

// stateDB returns the path of the state folder's shared database, which
// holds the leases.
func (d *Database) stateDB() string { return filepath.Join(d.StateDir, "state", "openclaw.sqlite") }

// hasStateDB reports whether d's state folder is known and has its shared
// database, which OpenClaw makes the first time it runs there.
func (d *Database) hasStateDB() bool {
	if d.StateDir == "" {
		return false
	}
	fi, err := os.Stat(d.stateDB())
	return err == nil && fi.Mode().IsRegular()
}

// CheckOwner returns a *HeldError (ErrInUse) when an OpenClaw process
// holds the database, by OpenClaw's own rules, and nil otherwise. It
// changes nothing, so that a command can refuse a database before it does
// any work for it; Replace checks again, under the maintenance lease.
func (d *Database) CheckOwner(ctx context.Context) error {
	if err := d.probe(); err != nil {
		return err
	}
	if !d.hasStateDB() {
		return nil
	}
	fencesMu.Lock()
	var ours string
	if f := fences[d.stateDB()]; f != nil {
		ours = f.owner
	}
	fencesMu.Unlock()
	err := readTx(ctx, d.stateDB(), func(tx *sql.Tx) error {
		_, err := d.leaseHolder(ctx, tx, ours)
		return err
	})
	if err != nil && !errors.Is(err, ErrInUse) {
		err = fmt.Errorf("%s: %w", d.stateDB(), err)
	}
	return err
}

// probeMu makes this process probe one coordinator at a time: probing
// opens coordinator files outside SQLite, and closing such a file would
// drop the locks of any other connection of this process to it.
var probeMu sync.Mutex

// probe returns a *HeldError when an OpenClaw process holds one of the
// coordinators it keeps locked while it uses the database (see
// coordinators).
func (d *Database) probe() error {
	probeMu.Lock()
	defer probeMu.Unlock()
	files, err := d.coordinators()
	if err != nil {
		return err
	}
	for _, f := range files {
		held, err := heldCoordinator(f)
		if err != nil {
			return fmt.Errorf("%s: probe OpenClaw's lock %s: %w", d.Path, f, err)
		}
		if held {
			h := &HeldError{Database: d.Path, Holder: "lock " + f, PID: lockHolder(f)}
			// A gateway lock keeps its owner's JSON beside its coordinator.
			if p, ok := readLockPayload(strings.TrimSuffix(f, ".sqlite")); ok && (h.PID == 0 || h.PID == p.PID) {
				h.PID, h.Role = p.PID, p.Role
			}
			return h
		}
	}
	return nil
}

// coordinators returns the files OpenClaw keeps locked while a process of
// its uses the database, those that exist:
//
//   - the gateway and device locks in <state>/tmp/openclaw-<uid>, which
//     every Gateway, `openclaw agent --local` and repairing doctor takes;
//   - its lifecycle coordinators, <family>.<h>.lock.sqlite in
//     /tmp/openclaw-state-locks-<uid>, where <h> is the first 8 hex digits
//     of the SHA-256 of the canonical path of the state folder's shared
//     database or of the agent database (gateway-lifecycle,
//     state-lifecycle and state-handles are the families known);
//   - the agent database's own memory index locks beside it.
func (d *Database) coordinators() ([]string, error) {
	uid := strconv.Itoa(os.Getuid())
	paths := []string{d.Path}
	if d.StateDir != "" {
		p, err := canon.Path(d.stateDB())
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	var suffixes []string
	for _, p := range paths {
		suffixes = append(suffixes, "."+pathHash(p)+".lock.sqlite")
	}
	// The gateway locks come first: a process holds them with the
	// others, and they say what it is (see readLockPayload).
	var files []string
	if d.StateDir != "" {
		gw, err := lockFiles(filepath.Join(d.StateDir, "tmp", "openclaw-"+uid), ".lock.sqlite")
		if err != nil {
			return nil, err
		}
		files = gw
	}
	lifecycle, err := lockFiles(filepath.Join(lockRuntimeDir, "openclaw-state-locks-"+uid), suffixes...)
	if err != nil {
		return nil, err
	}
	files = append(files, lifecycle...)
	for _, s := range []string{".generation-lock.sqlite", ".generation-writer.sqlite", ".reindex-lock.sqlite"} {
		if fi, err := os.Lstat(d.Path + s); err == nil && fi.Mode().IsRegular() {
			files = append(files, d.Path+s)
		}
	}
	return files, nil
}

// pathHash returns the first 8 hex digits of the SHA-256 of path, by
// which OpenClaw names the coordinators of the database at path.
func pathHash(path string) string {
	h := sha256.Sum256([]byte(path))
	return hex.EncodeToString(h[:4])
}

// lockFiles returns the regular files of dir whose names end with one of
// suffixes, sorted; none when dir does not exist.
func lockFiles(dir string, suffixes ...string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		for _, s := range suffixes {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), s) {
				out = append(out, filepath.Join(dir, e.Name()))
				break
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// heldCoordinator reports whether another process holds the coordinator
// file f, probing it as OpenClaw acquires one: the journal kept in memory
// and BEGIN EXCLUSIVE without waiting, then rolled back at once. A
// coordinator is an empty database that holds nothing; this is never
// done to a database that holds data.
func heldCoordinator(f string) (bool, error) {
	db, err := sql.Open("sqlite", dsn(f, url.Values{"mode": {"rw"}, "_pragma": {"busy_timeout(0)", "journal_mode(MEMORY)"}}))
	if err != nil {
		return false, err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err == nil {
		defer conn.Close()
		_, err = conn.ExecContext(ctx, "BEGIN EXCLUSIVE")
		if err == nil {
			_, err = conn.ExecContext(ctx, "ROLLBACK")
		}
	}
	switch {
	case busy(err):
		return true, nil
	case err != nil:
		if _, serr := os.Stat(f); missing(serr) {
			return false, nil // gone since it was listed
		}
		return false, err
	}
	return false, nil
}

// lockHolder returns the process holding a POSIX lock on the file f, as
// the system tells (F_GETLK), or 0. Call it with probeMu held and no
// connection of this process open to f.
func lockHolder(f string) int64 {
	file, err := os.Open(f)
	if err != nil {
		return 0
	}
	defer file.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(file.Fd(), unix.F_GETLK, &lk); err != nil || lk.Type == unix.F_UNLCK {
		return 0
	}
	return int64(lk.Pid)
}

// lockPayload is what OpenClaw writes in a gateway lock file.
type lockPayload struct {
	PID  int64  `json:"pid"`
	Role string `json:"role"`
}

// readLockPayload reads the gateway lock file f, if there is one. A
// Gateway's lock says no role: it is "gateway".
func readLockPayload(f string) (lockPayload, bool) {
	b, err := os.ReadFile(f)
	var p lockPayload
	if err != nil || json.Unmarshal(b, &p) != nil || p.PID <= 0 {
		return lockPayload{}, false
	}
	if p.Role == "" {
		p.Role = "gateway"
	}
	return p, true
}

// leaseHolder returns, as a *HeldError, what in the state database q
// holds the database: OpenClaw's maintenance lease, live and not ours,
// or an agent database lease on the file whose process still runs. It
// also returns the maintenance lease's owner when its process is gone,
// so that a writer may take the lease over, as OpenClaw does.
func (d *Database) leaseHolder(ctx context.Context, q querier, ours string) (deadOwner string, err error) {
	if ok, err := tableExists(ctx, q, "state_leases"); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%w: no state_leases table in the state database", ErrUnknownSchema)
		}
		return "", err
	}
	var (
		owner   string
		payload sql.NullString
	)
	err = q.QueryRowContext(ctx, `SELECT owner, payload_json FROM state_leases
		WHERE scope = ? AND lease_key = ? AND expires_at > ?`,
		maintenanceScope, maintenanceKey, time.Now().UnixMilli()).Scan(&owner, &payload)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return "", err
	case owner != ours:
		p := leaseOwnerOf(payload.String)
		if p.gone() {
			deadOwner = owner
			break
		}
		return "", &HeldError{Database: d.Path, Holder: "OpenClaw's maintenance lease " + strconv.Quote(owner) + " in " + d.stateDB(), PID: p.PID}
	}
	if ok, err := tableExists(ctx, q, "agent_database_leases"); err != nil || !ok {
		return deadOwner, err // OpenClaw makes the table when it first opens an agent database
	}
	rows, err := q.QueryContext(ctx, "SELECT lease_id, agent_id, path, owner_pid, owner_start_time FROM agent_database_leases ORDER BY opened_at")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, agent, path string
			pid             int64
			start           sql.NullInt64
		)
		if err := rows.Scan(&id, &agent, &path, &pid, &start); err != nil {
			return "", err
		}
		var startp *int64
		if start.Valid {
			startp = &start.Int64
		}
		if d.mayShare(path) && !stale(pid, startp) {
			return "", &HeldError{Database: d.Path, Holder: fmt.Sprintf("agent %s's database lease %s in %s", agent, id, d.stateDB()), PID: pid}
		}
	}
	return deadOwner, rows.Err()
}

// mayShare reports whether an agent database lease on path may be one on
// d's file, by OpenClaw's rule (mayShareAgentDatabaseFile): the same
// path, the same file, or a file that cannot be told apart because one of
// them does not exist.
func (d *Database) mayShare(path string) bool {
	if path == d.Path {
		return true
	}
	a, errA := os.Stat(path)
	b, errB := os.Stat(d.Path)
	if errA != nil || errB != nil {
		return true
	}
	return os.SameFile(a, b)
}

// leaseOwner is the process a state lease names in its payload, as
// OpenClaw writes it: {"owner":{"pid","host","startedAt"}}.
type leaseOwner struct {
	PID       int64  `json:"pid"`
	Host      string `json:"host"`
	StartedAt *int64 `json:"startedAt"`
}

// leaseOwnerOf returns the owner of a lease's payload, the zero
// leaseOwner when it names none.
func leaseOwnerOf(payload string) leaseOwner {
	var p struct {
		Owner leaseOwner `json:"owner"`
	}
	_ = json.Unmarshal([]byte(payload), &p)
	return p.Owner
}

// gone reports whether the lease owner's process is provably gone, by
// OpenClaw's rule (readStateLeaseProcessOwnerStatus): on this host, and
// dead or started at another time than recorded.
func (o leaseOwner) gone() bool {
	host, err := os.Hostname()
	return err == nil && o.Host == host && stale(o.PID, o.StartedAt)
}

// fence is OpenClaw's maintenance lease held by this process for the
// databases of one state folder.
type fence struct {
	db     *sql.DB // the state database, one connection
	owner  string  // the lease's owner column
	refs   int     // Replace calls holding it
	stop   chan struct{}
	done   chan struct{}
	lostMu sync.Mutex
	lost   error // why the lease is no longer ours
}

var (
	fencesMu sync.Mutex
	fences   = map[string]*fence{} // by state database path
)

// hold takes OpenClaw's maintenance lease for d's state folder, or joins
// this process's hold of it, and returns its release. While the lease is
// live no OpenClaw process opens an agent database of the folder, and a
// running one keeps its lease, which leaseHolder then finds. It waits up
// to FenceWait for another process's maintenance lease. The lease is
// renewed while held; release deletes it once no Replace of this
// process holds it.
func (d *Database) hold(ctx context.Context) (*fence, func(), error) {
	if !d.hasStateDB() {
		return nil, func() {}, nil
	}
	key := d.stateDB()
	fencesMu.Lock()
	defer fencesMu.Unlock()
	f := fences[key]
	if f == nil {
		var err error
		if f, err = d.takeFence(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", key, err)
		}
		fences[key] = f
	} else if err := d.checkLeases(ctx, f); err != nil {
		return nil, nil, err
	}
	f.refs++
	return f, func() {
		fencesMu.Lock()
		defer fencesMu.Unlock()
		if f.refs--; f.refs == 0 {
			delete(fences, key)
			f.release()
		}
	}, nil
}

// checkLeases returns a *HeldError when an agent database lease on d is
// live, for a database of a state folder whose fence this process holds
// already.
func (d *Database) checkLeases(ctx context.Context, f *fence) error {
	_, err := d.leaseHolder(ctx, f.db, f.owner)
	return err
}

// takeFence inserts this process's maintenance lease into the state
// database, in one transaction that first finds no live holder, and
// starts renewing it.
func (d *Database) takeFence(ctx context.Context) (*fence, error) {
	db, err := openWrite(d.stateDB(), 0)
	if err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		db.Close()
		return nil, err
	}
	f := &fence{db: db, owner: "transcript-tool:" + hex.EncodeToString(b[:]), stop: make(chan struct{}), done: make(chan struct{})}
	deadline := time.Now().Add(FenceWait)
	for {
		err = d.insertFence(ctx, f)
		if err == nil {
			go f.renew()
			return f, nil
		}
		if !(busy(err) || errors.Is(err, ErrInUse)) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// insertFence inserts f's lease unless something holds the database.
func (d *Database) insertFence(ctx context.Context, f *fence) error {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	deadOwner, err := d.leaseHolder(ctx, tx, f.owner)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	if _, err := tx.ExecContext(ctx, `DELETE FROM state_leases WHERE scope = ? AND lease_key = ? AND (expires_at <= ? OR owner = ?)`,
		maintenanceScope, maintenanceKey, now, deadOwner); err != nil {
		return err
	}
	host, _ := os.Hostname()
	owner := leaseOwner{PID: int64(os.Getpid()), Host: host}
	if t, ok := startTime(os.Getpid()); ok {
		owner.StartedAt = &t
	}
	payload, err := json.Marshal(map[string]any{"owner": owner, "tool": "transcript-tool"})
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO state_leases
		(scope, lease_key, owner, expires_at, heartbeat_at, payload_json, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		maintenanceScope, maintenanceKey, f.owner, now+fenceLease.Milliseconds(), now, string(payload), now, now); err != nil {
		return err
	}
	return tx.Commit()
}

// renew extends the lease every third of its life until release.
func (f *fence) renew() {
	defer close(f.done)
	t := time.NewTicker(fenceLease / 3)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			now := time.Now().UnixMilli()
			res, err := f.db.Exec(`UPDATE state_leases SET expires_at = ?, heartbeat_at = ?, updated_at = ?
				WHERE scope = ? AND lease_key = ? AND owner = ? AND expires_at > ?`,
				now+fenceLease.Milliseconds(), now, now, maintenanceScope, maintenanceKey, f.owner, now)
			if err == nil {
				if n, _ := res.RowsAffected(); n != 1 {
					err = errors.New("the lease was taken over")
				}
			}
			if err != nil {
				f.lostMu.Lock()
				f.lost = errors.Join(f.lost, err)
				f.lostMu.Unlock()
			}
		}
	}
}

// check fails unless f's lease is still this process's and live: a
// writer checks it last, before it commits.
func (f *fence) check(ctx context.Context) error {
	if f == nil {
		return nil
	}
	var n int
	err := f.db.QueryRowContext(ctx, `SELECT count(*) FROM state_leases
		WHERE scope = ? AND lease_key = ? AND owner = ? AND expires_at > ?`,
		maintenanceScope, maintenanceKey, f.owner, time.Now().UnixMilli()).Scan(&n)
	if err == nil && n != 1 {
		f.lostMu.Lock()
		err = errors.Join(errors.New("OpenClaw's maintenance lease is no longer this process's"), f.lost)
		f.lostMu.Unlock()
	}
	return err
}

// release stops renewing f's lease and deletes it.
func (f *fence) release() {
	close(f.stop)
	<-f.done
	_, _ = f.db.Exec(`DELETE FROM state_leases WHERE scope = ? AND lease_key = ? AND owner = ?`,
		maintenanceScope, maintenanceKey, f.owner)
	f.db.Close()
}

// dropIntegrityProof deletes OpenClaw's record that the database passed
// its integrity check and was closed cleanly, before the database is
// changed, as OpenClaw's own maintenance writers do
// (invalidateOpenClawAgentDatabaseIntegrityBeforeMutation): the next
// OpenClaw to open it then checks it in full instead of trusting the
// record.
func (d *Database) dropIntegrityProof(ctx context.Context) error {
	if d.StateDir == "" {
		return nil
	}
	q := filepath.Join(d.StateDir, "state", "openclaw-quarantine.sqlite")
	if _, err := os.Stat(q); missing(err) {
		return nil
	}
	db, err := openWrite(q, 5000)
	if err != nil {
		return err
	}
	defer db.Close()
	if ok, err := tableExists(ctx, db, "agent_integrity_verifications"); err != nil || !ok {
		return err
	}
	fi, err := os.Stat(d.Path)
	if err != nil {
		return err
	}
	dev, ino := fileID(fi)
	_, err = db.ExecContext(ctx, `DELETE FROM agent_integrity_verifications WHERE path = ? OR (dev = ? AND ino = ?)`,
		d.Path, strconv.FormatUint(dev, 10), strconv.FormatUint(ino, 10))
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}
