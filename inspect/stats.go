package inspect

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image sizes for the token estimate
	_ "image/jpeg"
	_ "image/png"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/count"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// DefaultTop is how many of the largest payloads Stats lists by default.
const DefaultTop = 10

// StatsOptions configure Stats.
type StatsOptions struct {
	// Threshold is migrate's --threshold: payloads are the sites that
	// reach it, and the savings are those of a migration at it.
	Threshold int
	// Store is the store migrate would use; "" means artifacts/ beside
	// each transcript, as for migrate. It is read, never written: entries
	// already migrated into it save nothing more, and artifacts already in
	// it do not grow it.
	Store string
	// OpenStore opens the backend of a store: the command line's
	// location.Open.
	OpenStore store.OpenFunc `json:"-"`
	// StoreAs is migrate's StoreAs: the store's location as the agents
	// see it, which sets the length of the placeholders' paths.
	StoreAs string
	// Format names the transcripts' format instead of detecting it per
	// file.
	Format string
	// Top is how many of the largest payloads to list.
	Top int
	// Progress, when set, is told the size of each file once it is read.
	Progress interface{ Add(n int64) }
}

// Counts are the sizes of a group of lines.
type Counts struct {
	Lines        int64 `json:"lines"`
	Bytes        int64 `json:"bytes"`        // JSONL bytes, ends of lines included
	Payloads     int64 `json:"payloads"`     // payload sites reaching the threshold
	PayloadBytes int64 `json:"payloadBytes"` // their JSON bytes
}

func (c *Counts) add(o Counts) {
	c.Lines += o.Lines
	c.Bytes += o.Bytes
	c.Payloads += o.Payloads
	c.PayloadBytes += o.PayloadBytes
}

// Group is the counts of the lines of one format, or of one entry type or
// tool within a format.
type Group struct {
	Format string `json:"format"`
	Name   string `json:"name,omitempty"`  // entry type or tool; "" for a format
	Files  int    `json:"files,omitempty"` // for a format
	Counts
}

// Names of groups that are not a name found in a transcript.
const (
	UnknownFormat = "(unknown)"   // a file of no known format
	NoTool        = "(none)"      // a line that carries no tool's output
	UnknownTool   = "(unknown)"   // output of a tool call whose name was not seen
	OtherGroup    = "(other)"     // names past maxGroups
	NotJSON       = "(not JSON)"  // a line that is not valid JSON, a torn one included
	TooLarge      = "(too large)" // a line too large to inspect in bounded memory
	NotObject     = "(not object)"
	BlankLine     = "(blank)"
	Untyped       = "(no type)"
)

// ToolResults are the files of the sidecar folders (format.Sidecar) of
// the sessions of one project of an agent.
type ToolResults struct {
	// Agent is the agent's name and Folder the name of its sidecar
	// folders; they are left out of JSON, whose reports have held only
	// Claude Code's tool-results since before other agents were read.
	Agent   string `json:"-"`
	Folder  string `json:"-"`
	Project string `json:"project"`
	Files   int    `json:"files"`
	Bytes   int64  `json:"bytes"`
}

// Payload is one payload site.
type Payload struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Site string `json:"site"` // JSON pointer within the entry
	Tool string `json:"tool,omitempty"`
	Size int64  `json:"size"` // JSON bytes
}

// Savings is what a migration at the threshold would do, computed by
// running migrate's externalizer over every line.
type Savings struct {
	// BytesBefore, BytesAfter and Saved are JSONL bytes of the
	// transcripts, decompressed for *.jsonl.zst; Saved is what migrate
	// reports as saved for uncompressed transcripts.
	BytesBefore int64   `json:"bytesBefore"`
	BytesAfter  int64   `json:"bytesAfter"`
	Saved       int64   `json:"saved"`
	Share       float64 `json:"share"` // Saved / BytesBefore
	// Files is how many files would change; Failed how many migrate
	// would fail on (an entry that looks migrated but does not restore),
	// whose savings are not counted.
	Files  int `json:"files"`
	Failed int `json:"failed"`
	// Artifacts counts references; Unique the distinct artifacts per
	// store after deduplication across all the files; New those not yet
	// in their store, and NewBytes what the stores would grow by.
	Artifacts   int   `json:"artifacts"`
	Unique      int   `json:"unique"`
	UniqueBytes int64 `json:"uniqueBytes"`
	New         int   `json:"new"`
	NewBytes    int64 `json:"newBytes"`
	// Tokens estimates the context tokens an agent reloading the sessions
	// would save: TextBytes / 4 plus ImageTokens. TextBytes are the saved
	// bytes other than base64 image data: about four bytes make a token
	// of English, code or JSON in the tokenizers of current models, and
	// escapes cost tokens as well as bytes. Images cost by area, not
	// bytes: ImageTokens counts each moved image as Anthropic's
	// width × height / 750, scaled to at most 1568 pixels on its long edge
	// and 1600 tokens, and as 1600 when its size cannot be read.
	Tokens      int64 `json:"tokens"`
	TextBytes   int64 `json:"textBytes"`
	Images      int   `json:"images"`
	ImageTokens int64 `json:"imageTokens"`
}

// StatsReport is what Stats found.
type StatsReport struct {
	Threshold  int       `json:"threshold"`
	Files      int       `json:"files"` // read to their end
	Total      Counts    `json:"total"`
	Formats    []Group   `json:"formats"`    // by bytes, largest first
	EntryTypes []Group   `json:"entryTypes"` // by format as in Formats, then by bytes
	Tools      []Group   `json:"tools"`      // likewise
	Largest    []Payload `json:"largest"`    // largest first
	// NotUnderstood are the lines of a known format whose entry type the
	// format does not know (one an agent added later): migrate passes
	// them through as they are. By format as in Formats, then by bytes.
	NotUnderstood []Group `json:"notUnderstood"`
	// ToolResults are the files the agents keep beside the sessions
	// read, per project: their sidecar folders (format.Sidecar), such as
	// the outputs Claude Code stored itself, which the tool leaves as
	// they are. By agent, then by project.
	ToolResults []ToolResults `json:"toolResults"`
	Migrate     Savings       `json:"migrate"`
	// Findings are notes (a file of unknown format; a file migrate would
	// fail on) and files that could not be read, which are left out of
	// every count.
	Findings []Finding `json:"findings"`
}

// Stats measures the inputs: lines, bytes and payload bytes by format,
// entry type and tool; the largest payloads; and what migrate would save.
// It returns an error only when ctx is done.
//
// An entry's type is its "type" (a chat message's "role"), followed by
// the "role" of its "message" or the "type" of its "payload" or "data"
// when there is one: "message/toolResult", "progress/agent_progress",
// "response_item/function_call_output". A line is counted for each tool
// whose output it carries, or for NoTool; tools are named by the result
// itself or by the call it answers, found earlier in the file.
func Stats(ctx context.Context, inputs []session.Input, opts StatsOptions) (StatsReport, error) {
	if opts.Threshold <= 0 {
		opts.Threshold = externalizer.DefaultThreshold
	}
	s := &stats{opts: opts, stores: map[string]*registry.Store{},
		formats: newTally(), types: newTally(), tools: newTally(), unknown: newTally(),
		toolResults: map[[2]string]*ToolResults{}, sidecars: map[string]bool{}}
	s.rep.Threshold = opts.Threshold
	s.rep.Findings = []Finding{}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return s.rep, err
		}
		err := s.file(ctx, in)
		if err != nil && ctx.Err() != nil {
			return s.rep, ctx.Err()
		}
		if err != nil {
			s.rep.Findings = append(s.rep.Findings, Finding{Kind: KindUnreadable, File: in.Name(), Message: err.Error()})
		}
		if opts.Progress != nil {
			opts.Progress.Add(in.Size)
		}
	}
	s.finish()
	return s.rep, nil
}

// stats is the state of one run of Stats.
type stats struct {
	opts                           StatsOptions
	rep                            StatsReport
	formats, types, tools, unknown *tally
	// stores holds the stores met, by location: deduplication is per
	// store, over the whole run (see Store.Plan).
	stores map[string]*registry.Store
	// toolResults are the sidecar folders counted, by agent and
	// project; sidecars the folders met.
	toolResults map[[2]string]*ToolResults
	sidecars    map[string]bool
}

// fileStats are the counts of one file, added to the report only once the
// file has been read to its end.
type fileStats struct {
	format                string
	formats, types, tools *tally
	unknown               *tally // the lines the format does not know
	largest               []Payload
	sav                   Savings
	changed, failed       bool
	notes                 []Finding
	digests               map[store.Digest]int64
	names                 *toolNames
}

// lineImages are the images moved out of the line being rewritten.
type lineImages struct {
	n      int
	base64 int64
	tokens int64
}

func (s *stats) file(ctx context.Context, in session.Input) error {
	path := in.Name()
	t, fm, err := open(in, s.opts.Format)
	if err != nil {
		return err
	}
	defer t.Close()
	fs := &fileStats{format: t.Format, formats: newTally(), types: newTally(), tools: newTally(), unknown: newTally(),
		digests: map[store.Digest]int64{}, names: newToolNames()}
	if fm == nil {
		fs.format = UnknownFormat
	}
	storeDir := session.StoreFor(cmp.Or(s.opts.Store, in.Store), in.Path)
	store := s.stores[storeDir]
	if store == nil {
		if store, err = registry.Open(s.opts.OpenStore, storeDir); err != nil {
			return err
		}
		s.stores[storeDir] = store
	}
	var imgs lineImages
	x := &externalizer.Externalizer{
		Format:    fm,
		Threshold: s.opts.Threshold,
		PathFor:   session.PathFor(store, s.opts.StoreAs),
		Put: func(a externalizer.Artifact) error {
			fs.sav.Artifacts++
			fs.digests[a.Digest] = int64(a.Size)
			if strings.HasPrefix(a.Media, "image/") {
				imgs.n++
				imgs.base64 += int64(base64.StdEncoding.EncodedLen(a.Size))
				imgs.tokens += artifactImageTokens(a)
			}
			return nil
		},
		Open: store.Opener(ctx),
	}
	// A compressed transcript is predicted on disk, as migrate reports
	// it: its output is compressed as migrate compresses it, and counted.
	var zout *zstdCount
	if session.Compressed(in.Path) {
		if zout, err = newZstdCount(); err != nil {
			return err
		}
	}
	var all, big []format.Site
	err = scan(ctx, t, s.opts.Threshold, false, func(l *line) error {
		n := lineLen(l)
		fs.sav.BytesBefore += n
		if zout != nil && (fm == nil || fs.failed || l.tooLarge || l.tooDeep) {
			if err := writeOriginal(zout, l); err != nil {
				return err
			}
		}
		if l.tooLarge || l.tooDeep {
			// migrate copies such a line as it is. One too deep is not
			// JSON, as it is when read whole.
			line := Counts{Lines: 1, Bytes: n}
			typ := NotJSON
			if l.tooLarge {
				typ = TooLarge
				fs.notes = append(fs.notes, Finding{Kind: KindNote, File: path, Line: l.Num, Offset: l.Offset,
					Message: fmt.Sprintf("line of %d bytes too large to inspect in bounded memory (too much of it is not long strings): counted by its size only; migrate would keep it as it is", l.Len)})
			}
			fs.formats.get(fs.format, "").add(line)
			fs.types.get(fs.format, typ).add(line)
			fs.tools.get(fs.format, NoTool).add(line)
			return nil
		}
		start := transcript.JSONStart(l.Line)
		root, perr := l.parse(start)
		obj := perr == nil && root.Kind() == transcript.Object
		line := Counts{Lines: 1, Bytes: n}
		all, big = all[:0], big[:0]
		if fm != nil && obj {
			fs.names.see(fm, root)
			all = fm.Sites(root, 1, all)
			big = payloads(fm, root, s.opts.Threshold, big)
		}
		tools := fs.names.line(all)
		if len(tools) == 0 {
			tools = []string{NoTool}
		}
		for _, site := range big {
			size := l.size(site.Value)
			line.Payloads++
			line.PayloadBytes += size
			tool := fs.names.site(site, tools)
			fs.tools.get(fs.format, tool).add(Counts{Payloads: 1, PayloadBytes: size})
			fs.largest = top(fs.largest, Payload{File: path, Line: l.Num, Site: oneLine(site.Path.String()), Tool: tool, Size: size}, s.opts.Top)
		}
		fs.formats.get(fs.format, "").add(line)
		typ := entryType(l.Text[start:], root, perr)
		fs.types.get(fs.format, typ).add(line)
		if fm != nil && obj && !fm.Knows(root) {
			fs.unknown.get(fs.format, typ).add(line)
		}
		for _, tool := range tools {
			fs.tools.get(fs.format, tool).add(Counts{Lines: 1, Bytes: n})
		}
		if fm == nil || fs.failed {
			return nil
		}
		imgs = lineImages{}
		var out io.Writer
		if zout != nil {
			out = zout
		}
		saved, changed, err := rewrite(x, l, start, out)
		if err != nil {
			// migrate fails the whole file: none of it is saved.
			fs.failed = true
			fs.notes = append(fs.notes, Finding{Kind: KindNote, File: path, Line: l.Num, Offset: l.Offset,
				Message: "migrate would fail on this file: " + err.Error()})
			return nil
		}
		if changed {
			fs.sav.Saved += saved
			fs.sav.TextBytes += saved - imgs.base64
			fs.sav.Images += imgs.n
			fs.sav.ImageTokens += imgs.tokens
			fs.changed = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if zout != nil {
		after, err := zout.close()
		if err != nil {
			return err
		}
		// What the output takes at zstd's default level is what migrate
		// writes when that is smaller; when it is not, migrate compresses
		// harder, which this does not try. A file migrate would fail on
		// it leaves as it is.
		fs.sav.BytesBefore, fs.sav.Saved = t.Size, t.Size-after
		if fs.failed {
			fs.sav.Saved = 0
		}
	}
	if fm == nil {
		fs.notes = append(fs.notes, Finding{Kind: KindNote, File: path,
			Message: "unknown transcript format: counted by lines and bytes only; migrate would leave it"})
	}
	s.add(ctx, fs, store)
	for _, a := range format.Agents() {
		if a.Format != t.Format || a.Sidecar == nil {
			continue
		}
		if err := s.countSidecar(a, path); err != nil {
			s.rep.Findings = append(s.rep.Findings, Finding{Kind: KindNote, File: path,
				Message: a.Name + "'s " + a.Sidecar.Name + " of this session not counted: " + err.Error()})
		}
	}
	return nil
}

// countSidecar counts the files of the sidecar folder that agent a keeps
// for the session of the transcript at path, once per folder however
// many of the session's transcripts are read. Only names and sizes are
// read.
func (s *stats) countSidecar(a format.Agent, path string) error {
	folder, project := a.Sidecar.Folder(path)
	if s.sidecars[folder] {
		return nil
	}
	s.sidecars[folder] = true
	entries, err := os.ReadDir(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	key := [2]string{a.Name, project}
	tr := s.toolResults[key]
	if tr == nil {
		tr = &ToolResults{Agent: a.Name, Folder: a.Sidecar.Name, Project: project}
		s.toolResults[key] = tr
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		tr.Files++
		tr.Bytes += fi.Size()
	}
	return nil
}

// rewrite rewrites l as migrate would and returns the bytes that saves
// (negative for a line that grows) and whether migrate changes the line;
// with w set, it writes there the line as migrate would write it, end of
// line included. A long line is rewritten from its skeleton, reading its
// payloads back from the file.
func rewrite(x *externalizer.Externalizer, l *line, start int, w io.Writer) (saved int64, changed bool, err error) {
	if l.sk == nil {
		res, err := x.Rewrite(l.Text, start)
		if err != nil {
			return 0, false, err
		}
		if w != nil {
			text := l.Text
			if res.Line != nil {
				text = res.Line
			}
			if _, err := w.Write(text); err != nil {
				return 0, false, err
			}
			if _, err := w.Write(l.EOL); err != nil {
				return 0, false, err
			}
		}
		if res.Line == nil {
			return 0, false, nil
		}
		return int64(len(l.Text) - len(res.Line)), true, nil
	}
	var out count.Writer
	var to io.Writer = &out
	if w != nil {
		to = io.MultiWriter(&out, w)
	}
	res, err := x.RewriteBig(to, &externalizer.BigLine{Skeleton: l.sk, Src: l.src}, start)
	if w != nil && err == nil {
		_, err = w.Write(l.EOL)
	}
	if errors.Is(err, externalizer.ErrNeedWhole) {
		// As migrate does, with the whole line.
		whole := &line{Line: l.Line}
		whole.Text, whole.Long = make([]byte, l.Len), false
		if _, err := l.src.ReadAt(whole.Text, 0); err != nil {
			return 0, false, err
		}
		return rewrite(x, whole, start, w)
	}
	if err != nil || len(res.Artifacts) == 0 {
		return 0, false, err
	}
	return l.Len - out.N, true, nil
}

// zstdCount counts the bytes of what is written to it once compressed as
// migrate compresses a transcript at first (session.Encoder at zstd's
// default level).
type zstdCount struct {
	n count.Writer
	e *zstd.Encoder
}

func newZstdCount() (*zstdCount, error) {
	z := &zstdCount{}
	e, err := session.Encoder(&z.n, zstd.SpeedDefault)
	z.e = e
	return z, err
}

func (z *zstdCount) Write(p []byte) (int, error) { return z.e.Write(p) }

// close ends the stream and returns its compressed size.
func (z *zstdCount) close() (int64, error) {
	err := z.e.Close()
	return z.n.N, err
}

// artifactImageTokens is imageTokens for image artifact a, whose bytes
// are in a.Data or, for a payload of a long line, written by a.Stream:
// its header is then decoded from the stream as it comes, whatever its
// length, and the rest is not read.
func artifactImageTokens(a externalizer.Artifact) int64 {
	if a.Stream == nil {
		return imageTokens(bytes.NewReader(a.Data))
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(a.Stream(pw))
	}()
	n := imageTokens(pr)
	pr.CloseWithError(errHeaderRead) // the stream's next write fails: it stops
	<-done
	return n
}

var errHeaderRead = errors.New("image header read")

// add adds the counts of a file read to its end.
func (s *stats) add(ctx context.Context, fs *fileStats, store *registry.Store) {
	s.rep.Files++
	s.rep.Findings = append(s.rep.Findings, fs.notes...)
	s.formats.merge(fs.formats)
	s.formats.get(fs.format, "").Files++
	s.types.merge(fs.types)
	s.tools.merge(fs.tools)
	s.unknown.merge(fs.unknown)
	for _, p := range fs.largest {
		s.rep.Largest = top(s.rep.Largest, p, s.opts.Top)
	}
	m := &s.rep.Migrate
	m.BytesBefore += fs.sav.BytesBefore
	if fs.failed {
		m.Failed++
		return
	}
	if fs.changed {
		m.Files++
	}
	m.Saved += fs.sav.Saved
	m.Artifacts += fs.sav.Artifacts
	m.TextBytes += fs.sav.TextBytes
	m.Images += fs.sav.Images
	m.ImageTokens += fs.sav.ImageTokens
	for d, size := range fs.digests {
		first, write := store.Plan(ctx, d)
		if !first {
			continue
		}
		m.Unique++
		m.UniqueBytes += size
		if write {
			m.New++
			m.NewBytes += size
		}
	}
}

func (s *stats) finish() {
	m := &s.rep.Migrate
	m.BytesAfter = m.BytesBefore - m.Saved
	if m.BytesBefore > 0 {
		m.Share = float64(m.Saved) / float64(m.BytesBefore)
	}
	m.Tokens = m.TextBytes/4 + m.ImageTokens
	s.rep.Formats = s.formats.sorted(nil)
	for _, g := range s.rep.Formats {
		s.rep.Total.add(g.Counts)
	}
	rank := map[string]int{}
	for i, g := range s.rep.Formats {
		rank[g.Format] = i
	}
	s.rep.EntryTypes = s.types.sorted(rank)
	s.rep.Tools = s.tools.sorted(rank)
	s.rep.NotUnderstood = s.unknown.sorted(rank)
	s.rep.ToolResults = []ToolResults{}
	for _, tr := range s.toolResults {
		s.rep.ToolResults = append(s.rep.ToolResults, *tr)
	}
	slices.SortFunc(s.rep.ToolResults, func(a, b ToolResults) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Project, b.Project))
	})
	// Empty lists are [] in JSON, not null.
	for _, g := range []*[]Group{&s.rep.Formats, &s.rep.EntryTypes, &s.rep.Tools, &s.rep.NotUnderstood} {
		if *g == nil {
			*g = []Group{}
		}
	}
	if s.rep.Largest == nil {
		s.rep.Largest = []Payload{}
	}
}

// entryType names the kind of entry a line holds; text is the line from
// where its JSON may begin.
func entryType(text []byte, root transcript.Value, err error) string {
	switch {
	case err != nil && len(bytes.TrimSpace(text)) == 0:
		return BlankLine
	case err != nil:
		return NotJSON
	case root.Kind() != transcript.Object:
		return NotObject
	}
	name := ""
	if t, _ := root.Get("type"); t.Kind() == transcript.String {
		name = t.Text()
	} else if r, _ := root.Get("role"); r.Kind() == transcript.String {
		name = r.Text()
	} else if m, _ := root.Get("messages"); m.Kind() == transcript.Array {
		name = "messages"
	} else {
		return Untyped
	}
	for _, at := range []format.Pointer{{"message", "role"}, {"payload", "type"}, {"data", "type"}} {
		if sub, ok := at.Resolve(root); ok && sub.Kind() == transcript.String {
			if t := sub.Text(); t != name {
				name += "/" + t
			}
			break
		}
	}
	return printable(name)
}

// top inserts p into list, largest first, if it is among the n largest;
// of equal sizes the one found first stays first.
func top(list []Payload, p Payload, n int) []Payload {
	i := sort.Search(len(list), func(i int) bool { return list[i].Size < p.Size })
	if i >= n {
		return list
	}
	list = append(list, Payload{})
	copy(list[i+1:], list[i:])
	list[i] = p
	if len(list) > n {
		list = list[:n]
	}
	return list
}

// Image token estimate; see Savings.Tokens.
const (
	imageLongEdge  = 1568
	imagePixels    = 750 // pixels per token
	maxImageTokens = 1600
)

// imageTokens estimates what a model is charged for seeing an image.
func imageTokens(r io.Reader) int64 {
	cfg, _, err := image.DecodeConfig(r)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return maxImageTokens
	}
	w, h := float64(cfg.Width), float64(cfg.Height)
	if long := math.Max(w, h); long > imageLongEdge {
		w, h = w*imageLongEdge/long, h*imageLongEdge/long
	}
	return int64(math.Min(math.Ceil(w*h/imagePixels), maxImageTokens))
}

// maxGroups bounds the distinct groups of a table; names past it count
// for OtherGroup, so that a hostile file cannot make the report huge.
const maxGroups = 1000

// tally counts lines by group.
type tally struct{ m map[groupKey]*Group }

type groupKey struct{ format, name string }

func newTally() *tally { return &tally{m: map[groupKey]*Group{}} }

func (t *tally) get(format, name string) *Group {
	k := groupKey{format, name}
	if g, ok := t.m[k]; ok {
		return g
	}
	if len(t.m) >= maxGroups {
		k.name = OtherGroup
		if g, ok := t.m[k]; ok {
			return g
		}
	}
	g := &Group{Format: k.format, Name: k.name}
	t.m[k] = g
	return g
}

func (t *tally) merge(o *tally) {
	for k, g := range o.m {
		dst := t.get(k.format, k.name)
		dst.Files += g.Files
		dst.Counts.add(g.Counts)
	}
}

// sorted returns the groups ordered by the rank of their format, then by
// bytes, largest first, then by name; without ranks, by bytes and format.
func (t *tally) sorted(rank map[string]int) []Group {
	groups := make([]Group, 0, len(t.m))
	for _, g := range t.m {
		groups = append(groups, *g)
	}
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if rank[a.Format] != rank[b.Format] {
			return rank[a.Format] < rank[b.Format]
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		if a.Format != b.Format {
			return a.Format < b.Format
		}
		return a.Name < b.Name
	})
	return groups
}
