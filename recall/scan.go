package recall

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Session is what a transcript tells about itself: the facts of the
// narrative and the artifacts its entries reference.
type Session struct {
	// ID is the session id, as session.Open finds it and the registry
	// records it; Scan leaves it empty.
	ID string
	// Format is the format's name.
	Format string
	// Source is the transcript's absolute path, as the registry records
	// it: the records naming it are preferred when an artifact has
	// several. Scan leaves it empty.
	Source string
	// Entries is the number of lines that are JSON objects.
	Entries int
	// First and Last are the earliest and latest entry timestamps, zero
	// when no entry has one.
	First, Last time.Time
	// Tools are the tool calls by tool name, most called first, then by
	// name.
	Tools []ToolCount
	// Calls names the tools of call ids, for artifacts whose registry
	// record names only the call. Tools and Calls leave out the calls an
	// entry relays (format.Call.Relayed).
	Calls format.CallTable
	// LastRequest is the text of the last user request, as the format
	// tells them (format.Request), at most maxRequest bytes of it, not yet
	// cleaned.
	LastRequest string
	// Refs are the distinct artifacts the entries' markers reference, the
	// most recently referenced first; then those only its subagents'
	// transcripts reference (see AddSubagent).
	Refs []Ref
	// Subagents is how many subagent transcripts were added, and
	// SubagentRefs how many of Refs only they reference.
	Subagents, SubagentRefs int
}

// AddSubagent adds the artifacts that the transcript of one of the
// session's subagents references and the session does not, after the
// session's own: a session's artifacts are those of its subagents too, as
// the registry records them under the session's id.
func (s *Session) AddSubagent(sub *Session) {
	s.Subagents++
	have := make(map[store.Digest]bool, len(s.Refs))
	for _, r := range s.Refs {
		have[r.ID] = true
	}
	for _, r := range sub.Refs {
		if !have[r.ID] {
			have[r.ID] = true
			r.Line = 0 // not a line of the session's transcript
			s.Refs = append(s.Refs, r)
			s.SubagentRefs++
		}
	}
}

// ToolCount is the number of calls of one tool.
type ToolCount struct {
	Name  string
	Calls int
}

// Ref is an artifact a session references.
type Ref struct {
	ID store.Digest
	// Line is the line of the last entry that references it.
	Line int
}

// Bounds on what Scan keeps of hostile input.
const (
	maxRequest  = 4 << 10 // bytes of the last user request
	maxToolName = 64      // bytes of a tool name
	maxTools    = 1 << 10 // distinct tool names counted; more count as "other"
)

// Scan reads a transcript of the named format (a name format.Lookup
// knows) and returns its Session. Lines that are not JSON objects are
// skipped, as are entries of shapes the format does not have. Only an
// error reading r is returned.
//
// With open set, a line's marker names artifacts only if the line
// restores through open, or fails to for want of an artifact: an entry
// that ends in a member shaped like a marker but does not restore is
// genuine content, and its look-alike references are not the session's.
func Scan(r io.Reader, name string, open externalizer.Opener) (*Session, error) {
	tr := transcript.NewReader(r)
	defer tr.Release()
	return ScanLines(tr, name, open, nil)
}

// ScanLines is Scan for the lines of tr. A line tr returns as Long (see
// transcript.Reader.Limit) is read from the skeleton long gives, so that
// memory does not grow with the line: its long strings count by their
// first bytes, and its marker's references are taken as they are, not
// checked by a restore, which reads the line whole. A line long cannot
// give is skipped.
func ScanLines(tr *transcript.Reader, name string, open externalizer.Opener, long func(transcript.Line) (*transcript.Skeleton, error)) (*Session, error) {
	s := &Session{Format: name}
	f, _ := format.Lookup(name)
	sc := scanner{s: s, tools: map[string]int{}, refs: map[store.Digest]*refState{}, open: open, f: f}
	for {
		l, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		check := sc.open
		if l.Long {
			sk, err := long(l)
			if err != nil || sk.Invalid {
				continue
			}
			l.Text, check = sk.Text, nil
		}
		root, err := transcript.Parse(l.Text, transcript.JSONStart(l))
		if err != nil || root.Kind() != transcript.Object {
			continue
		}
		sc.entry(root)
		sc.markerRefs(l, check)
	}
	sc.finish()
	return s, nil
}

type refState struct {
	ref Ref
	seq int // order of the last reference in the file
}

type scanner struct {
	open  externalizer.Opener
	s     *Session
	tools map[string]int
	refs  map[store.Digest]*refState
	seq   int
	f     format.Format // nil for a format of no known name
	// fallback is the last request that counts only when the file has no
	// other (format.Request.Fallback).
	fallback string
}

func (sc *scanner) entry(root transcript.Value) {
	s := sc.s
	s.Entries++
	if ts, ok := root.Get("timestamp"); ok && ts.Kind() == transcript.String {
		if t, err := time.Parse(time.RFC3339Nano, ts.Text()); err == nil {
			t = t.UTC()
			if s.First.IsZero() || t.Before(s.First) {
				s.First = t
			}
			if s.Last.IsZero() || t.After(s.Last) {
				s.Last = t
			}
		}
	}
	if sc.f != nil {
		sc.f.Calls(root, sc.call)
		sc.f.Requests(root, sc.request)
	}
}

// call counts a call the session makes, and remembers its id.
func (sc *scanner) call(c format.Call) {
	if c.Relayed {
		return
	}
	name := c.Name
	if len(name) > maxToolName {
		name = name[:transcript.RuneCut([]byte(name), maxToolName)]
	}
	if name == "" {
		name = "unnamed"
	}
	sc.s.Calls.Add(c.ID, name, "")
	if _, ok := sc.tools[name]; !ok && len(sc.tools) >= maxTools {
		name = "other"
	}
	sc.tools[name]++
}

// request remembers a user's request, the last one the format believes.
func (sc *scanner) request(r format.Request) {
	if r.Fallback {
		sc.fallback = clip(r.Text)
	} else {
		sc.s.LastRequest = clip(r.Text)
	}
}

// clip cuts text to maxRequest bytes, at a character boundary, and a
// string cut in a long line's skeleton to the start it keeps (its padding
// dots go too).
func clip(text string) string {
	if i := strings.Index(text, transcript.StubMark); i >= 0 {
		text = strings.TrimRight(text[:i], ".") + "…"
	}
	return text[:transcript.RuneCut([]byte(text), maxRequest)]
}

// markerRefs notes the artifacts that the marker of a migrated line
// names. A line whose marker cannot be read references nothing: recall
// shows what can be shown, verify judges markers.
func (sc *scanner) markerRefs(l transcript.Line, open externalizer.Opener) {
	ids, err := externalizer.References(l.Text, transcript.JSONStart(l))
	if err != nil || len(ids) == 0 {
		return
	}
	if open != nil {
		if _, err := externalizer.RestoreTo(io.Discard, l.Text, transcript.JSONStart(l), open); errors.Is(err, externalizer.ErrBadMarker) {
			return
		}
	}
	for _, d := range ids {
		sc.seq++
		st := sc.refs[d]
		if st == nil {
			st = &refState{}
			sc.refs[d] = st
		}
		st.ref = Ref{ID: d, Line: l.Num}
		st.seq = sc.seq
	}
}

// finish sorts what the scan collected into the Session.
func (sc *scanner) finish() {
	s := sc.s
	if s.LastRequest == "" {
		s.LastRequest = sc.fallback
	}
	for name, n := range sc.tools {
		s.Tools = append(s.Tools, ToolCount{Name: name, Calls: n})
	}
	slices.SortFunc(s.Tools, func(a, b ToolCount) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Name, b.Name))
	})
	states := make([]*refState, 0, len(sc.refs))
	for _, st := range sc.refs {
		states = append(states, st)
	}
	slices.SortFunc(states, func(a, b *refState) int { return cmp.Compare(b.seq, a.seq) })
	for _, st := range states {
		s.Refs = append(s.Refs, st.ref)
	}
}
