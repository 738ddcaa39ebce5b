package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/transcript-tool/transcript-tool/agentdb"
	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// Sessions genopenclaw writes: one with large tool results, one small.
const (
	ocLarge = "11111111-1111-4111-8111-111111111111"
	ocSmall = "22222222-2222-4222-8222-222222222222"
)

// cmdGenopenclaw writes an OpenClaw state folder (see openclawgen) whose
// main agent has two sessions: genopenclaw STATE N SIZE writes one with N
// shell outputs of SIZE bytes (ocLarge) and one with a 100-byte output
// (ocSmall), and the JSONL of each, SESSION.jsonl, in the current folder.
func cmdGenopenclaw(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: genopenclaw STATE N SIZE")
	}
	state := ts.MkAbs(args[0])
	sessions := []openclawgen.Session{
		openclawgen.Workload(ocLarge, "agent:main:main", atoi(ts, args[1]), atoi(ts, args[2])),
		openclawgen.Workload(ocSmall, "agent:main:other", 1, 100),
	}
	ts.Check(openclawgen.Write(state, "main", sessions))
	for _, s := range sessions {
		ts.Check(os.WriteFile(ts.MkAbs(s.ID+".jsonl"), []byte(strings.Join(s.Lines, "\n")+"\n"), 0o644))
	}
}

// cmdOcrows prints the event JSON of every row of a session, a line each,
// as read from the database itself: ocrows DB SESSION.
func cmdOcrows(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ocrows DB SESSION")
	}
	d, err := agentdb.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	_, err = d.Fetch(context.Background(), args[1], ts.Stdout())
	ts.Check(err)
}

// cmdOcappend appends an entry to a session, as OpenClaw does when the
// model answers: ocappend DB SESSION.
func cmdOcappend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: ocappend DB SESSION")
	}
	ts.Check(openclawgen.Append(ts.MkAbs(args[0]), args[1],
		`{"type":"custom","customType":"openclaw:bootstrap-context:full","data":{},"id":"appended","parentId":null,"timestamp":"2026-11-26T23:30:00.000Z"}`))
}

// cmdWaitfile waits up to 30 s for a file to exist: waitfile FILE.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear in 30 s", args[0])
}

// ocgateway holds the gateway lock of an OpenClaw state folder as a
// running Gateway does, until it is killed:
// ocgateway STATE READY writes the lock's JSON and holds its coordinator
// (an SQLite file in an exclusive transaction), then makes the file
// READY.
func ocgateway() int {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ocgateway STATE READY")
		return 2
	}
	dir := filepath.Join(os.Args[1], "tmp", "openclaw-"+strconv.Itoa(os.Getuid()))
	lock := filepath.Join(dir, "gateway.state.lock")
	payload, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "role": "gateway", "stateDir": os.Args[1]})
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		err = os.WriteFile(lock, payload, 0o600)
	}
	var db *sql.DB
	if err == nil {
		db, err = sql.Open("sqlite", (&url.URL{Scheme: "file", Path: lock + ".sqlite",
			RawQuery: url.Values{"_pragma": {"busy_timeout(0)", "journal_mode(MEMORY)"}}.Encode()}).String())
	}
	if err == nil {
		db.SetMaxOpenConns(1)
		_, err = db.Exec("BEGIN EXCLUSIVE")
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], nil, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	time.Sleep(time.Hour) // until killed
	return 0
}
