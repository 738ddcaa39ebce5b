package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/bytedance/sonic"

	"github.com/transcript-tool/transcript-tool/store"
)

// Record is where an artifact came from: a transcript and one place in it.
// On disk, one line holds the record of an artifact and a transcript with
// every place in it that refers to the artifact (Refs), not a line per
// reference; readers are given one Record per place, as before (see
// Records).
type Record struct {
	Hash       string `json:"hash"`
	Size       int64  `json:"size"`
	Media      string `json:"media"`
	Site       string `json:"site,omitempty"`
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Session    string `json:"session,omitempty"`
	Source     string `json:"source,omitempty"`
	Entry      string `json:"entry,omitempty"`
	Line       int    `json:"line,omitempty"`
	CreatedAt  string `json:"createdAt"`
	Summary    string `json:"summary,omitempty"`
	// Refs, on a line of several places, are those places; Site, Entry,
	// Line and ToolCallID are then empty, and Tool and Summary are those
	// of the first place.
	Refs []Ref `json:"refs,omitempty"`
}

// Ref is one place in a transcript that refers to an artifact: a line of
// the registry with several lists them. Tool and Summary are set when
// they differ from the record's.
type Ref struct {
	Site       string `json:"site"`
	Entry      string `json:"entry,omitempty"`
	Line       int    `json:"line,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// group joins the records of one artifact and one transcript into one
// line's record with their places as Refs, keeping the order in which
// each artifact first appears; an artifact with one place keeps the
// record of a place, as versions before groups wrote it.
func group(recs []Record) []Record {
	type key struct {
		hash, source, session, media string
		size                         int64
	}
	type place struct {
		group int
		ref   Ref
	}
	var out []Record
	at := map[key]int{}
	// The places of each group, so that a transcript that refers to one
	// artifact from n places takes n steps, not n².
	places := map[place]bool{}
	for _, r := range recs {
		k := key{r.Hash, r.Source, r.Session, r.Media, r.Size}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, r)
			continue
		}
		g := &out[i]
		if g.Refs == nil {
			first := *g
			g.Site, g.Entry, g.Line, g.ToolCallID = "", "", 0, ""
			g.Refs = []Ref{g.refOf(first)}
			places[place{i, g.Refs[0]}] = true
		}
		ref := g.refOf(r)
		if !places[place{i, ref}] {
			places[place{i, ref}] = true
			g.Refs = append(g.Refs, ref)
		}
	}
	return out
}

// refOf returns r's place, as a Ref of g.
func (g *Record) refOf(r Record) Ref {
	ref := Ref{Site: r.Site, Entry: r.Entry, Line: r.Line, ToolCallID: r.ToolCallID}
	if r.Tool != g.Tool {
		ref.Tool = r.Tool
	}
	if r.Summary != g.Summary {
		ref.Summary = r.Summary
	}
	return ref
}

// places calls fn with a Record for each place r names: r itself, or one
// for each of its Refs.
func (r Record) places(fn func(Record) error) error {
	if len(r.Refs) == 0 {
		return fn(r)
	}
	refs := r.Refs
	r.Refs = nil
	for _, ref := range refs {
		p := r
		p.Site, p.Entry, p.Line, p.ToolCallID = ref.Site, ref.Entry, ref.Line, ref.ToolCallID
		if ref.Tool != "" {
			p.Tool = ref.Tool
		}
		if ref.Summary != "" {
			p.Summary = ref.Summary
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

var api = sonic.ConfigStd

// RegistryPath returns where the store's single-file registry is, which
// versions before segments appended to: it is still read, never appended
// to, and compacted away by Compact.
func (s *Store) RegistryPath() string { return s.where(legacy) }

// legacy is the single-file registry.
var legacy = store.Handle{Kind: store.Legacy, Name: store.RegistryFile}

// SegmentPath returns where the segment this Store last appended to is,
// or "" before its first Append that writes a line.
func (s *Store) SegmentPath() string {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	if s.seg.Name == "" {
		return ""
	}
	return s.where(s.seg)
}

// SetShard makes the segments this Store starts from now on name shard in
// their writer's id (see Writer.ID).
func (s *Store) SetShard(shard Shard) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	s.shard = shard
}

// Append adds records to this Store's own segment, one write per line,
// and makes them durable (the segment's name too, for a segment it has
// just created) before it returns. The segment is created on the first
// Append that has a line to write; if it is gone (compacted by a
// collector) or its last write failed, a new one is started, so that no
// line is ever appended after a torn one. Over a backend that cannot
// append in place (store.Appender), each Append saves a new segment
// whole instead (see appendWhole).
//
// The records of one artifact and one transcript are written as one line
// (see Record). A record the registry already holds, in any of its files, the same in
// every field but its creation time, is not appended again: a run that
// was killed after its append and is run again, or a transcript
// rehydrated and migrated again, leaves the registry as one run would.
// The Store remembers the records it has read, and those it has appended
// once they are durable, so each Append reads only the lines other
// writers added since the last one; it keeps their keys in bounded
// memory, most of them in a temporary file (see keySet).
func (s *Store) Append(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	// A record keeps its artifact from a collector only once the registry
	// holds it: until then the lock does (see holdShared).
	if err := s.holdShared(ctx); err != nil {
		return err
	}
	// The objects the records name are durable before the records are.
	named := make([]store.Digest, 0, len(recs))
	for _, r := range recs {
		if d, err := store.ParseDigest(r.Hash); err == nil {
			named = append(named, d)
		}
	}
	if err := s.Flush(ctx, named...); err != nil {
		return err
	}
	s.appendMu.Lock()
	locked := true
	defer func() {
		if locked {
			s.appendMu.Unlock()
		}
	}()
	if err := s.readKnown(ctx); err != nil {
		return fmt.Errorf("read registry: %w", err)
	}
	// The new lines, written at once: one system call per transcript,
	// not one per record.
	var lines []byte
	fresh := map[recordKey]bool{} // the keys of lines
	for _, g := range group(recs) {
		parts, err := fit(g)
		if err != nil {
			return err
		}
		for _, p := range parts {
			k, ok := keyOfLine(p.line)
			if !ok {
				if k, err = keyOf(p.r); err != nil {
					return err
				}
			}
			if fresh[k] {
				continue
			}
			if held, err := s.known.has(k); err != nil {
				return fmt.Errorf("read registry: %w", err)
			} else if held {
				continue
			}
			fresh[k] = true
			lines = append(append(lines, p.line...), '\n')
		}
	}
	if len(lines) == 0 {
		return nil // nothing new: no segment is created for nothing
	}
	if s.app == nil {
		return s.appendWhole(ctx, lines, fresh)
	}
	f, created, err := s.openSegment(ctx)
	if err != nil {
		return err
	}
	defer f.Close()
	seg := s.seg
	if _, err := f.Write(lines); err != nil {
		s.dropSegment()
		return fmt.Errorf("append to registry %s: %w", s.where(seg), err)
	}
	s.segEnd += int64(len(lines))
	s.gen++
	gen := s.gen
	s.written[seg.Name] = gen
	if !created {
		// The fsync is shared: Appends of other transcripts that wrote
		// meanwhile are made durable by one fsync (see syncAppended).
		s.appendMu.Unlock()
		locked = false
		if err := s.syncAppended(f, seg, gen); err != nil {
			return err
		}
		s.appendMu.Lock()
		locked = true
		s.remember(fresh, seg)
		return nil
	}
	// A segment just created: its name is made durable with its lines.
	if err := f.Sync(); err != nil {
		// The lines written may be lost: the next Append starts a new
		// segment, and takes nothing it has not read for known.
		s.dropSegment()
		return fmt.Errorf("fsync registry %s: %w", s.where(seg), err)
	}
	s.remember(fresh, seg)
	return nil
}

// appendWhole is Append over a backend that cannot append in place
// (object storage): lines, whole, saved as a new segment of their own,
// never rewritten, so that a reader sees it whole or not at all, and a
// compaction that merged it may remove it without losing a line appended
// meanwhile (none ever is). The price is one segment per Append (per
// transcript migrated) until gc --yes compacts them into one. The caller
// holds appendMu.
func (s *Store) appendWhole(ctx context.Context, lines []byte, fresh map[recordKey]bool) error {
	h := segmentHandle(newWriter(s.shard))
	err := s.b.Save(ctx, h, func(w io.Writer) error {
		_, err := w.Write(lines)
		return err
	})
	if err == nil {
		err = s.b.Flush(ctx, h)
	}
	if err != nil {
		return fmt.Errorf("append to registry %s: %w", s.where(h), err)
	}
	s.seg = h
	if s.addKnown(fresh) != nil {
		s.forget() // read again, this segment too, by the next Append
	}
	return nil
}

// marshalled is a record and its line, without the newline.
type marshalled struct {
	r    Record
	line []byte
}

// fit returns the line of r, or, when it would be over maxLine (an
// artifact referred to from thousands of places of one transcript),
// those of records of r's places split in halves until each fits: a
// reader refuses a longer line. A record of one place that does not fit
// is an error.
func fit(r Record) ([]marshalled, error) {
	b, err := api.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) < maxLine {
		return []marshalled{{r, b}}, nil
	}
	if len(r.Refs) < 2 {
		return nil, fmt.Errorf("registry record of %s: %w", r.Hash, &LineTooLongError{Size: int64(len(b)) + 1})
	}
	half := len(r.Refs) / 2
	a, c := r, r
	a.Refs, c.Refs = r.Refs[:half], r.Refs[half:]
	first, err := fit(a)
	if err != nil {
		return nil, err
	}
	rest, err := fit(c)
	return append(first, rest...), err
}

// remember adds the keys of lines appended to seg and made durable to
// known, and moves the mark of what known holds of seg to its end, unless
// this Store has left seg meanwhile (a failed write elsewhere, which
// also emptied known). The caller holds appendMu.
func (s *Store) remember(fresh map[recordKey]bool, seg store.Handle) {
	if s.known == nil || s.seg != seg {
		return
	}
	if s.addKnown(fresh) != nil {
		// The next Append starts another segment and reads this one,
		// these lines too, as another writer's.
		s.dropSegment()
		return
	}
	if m, ok := s.marks[store.Key(seg)]; ok {
		m.end, m.size = s.segEnd, s.segEnd
		s.marks[store.Key(seg)] = m
	}
}

// addKnown adds keys to known; when it fails (see keySet.add), some of
// them may be missing, and the caller makes the next Append read them.
// The caller holds appendMu.
func (s *Store) addKnown(keys map[recordKey]bool) error {
	for k := range keys {
		if err := s.known.add(k); err != nil {
			return err
		}
	}
	return nil
}

// forget empties known, which the next Append reads again, and releases
// its temporary files. The caller holds appendMu.
func (s *Store) forget() {
	if s.known != nil {
		s.known.close()
		s.known = nil
	}
}

// syncAppended makes the lines of generation gen, written to segment seg
// through f, durable: with one fsync for every Append that wrote to seg
// before it, unless one made since has already covered gen. When an
// fsync fails, every Append it was to cover fails, even one whose own
// fsync would now succeed (the kernel may have dropped their pages and
// reported it once), and the Store leaves the segment.
func (s *Store) syncAppended(f store.AppendFile, seg store.Handle, gen uint64) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if gen <= s.failed[seg.Name] {
		return fmt.Errorf("fsync registry %s: %w", s.where(seg), errLostWithOthers)
	}
	if gen <= s.synced[seg.Name] {
		return nil
	}
	s.appendMu.Lock()
	target := s.written[seg.Name]
	s.appendMu.Unlock()
	if err := f.Sync(); err != nil {
		// Every line written to seg until now is in doubt, also those
		// written while the fsync ran, and none is written to it after.
		s.appendMu.Lock()
		s.failed[seg.Name] = s.written[seg.Name]
		if s.seg == seg {
			s.dropSegment()
		}
		s.appendMu.Unlock()
		return fmt.Errorf("fsync registry %s: %w", s.where(seg), err)
	}
	s.synced[seg.Name] = target
	return nil
}

var errLostWithOthers = errors.New("an fsync covering these lines failed")

// openSegment opens this Store's segment to append to, creating a new
// one if it has none, if it is gone or if it does not end where this
// Store's last write did. The caller holds appendMu.
func (s *Store) openSegment(ctx context.Context) (f store.AppendFile, created bool, err error) {
	if s.seg.Name != "" {
		f, err := s.app.OpenAppend(ctx, s.seg)
		if err == nil {
			if fi, serr := f.Stat(); serr == nil && fi.Size == s.segEnd {
				return f, false, nil
			}
			f.Close() // not as this Store left it: start another
		} else if !errors.Is(err, store.ErrNotExist) {
			return nil, false, fmt.Errorf("open registry %s: %w", s.where(s.seg), err)
		}
		// What it held readKnown has just read, if it is still there.
		s.seg, s.segEnd = store.Handle{}, 0
	}
	for try := 0; ; try++ {
		h := segmentHandle(newWriter(s.shard))
		f, err := s.app.CreateAppend(ctx, h)
		if errors.Is(err, store.ErrExist) && try < 10 {
			continue // another writer's id after all: the next has another sequence number
		}
		if err != nil {
			return nil, false, fmt.Errorf("create registry %s: %w", s.where(h), err)
		}
		s.seg, s.segEnd = h, 0
		return f, true, nil
	}
}

// dropSegment makes the next Append start a new segment and read the
// registry again: the last write to this one may be torn or lost.
func (s *Store) dropSegment() {
	s.seg, s.segEnd = store.Handle{}, 0
	s.forget()
}

// recordKey identifies a record whatever its creation time.
type recordKey [16]byte

func keyOf(r Record) (recordKey, error) {
	r.CreatedAt = ""
	b, err := api.Marshal(r)
	if err != nil {
		return recordKey{}, err
	}
	sum := sha256.Sum256(b)
	return recordKey(sum[:16]), nil
}

// createdAtMember is how the creation time's member starts in a line
// Marshal wrote: a string value never holds it, its quotes being escaped
// there.
var createdAtMember = []byte(`,"createdAt":"`)

// keyOfLine returns keyOf(r) from b, the line Marshal wrote for r, without
// writing r again: the SHA-256 of b with the creation time's value
// emptied. It reports false if b has no such member.
func keyOfLine(b []byte) (recordKey, bool) {
	i := bytes.Index(b, createdAtMember)
	if i < 0 {
		return recordKey{}, false
	}
	open := i + len(createdAtMember) // past the value's opening quote
	end := open
	for ; end < len(b) && b[end] != '"'; end++ {
		if b[end] == '\\' {
			end++ // the escaped byte
		}
	}
	if end >= len(b) {
		return recordKey{}, false
	}
	h := sha256.New()
	h.Write(b[:open])
	h.Write(b[end:])
	var sum [sha256.Size]byte
	return recordKey(h.Sum(sum[:0])[:16]), true
}

// mark is how much of one registry file readKnown has read.
type mark struct {
	id        uint64 // the file's store.FileInfo.ID
	end, size int64  // past the last whole line read; the size then
}

// readKnown adds to s.known the records of every registry file's whole
// lines that it has not read yet. If a file it read is gone, or is not
// the file it read before, or is shorter than what it read (compacted,
// replaced or cut by another tool), it starts over: a compaction may have
// dropped records. Over a backend that cannot append in place, it reads
// the registry once, when known is empty: there every Append makes a new
// segment, and listing them all for each would cost more than the
// records it spares (see appendWhole). The caller holds appendMu.
func (s *Store) readKnown(ctx context.Context) error {
	if s.known != nil && s.app == nil {
		return nil
	}
	for try := 0; ; try++ {
		again, err := s.tryReadKnown(ctx)
		if err != nil || !again {
			return err
		}
		if try == maxListings {
			return errors.New("the registry keeps changing")
		}
	}
}

// tryReadKnown is one attempt of readKnown; again says that the registry
// changed under it and that it must start over.
func (s *Store) tryReadKnown(ctx context.Context) (again bool, err error) {
	files, err := s.registryFiles(ctx)
	if err != nil {
		return false, err
	}
	if s.known != nil {
		listed := make(map[string]bool, len(files))
		for _, fi := range files {
			listed[store.Key(fi.h)] = true
		}
		for n := range s.marks {
			if !listed[n] {
				s.forget()
				break
			}
		}
	}
	if s.known == nil {
		s.known, s.marks = newKeySet(), map[string]mark{}
	}
	for _, e := range files {
		if m, seen := s.marks[store.Key(e.h)]; seen && m.id == e.fi.ID && m.size == e.fi.Size {
			continue // as it was read
		}
		f, fi, err := s.open(ctx, e, &spool{})
		if errors.Is(err, store.ErrNotExist) {
			s.forget()
			return true, nil
		}
		if err != nil {
			return false, err
		}
		again, err := s.readKnownFile(e.h, f, fi)
		f.Close()
		if again || err != nil {
			return again, err
		}
	}
	return false, nil
}

// readKnownFile is readKnown for one open file, fi as it was opened.
func (s *Store) readKnownFile(h store.Handle, f store.File, fi store.FileInfo) (again bool, err error) {
	name := store.Key(h)
	m, seen := s.marks[name]
	if seen && (m.id != fi.ID || fi.Size < m.end) {
		s.forget()
		return true, nil
	}
	if h == s.seg && fi.Size == s.segEnd && seen && m.id == fi.ID {
		// This Store's own segment, as it left it since known read
		// it: every line in it is its own, each line's key is in
		// known once its fsync succeeded (see remember), and a
		// failed write or fsync empties known. Lines still being
		// made durable are not read back: their records are other
		// transcripts' than the ones an Append of this Store writes
		// meanwhile. Unread (known was emptied since the segment
		// was made, or never held it), it is read as any other.
		s.marks[name] = mark{id: fi.ID, end: fi.Size, size: fi.Size}
		return false, nil
	}
	if seen && fi.Size == m.size {
		return false, nil
	}
	rf := &regFile{h: h, path: s.where(h), f: f, size: fi.Size, id: fi.ID, from: m.end}
	var dec decoder
	end, err := rf.scan(nil, func(line []byte, _ int, _ int64) error {
		// A bad line is the readers' business, not a record to compare
		// with; so is a compacted segment's header.
		var r Record
		if dec.decode(line, &r) == nil && r.Hash != "" {
			k, err := keyOf(r)
			if err != nil {
				return err
			}
			return s.known.add(k)
		}
		return nil
	}, nil)
	if err != nil {
		return false, err
	}
	s.marks[name] = mark{id: fi.ID, end: end, size: fi.Size}
	return false, nil
}

// BadLineError reports a registry line that does not parse.
type BadLineError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *BadLineError) Error() string {
	return fmt.Sprintf("%s:%d: byte %d: bad registry record: %v", e.Path, e.Line, e.Offset, e.Err)
}

func (e *BadLineError) Unwrap() error { return e.Err }

// recordError says in a few words what is wrong with a registry line that
// did not decode to a record, err being the decoder's error: the fast
// decoder's own message is a dump of the line. The slower standard
// decoder, only on this rare path, tells where the JSON breaks or which
// field has the wrong type.
func recordError(line []byte, err error) error {
	if err == nil {
		return errors.New("a record without a hash")
	}
	var (
		r  Record
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	jerr := json.Unmarshal(line, &r)
	switch {
	case errors.As(jerr, &se):
		return fmt.Errorf("not JSON (at byte %d of the line)", se.Offset)
	case errors.As(jerr, &te) && te.Field != "":
		return fmt.Errorf("not a record: %q is a JSON %s", te.Field, te.Value)
	case errors.As(jerr, &te):
		return fmt.Errorf("not a record: a JSON %s", te.Value)
	}
	return errors.New("not a record")
}

// Pos is where a registry line is: its file, its number in the file
// (from 1) and the byte offset where it starts.
type Pos struct {
	Path   string
	Line   int
	Offset int64
}

// Records calls fn for every record in the registry: those of the
// single-file registry of earlier versions, then those of each segment,
// segments sorted by name, each file in order (see
// docs/registry-index.md, # Reading). A torn last line of any file is skipped; a bad line
// elsewhere is passed to bad, and reading goes on. A missing registry has
// no records.
func (s *Store) Records(ctx context.Context, fn func(r Record) error, bad func(*BadLineError)) error {
	return s.RecordsAt(ctx, func(r Record, _ Pos) error { return fn(r) }, bad)
}

// RecordsAt is Records for a caller that reports on records: fn is also
// given where the record's line is.
func (s *Store) RecordsAt(ctx context.Context, fn func(r Record, at Pos) error, bad func(*BadLineError)) error {
	return s.RecordsMatching(ctx, nil, fn, bad)
}

// RecordsMatching is RecordsAt for a caller that looks for the records
// matching any of keys: it calls fn for each of those, in registry
// order, and may call it for others too, which the caller tells apart
// (records of the same lines, lines past an index, records whose hash
// is not an artifact's, keys of the same fingerprint); bad lines are
// passed to bad as by Records. With no keys, or a key with an empty
// value, it is RecordsAt. Where segments have indexes (see the package
// doc, # Indexes) it reads only the lines they name and those appended
// since; it writes the index of a segment it read whole that should
// have one, and ignores an index that does not match its segment.
func (s *Store) RecordsMatching(ctx context.Context, keys []Key, fn func(r Record, at Pos) error, bad func(*BadLineError)) error {
	for _, k := range keys {
		if k.Value == "" {
			keys = nil
			break
		}
	}
	files, err := s.openRegistry(ctx)
	if err != nil {
		return err
	}
	defer closeAll(files)
	rd := &recordReader{s: s, ctx: ctx, fn: fn, bad: bad}
	for _, rf := range files {
		if err := rd.file(rf, keys); err != nil {
			return err
		}
	}
	return nil
}

// recordReader reads records for RecordsMatching.
type recordReader struct {
	s    *Store
	ctx  context.Context
	dec  decoder
	fn   func(Record, Pos) error
	bad  func(*BadLineError)
	line []byte
}

// emit passes the record of line, line n of rf at offset off, to fn, or
// the line to bad.
func (rd *recordReader) emit(rf *regFile, line []byte, n int, off int64) error {
	var r Record
	if uerr := rd.dec.decode(line, &r); uerr != nil || r.Hash == "" {
		if rd.bad != nil {
			rd.bad(&BadLineError{Path: rf.path, Line: n, Offset: off, Err: recordError(line, uerr)})
		}
		return nil
	}
	return r.places(func(p Record) error { return rd.fn(p, Pos{Path: rf.path, Line: n, Offset: off}) })
}

// tooLong passes line n of rf at offset off, of size bytes, over
// maxLine, to bad.
func (rd *recordReader) tooLong(rf *regFile, n int, off, size int64) error {
	if rd.bad != nil {
		rd.bad(&BadLineError{Path: rf.path, Line: n, Offset: off, Err: &LineTooLongError{Size: size}})
	}
	return nil
}

// file reads the records of rf: through its index when keys are given
// and it has one, else whole, making its index if it should have one.
func (rd *recordReader) file(rf *regFile, keys []Key) error {
	var ix *index
	if keys != nil {
		ix = rd.s.loadIndex(rd.ctx, rf)
	}
	if ix != nil {
		defer ix.close()
	}
	if ix == nil || ix.stale(rf.size) {
		return rd.whole(rf, keys, nil)
	}
	lines, err := ix.lines(keys, maxLookupLines, true)
	switch {
	case errors.Is(err, errManyLines):
		return rd.whole(rf, nil, nil) // its index is kept: it is not stale
	case err != nil:
		return fmt.Errorf("registry index %s: %w", rd.s.where(indexHandle(rf.h)), err)
	}
	var passed []int64 // the offsets of the lines passed on, ascending
	for _, n := range lines {
		off, end, err := ix.span(n)
		if err != nil {
			return fmt.Errorf("registry index %s: %w", rd.s.where(indexHandle(rf.h)), err)
		}
		if off < rf.from || (off == 0 && rf.header > 0) {
			continue
		}
		// The byte before, so that a line the index names is seen to
		// start one.
		if end-off > maxLine {
			if err := rd.tooLong(rf, int(n)+1, off, end-off); err != nil {
				return err
			}
			passed = append(passed, off)
			continue
		}
		from := max(off-1, 0)
		rd.line = slices.Grow(rd.line[:0], int(end-from))[:end-from]
		if _, err := rf.f.ReadAt(rd.line, from); err != nil {
			return fmt.Errorf("read registry %s: %w", rf.path, err)
		}
		line := rd.line[off-from:]
		if (off > 0 && rd.line[0] != '\n') || bytes.IndexByte(line, '\n') != len(line)-1 {
			// Not a line of the segment: it was changed in place
			// where the index's samples did not look. The lines
			// passed on so far were each one whole line, so the
			// segment read whole, but for them, passes on each
			// record once.
			return rd.whole(rf, keys, passed)
		}
		if err := rd.emit(rf, line, int(n)+1, off); err != nil {
			return err
		}
		passed = append(passed, off)
	}
	// The lines appended since the index was made.
	tail := *rf
	if ix.covered > rf.from {
		tail.from, tail.lines = ix.covered, int(ix.nlines)
	}
	_, err = tail.scan(nil, func(line []byte, n int, off int64) error { return rd.emit(rf, line, n, off) },
		func(n int, off, size int64) error { return rd.tooLong(rf, n, off, size) })
	return err
}

// whole reads every record of rf but those of the lines at the offsets
// passed (ascending), writing rf's index when keys are given and it
// should have one.
func (rd *recordReader) whole(rf *regFile, keys []Key, passed []int64) error {
	// seen reports whether the line at off was passed on already.
	seen := func(off int64) bool {
		for len(passed) > 0 && passed[0] < off {
			passed = passed[1:]
		}
		return len(passed) > 0 && passed[0] == off
	}
	emit := func(line []byte, n int, off int64) error {
		if seen(off) {
			return nil
		}
		return rd.emit(rf, line, n, off)
	}
	tooLong := func(n int, off, size int64) error {
		if seen(off) {
			return nil
		}
		return rd.tooLong(rf, n, off, size)
	}
	if keys == nil || !indexed(rf) || rf.from > 0 {
		_, err := rf.scan(nil, emit, tooLong)
		return err
	}
	// Read whole, every line, the header too, for the index.
	var b indexBuilder
	all := *rf
	all.header = 0
	if _, err := all.scan(nil, func(line []byte, n int, off int64) error {
		b.add(line)
		if off == 0 && rf.header > 0 {
			return nil
		}
		return emit(line, n, off)
	}, func(n int, off, size int64) error {
		if err := b.addLong(rf.f, off, size); err != nil {
			return err
		}
		if off == 0 && rf.header > 0 {
			return nil
		}
		return tooLong(n, off, size)
	}); err != nil {
		return err
	}
	_ = rd.s.writeIndex(rd.ctx, &b, rf) // a cache: a store the reader may not write to has none
	return nil
}
