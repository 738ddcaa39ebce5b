package recall

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
)

// Options are the budgets of a section. Lengths are Unicode code points;
// a negative budget counts as 0.
type Options struct {
	// MaxItems is the most artifacts listed.
	MaxItems int
	// MaxChars bounds the whole rendered text, newlines included.
	MaxChars int
	// NarrativeMaxChars bounds the narrative.
	NarrativeMaxChars int
}

// DefaultOptions are the budgets of the seed design.
var DefaultOptions = Options{MaxItems: 8, MaxChars: 2000, NarrativeMaxChars: 600}

// Item is one artifact listed in a section.
type Item struct {
	// ID is the artifact's full SHA-256; the text shows its first
	// display.IDLen characters.
	ID    string `json:"id"`
	Size  int64  `json:"size"`
	Media string `json:"media"`
	Tool  string `json:"tool,omitempty"`
	// Summary is the description shown, shortened when the budget
	// required it.
	Summary string `json:"summary"`
	// Path is the artifact's file, as the store's directory was given.
	Path string `json:"path"`
	// Line is the transcript line that last references the artifact.
	Line int `json:"line"`
}

// Section is a rendered recall section and its parts.
type Section struct {
	// Header is the title and the line that says how to read an
	// artifact, joined by a newline (possibly cut to the budget).
	Header string `json:"header"`
	// Narrative is the narrative as shown, "" when it did not fit.
	Narrative string `json:"narrative"`
	// Items are the artifacts listed, most recent first.
	Items []Item `json:"items"`
	// Omitted is the number of the session's artifacts not listed.
	Omitted int `json:"omitted"`
	// Text is the markdown, each line ending in a newline; at most
	// Options.MaxChars code points.
	Text string `json:"text"`
	// Length is the length of Text in code points.
	Length int `json:"length"`
}

// Fixed text of a section.
const (
	title        = "## Artifact recall"
	itemsHeading = "Most recent artifacts, newest first:"
	noArtifacts  = "No artifacts are referenced in this session."
	// minSummary is the shortest summary an item is shortened to so that
	// it still fits; below that it is left out.
	minSummary = 16
)

// Build makes the recall section of session s, whose artifacts are in
// store. Registry lines that do not parse are passed to bad (which may be
// nil) and skipped. The error is that of reading the registry; a missing
// or corrupt artifact is not an error but an item that says so.
func Build(ctx context.Context, s *Session, store *registry.Store, opts Options, bad func(*registry.BadLineError)) (Section, error) {
	k, err := readKnown(ctx, s, store, bad)
	if err != nil {
		return Section{}, err
	}
	sizes := make([]int64, len(s.Refs))
	var total int64
	for i, r := range s.Refs {
		sizes[i] = artifactSize(store, r.ID, k.recs[r.ID])
		total += sizes[i]
	}
	header := []string{title, "Large tool outputs of this session are stored as artifacts. Print one with `transcript-tool cat --store " +
		shellQuote(store.Dir()) + " ID`, or part of it with --offset N --limit N (characters of text, bytes otherwise)."}
	narr := Narrative(s, total, opts.NarrativeMaxChars)
	item := func(i int) Item {
		r := s.Refs[i]
		summary, media := describe(store, r.ID, k.recs[r.ID], k.tool(r.ID), s.Source)
		return Item{
			ID: r.ID.String(), Size: sizes[i], Media: display.Line(media, 100), Tool: display.Line(k.tool(r.ID), 40),
			Summary: summary, Path: display.Line(store.Path(r.ID), 4096), Line: r.Line,
		}
	}
	return Compose(header, narr, len(s.Refs), item, opts), nil
}

// known is what the registry says about a session's artifacts.
type known struct {
	s *Session
	// recs holds each artifact's record: the first that names s.Source,
	// else the first.
	recs map[store.Digest]registry.Record
	// entryTools holds the tool of each entry of s.Source that has a
	// record naming one, for the artifacts of that entry whose own record
	// does not (Claude Code's toolUseResult beside a tool_result).
	entryTools map[string]string
}

func readKnown(ctx context.Context, s *Session, st *registry.Store, bad func(*registry.BadLineError)) (*known, error) {
	want := make(map[string]store.Digest, len(s.Refs))
	for _, r := range s.Refs {
		want[r.ID.String()] = r.ID
	}
	k := &known{s: s, recs: map[store.Digest]registry.Record{}, entryTools: map[string]string{}}
	ours := map[store.Digest]bool{}
	mine := func(rec registry.Record) bool { return s.Source != "" && rec.Source == s.Source }
	// The records of s.Source, for entryTools, and of its artifacts.
	keys := make([]registry.Key, 0, len(want)+1)
	if s.Source != "" {
		keys = append(keys, registry.Key{Field: registry.FieldSource, Value: s.Source})
	}
	for h := range want {
		keys = append(keys, registry.Key{Field: registry.FieldHash, Value: h})
	}
	err := st.RecordsMatching(ctx, keys, func(rec registry.Record, _ registry.Pos) error {
		if mine(rec) && rec.Entry != "" {
			if t := k.ownTool(rec); t != "" && k.entryTools[rec.Entry] == "" {
				k.entryTools[rec.Entry] = t
			}
		}
		d, ok := want[rec.Hash]
		if !ok || ours[d] {
			return nil
		}
		if _, seen := k.recs[d]; !seen || mine(rec) {
			k.recs[d] = rec
			ours[d] = mine(rec)
		}
		return nil
	}, bad)
	return k, err
}

// ownTool is the tool a record names, itself or by its call.
func (k *known) ownTool(rec registry.Record) string {
	if rec.Tool != "" {
		return rec.Tool
	}
	c, _ := k.s.Calls.Get(rec.ToolCallID)
	return c.Name
}

// tool is the tool that produced artifact d, or "".
func (k *known) tool(d store.Digest) string {
	rec := k.recs[d]
	if t := k.ownTool(rec); t != "" {
		return t
	}
	if rec.Source == k.s.Source && rec.Entry != "" {
		return k.entryTools[rec.Entry]
	}
	return ""
}

// artifactSize returns the size of artifact d: its file's, or the
// registry's when the store lacks it, or 0. It never follows a link out of
// the store (Store.Size).
func artifactSize(store *registry.Store, d store.Digest, rec registry.Record) int64 {
	if n, err := store.Size(context.Background(), d); err == nil {
		return n
	}
	return max(rec.Size, 0)
}

// describe returns the description of artifact d, read from the store and
// checked against its hash, and the media type it went by (rec's, or the
// one guessed from the bytes for ""); or a summary saying why it could not
// be read. The summary migrate recorded for this transcript, which knew
// the call that made the artifact (its command, its exit status), is
// preferred to one made from the bytes and the tool's name alone.
func describe(store *registry.Store, d store.Digest, rec registry.Record, tool, source string) (string, string) {
	r, err := store.Open(context.Background(), d)
	if err != nil {
		return unreadable(err), rec.Media
	}
	defer r.Close()
	dsc := summary.NewDescriberIn(rec.Media, summary.Context{Tool: tool})
	if _, err := io.Copy(dsc, r); err != nil {
		return unreadable(err), rec.Media
	}
	if rec.Summary != "" && rec.Source == source && source != "" {
		return display.Line(rec.Summary, summary.Max), dsc.Media()
	}
	return dsc.String(), dsc.Media()
}

func unreadable(err error) string {
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "unreadable: not in the store"
	case errors.Is(err, store.ErrCorrupt):
		return "unreadable: corrupt, its bytes do not match its hash"
	}
	return display.Line("unreadable: "+err.Error(), summary.Max)
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Narrative returns the narrative of s, at most max code points: the
// session's id and format, number of entries, time span, tool calls by
// name (the ten most called), the number and total size of its artifacts,
// and, in what room is left, its last user request shortened. Facts that
// do not fit are cut; the request is left out when fewer than minSummary
// characters of it would fit.
func Narrative(s *Session, total int64, max int) string {
	if max <= 0 {
		return ""
	}
	var b strings.Builder
	id := display.Line(s.ID, 80)
	if id == "" {
		id = "(no id)"
	}
	b.WriteString("Session " + id + " (" + display.Line(s.Format, 20) + "): " + entries(s.Entries))
	switch {
	case s.First.IsZero():
	case s.First.Equal(s.Last):
		b.WriteString(", at " + s.First.Format(time.RFC3339))
	default:
		b.WriteString(", " + s.First.Format(time.RFC3339) + " to " + s.Last.Format(time.RFC3339) +
			" (" + s.Last.Sub(s.First).Round(time.Second).String() + ")")
	}
	b.WriteString(". Tool calls: ")
	if len(s.Tools) == 0 {
		b.WriteString("none")
	}
	for i, t := range s.Tools {
		if i == 10 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(display.Line(t.Name, 40) + " ×" + strconv.Itoa(t.Calls))
	}
	b.WriteString(". Artifacts: " + strconv.Itoa(len(s.Refs)) + ", " + display.Bytes(total))
	if s.SubagentRefs > 0 {
		b.WriteString(" (" + strconv.Itoa(s.SubagentRefs) + " of them from its " + display.Plural(s.Subagents, "subagent") + ")")
	}
	b.WriteString(".")
	facts := b.String()
	if display.Len(facts) >= max {
		return display.Cut(facts, max)
	}
	const before, after = ` Last user request: "`, `"`
	room := max - display.Len(facts) - display.Len(before) - display.Len(after)
	req := display.Line(s.LastRequest, room)
	if room < minSummary || req == "" {
		return facts
	}
	return facts + before + req + after
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}

// Compose lays out a section within opts: the header lines, the narrative
// and up to n items, item(i) giving the i-th most recent artifact. item
// is called at most once for each i, in order, and only for artifacts
// that may be listed. It is the budget logic of Build, apart so that it
// can be tested on any input.
func Compose(header []string, narrative string, n int, item func(i int) Item, opts Options) Section {
	b := builder{max: max(opts.MaxChars, 0)}
	var sec Section
	var shown []string
	for _, h := range header {
		if l, ok := b.line(h, true); ok {
			shown = append(shown, l)
		}
	}
	sec.Header = strings.Join(shown, "\n")
	narrative = display.Cut(narrative, opts.NarrativeMaxChars)
	if narrative != "" {
		if l, ok := b.para([]string{narrative}, true); ok {
			sec.Narrative = l
		}
	}
	if n == 0 {
		b.para([]string{noArtifacts}, false)
	} else {
		sec.Items, sec.Omitted = b.items(n, item, max(opts.MaxItems, 0))
	}
	sec.Text = b.String()
	sec.Length = b.n
	return sec
}

// builder writes lines within a budget of code points.
type builder struct {
	strings.Builder
	n, max int
}

func (b *builder) room() int { return b.max - b.n }

// line adds s and a newline when they fit, or, when cut is set and room
// is left, s cut to fit. It returns the line added.
func (b *builder) line(s string, cut bool) (string, bool) {
	if display.Len(s)+1 > b.room() {
		if !cut || b.room() < 2 {
			return "", false
		}
		s = display.Cut(s, b.room()-1)
	}
	b.WriteString(s + "\n")
	b.n += display.Len(s) + 1
	return s, true
}

// para adds lines as a paragraph: after a blank line unless it comes
// first. Only the last line may be cut. It returns the last line added.
func (b *builder) para(lines []string, cut bool) (string, bool) {
	blank := 0
	if b.n > 0 {
		blank = 1
	}
	need := blank
	for _, l := range lines[:len(lines)-1] {
		need += display.Len(l) + 1
	}
	last := lines[len(lines)-1]
	if need+display.Len(last)+1 > b.room() && (!cut || need+2 > b.room()) {
		return "", false
	}
	if blank == 1 {
		b.WriteString("\n")
		b.n++
	}
	for _, l := range lines[:len(lines)-1] {
		b.line(l, false)
	}
	return b.line(last, true)
}

// items lists the most recent of n artifacts that fit, at most maxItems,
// and a line counting those left out. When not all fit, room is kept for
// that line.
func (b *builder) items(n int, item func(int) Item, maxItems int) ([]Item, int) {
	cache := make([]Item, 0, min(n, maxItems+1))
	get := func(i int) Item {
		for len(cache) <= i {
			cache = append(cache, item(len(cache)))
		}
		return cache[i]
	}
	blank := 0
	if b.n > 0 {
		blank = 1
	}
	// Room for item lines: after the blank line and the heading.
	avail := b.room() - blank - display.Len(itemsHeading) - 1
	pick := func(room int) (lines []string, items []Item) {
		for i := 0; i < n && len(items) < maxItems; i++ {
			it := get(i)
			l := itemLine(it)
			if display.Len(l)+1 <= room {
				lines, items = append(lines, l), append(items, it)
				room -= display.Len(l) + 1
				continue
			}
			bare := it
			bare.Summary = ""
			if k := room - 1 - display.Len(itemLine(bare)) - display.Len(": "); k >= minSummary {
				it.Summary = display.Cut(it.Summary, k)
				lines, items = append(lines, itemLine(it)), append(items, it)
			}
			break
		}
		return lines, items
	}
	lines, items := pick(avail)
	if len(items) < n {
		reserve := display.Len(omittedLine(n, true)) + 1
		lines, items = pick(avail - reserve)
	}
	omitted := n - len(items)
	if omitted > 0 {
		lines = append(lines, omittedLine(omitted, len(items) > 0))
	}
	if len(items) > 0 {
		lines = append([]string{itemsHeading}, lines...)
	}
	if _, ok := b.para(lines, false); !ok {
		return nil, n
	}
	return items, omitted
}

// itemLine renders an item: "- `id` tool, size: summary — path".
func itemLine(it Item) string {
	var b strings.Builder
	b.WriteString("- `" + display.ID(it.ID) + "` ")
	if it.Tool != "" {
		b.WriteString(it.Tool + ", ")
	}
	b.WriteString(display.Bytes(it.Size))
	if it.Summary != "" {
		b.WriteString(": " + it.Summary)
	}
	b.WriteString(" — " + it.Path)
	return b.String()
}

func omittedLine(n int, older bool) string {
	what := " artifacts"
	if older {
		what = " older artifacts"
	}
	if n == 1 {
		what = strings.TrimSuffix(what, "s")
	}
	return "(" + strconv.Itoa(n) + what + " not listed)"
}
