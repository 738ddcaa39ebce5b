package migrate

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Options configure a migration.
type Options struct {
	Store string // store directory; "" is the default of session.StoreFor
	// StoreAs is the store's location as the agents that read the
	// migrated transcripts will see it (a container mount, another
	// machine); "" is the store's own absolute path.
	StoreAs   string
	Threshold int
	Out       string // output directory; "" rewrites in place
	DryRun    bool
	Backup    bool
	Format    string // "" detects the format per file
	Jobs      int    // 0 uses every core
	Progress  Progress
	// OpenStore opens the backend of a store: the command line's
	// location.Open; tests wrap backends in fault injectors with it.
	OpenStore store.OpenFunc `json:"-"`
	// Shard is the share of the inputs this run was given (--shard K/N):
	// the registry segments it writes name it.
	Shard registry.Shard
	// Done, when set, is called for each file migrated or unchanged once
	// its output is in place, before the run gives up the store's lock:
	// a caller that copies an --out output elsewhere (a prefix in a
	// bucket) does it there, while the artifacts it refers to are still
	// held. An error fails the file.
	Done func(res *FileResult) error `json:"-"`
}

// Progress receives the number of input bytes processed.
type Progress interface {
	Add(n int64)
}

// Status is what happened to one file.
type Status string

// The statuses of a FileResult.
const (
	StatusMigrated  Status = "migrated"
	StatusUnchanged Status = "unchanged" // nothing to externalize, or done before
	StatusSkipped   Status = "skipped"   // unknown format, found while walking
	StatusFailed    Status = "failed"
	StatusRestored  Status = "restored" // written back in its original form
)

// FileResult reports one file.
type FileResult struct {
	Path         string `json:"path"`
	Dest         string `json:"dest,omitempty"`
	Format       string `json:"format,omitempty"`
	Status       Status `json:"status"`
	BytesBefore  int64  `json:"bytesBefore"`
	BytesAfter   int64  `json:"bytesAfter"`
	Artifacts    int    `json:"artifacts"`
	Written      int    `json:"written"`
	Deduplicated int    `json:"deduplicated"`
	// LongKept counts lines too large to rewrite in bounded memory (see
	// session.SkeletonOptions), copied as they are.
	LongKept int `json:"longLinesKept,omitempty"`
	// Carried counts the bytes an agent appended to the transcript as it
	// was replaced in place, into the file replaced, which were carried
	// into the new one (after BytesAfter).
	Carried int64  `json:"carried,omitempty"`
	Err     error  `json:"-"`
	Message string `json:"error,omitempty"`
}

// Summary totals a run.
type Summary struct {
	Files        int          `json:"files"`
	Migrated     int          `json:"migrated"`
	Unchanged    int          `json:"unchanged"`
	Skipped      int          `json:"skipped"`
	Failed       int          `json:"failed"`
	BytesBefore  int64        `json:"bytesBefore"`
	BytesAfter   int64        `json:"bytesAfter"`
	Artifacts    int          `json:"artifacts"`
	Written      int          `json:"written"`
	Deduplicated int          `json:"deduplicated"`
	DryRun       bool         `json:"dryRun"`
	Results      []FileResult `json:"results"`
}

func (s *Summary) add(r FileResult) {
	s.Files++
	switch r.Status {
	case StatusMigrated, StatusRestored:
		s.Migrated++
	case StatusUnchanged:
		s.Unchanged++
	case StatusSkipped:
		s.Skipped++
	case StatusFailed:
		s.Failed++
	}
	s.BytesBefore += r.BytesBefore
	s.BytesAfter += r.BytesAfter
	s.Artifacts += r.Artifacts
	s.Written += r.Written
	s.Deduplicated += r.Deduplicated
	s.Results = append(s.Results, r)
}

// Run migrates every input. It returns an error only when nothing could be
// done; per-file failures are in the Summary.
func Run(ctx context.Context, inputs []session.Input, opts Options) Summary {
	if opts.Threshold <= 0 {
		opts.Threshold = externalizer.DefaultThreshold
	}
	stores := &storeSet{m: map[string]*storeEntry{}, open: opts.OpenStore, shard: opts.Shard}
	replaces := opts.Out == "" && !opts.DryRun
	copies := newCopies(opts.Jobs, len(inputs))
	results := forEach(ctx, inputs, opts.Jobs, func(in session.Input, wait func()) FileResult {
		res := copies.on(ctx, in, replaces, opts.Backup, func(in session.Input) FileResult {
			return migrateFile(ctx, in, opts, stores, wait)
		})
		if opts.Done != nil && (res.Status == StatusMigrated || res.Status == StatusUnchanged) {
			if err := opts.Done(&res); err != nil {
				res.Status, res.Err = StatusFailed, err
			}
		}
		return res
	})
	// Every transcript that succeeded synced its artifacts before its
	// registry records; what is left belongs to transcripts that failed.
	// Only now, with every transcript in place or failed, may gc run: each
	// Store has held the store's lock shared since its first write.
	for _, st := range stores.m {
		st.Discard()
		_ = st.Release() // the lock goes with the descriptor, whatever Close says
	}
	sum := Summary{DryRun: opts.DryRun, Results: []FileResult{}}
	for _, r := range results {
		if r.Status == StatusFailed || r.Status == StatusSkipped {
			// Left as it was: no savings and no artifacts to report,
			// whatever was stored before the failure (discarded above, or
			// orphans for gc).
			r.BytesAfter = r.BytesBefore
			r.Artifacts, r.Written, r.Deduplicated = 0, 0, 0
		}
		sum.add(r)
	}
	return sum
}

// forEach runs fn over inputs on session.Workers(jobs, len(inputs))
// slots and returns the results in input order. A slot is the right to
// work on a file's bytes, and bounds the CPU and memory a run takes; fn
// gives its slot up by calling wait once all that is left of its file is
// waiting for the disk (fsyncs and renames), so that another file takes
// the core meanwhile. With more than one slot, workersPerSlot workers a
// slot may wait so; with one, files go strictly one after the other, each
// operation of a run in a fixed order.
//
// Four workers a slot keep both cores busy while files wait: on a folder
// of 8,000 small sessions migrate --jobs 2 took a median 8.7 s with four,
// 11.8 with two, and 7.8 with eight, which on the bench's 1 GB corpus
// peaked 5 MB higher (a waiting file holds no buffer, but its tables).
const workersPerSlot = 4

func forEach(ctx context.Context, inputs []session.Input, jobs int, fn func(in session.Input, wait func()) FileResult) []FileResult {
	jobs = session.Workers(jobs, len(inputs))
	workers := jobs
	if jobs > 1 {
		workers = min(workersPerSlot*jobs, len(inputs))
	}
	slots := make(chan struct{}, jobs)
	results := make([]FileResult, len(inputs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				slots <- struct{}{}
				held := true
				wait := func() {
					if held {
						held = false
						<-slots
					}
				}
				results[i] = fn(inputs[i], wait)
				wait()
			}
		}()
	}
	for _, i := range largestFirst(inputs, jobs) {
		if ctx.Err() != nil {
			results[i] = FileResult{Path: inputs[i].Name(), Status: StatusFailed, Err: ctx.Err()}
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range results {
		if results[i].Err != nil {
			results[i].Message = results[i].Err.Error()
		}
	}
	return results
}

// copies bounds the local copies of remote inputs (session.Remote) a run
// holds at once: one a slot, and one more being fetched, so that local
// disk holds about --jobs transcripts whatever the number of inputs,
// while files waiting for the disk give their slot to others.
type copies chan struct{}

func newCopies(jobs, inputs int) copies {
	return make(copies, session.Workers(jobs, inputs)+1)
}

// on runs do on in, and for a remote input, on its local copy: fetched
// when a worker takes it, unless it is to be replaced and its owner holds
// it (session.Guarded); put back in the original's place once do
// rewrote it in place (replaces), if the original is still what was
// fetched; and removed after. The result names the input as people and
// registry records do (Input.Name).
func (c copies) on(ctx context.Context, in session.Input, replaces, backup bool, do func(session.Input) FileResult) FileResult {
	if in.Remote == nil {
		return do(in)
	}
	name := in.Name()
	select {
	case c <- struct{}{}:
	case <-ctx.Done():
		return FileResult{Path: name, Status: StatusFailed, Err: ctx.Err()}
	}
	defer func() { <-c }()
	if g, ok := in.Remote.(session.Guarded); ok && replaces {
		if err := g.Writable(ctx); err != nil {
			return FileResult{Path: name, Status: StatusFailed, Err: err}
		}
	}
	defer os.Remove(in.Path)
	size, err := in.Remote.Fetch(ctx, in.Path)
	if err != nil {
		return FileResult{Path: name, Status: StatusFailed, Err: err}
	}
	in.Size = size
	res := do(in)
	res.Path = name
	if res.Dest != in.Path {
		return res // written under --out: the original stays as it is
	}
	res.Dest = name
	if replaces && (res.Status == StatusMigrated || res.Status == StatusRestored) {
		if err := in.Remote.Replace(ctx, in.Path, backup); err != nil {
			res.Status, res.Err = StatusFailed, err
		}
	}
	return res
}

// largestFirst returns the order in which jobs workers should take the
// inputs: with one worker, as given; with more, the largest first, so
// that no large file is left to one worker while the others idle at the
// end of the run. Files of equal size keep their order.
func largestFirst(inputs []session.Input, jobs int) []int {
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	if jobs > 1 {
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(inputs[b].Size, inputs[a].Size)
		})
	}
	return order
}

// storeSet shares between the workers of a run one Store per directory,
// the Sweeper that finds the temporary files killed runs left with one
// listing per directory, the summaries of the artifacts described and
// what the payloads met became.
type storeSet struct {
	mu        sync.Mutex
	m         map[string]*storeEntry
	open      store.OpenFunc
	shard     registry.Shard
	temps     safefile.Sweeper
	dirs      safefile.DirSyncer
	summaries summary.Cache
	payloads  externalizer.Payloads
}

type storeEntry struct {
	*registry.Store
	clean sync.Once
}

func (s *storeSet) get(dir string) (*storeEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[dir]
	if !ok {
		b, err := s.open.Open(dir)
		if err != nil {
			return nil, err
		}
		st = &storeEntry{Store: registry.New(b)}
		st.SetShard(s.shard)
		s.m[dir] = st
	}
	return st, nil
}

// removeStaleTemps removes, once per run, what writers killed in an
// earlier run left in the store.
func (s *storeEntry) removeStaleTemps() {
	s.clean.Do(func() { s.RemoveStaleTemps() })
}

// Dest returns where the output for in goes.
func Dest(in session.Input, out string) string {
	if out == "" {
		return in.Path
	}
	return filepath.Join(out, in.Rel)
}

// fileID identifies a file's content version cheaply.
type fileID struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
	}
	return id
}

// migrateFile migrates one transcript: a job whose work is a migration.
// It calls wait once the output is written and only the steps that make
// it durable and put it in place are left.
func migrateFile(ctx context.Context, in session.Input, opts Options, stores *storeSet, wait func()) FileResult {
	res := FileResult{Path: in.Path, Status: StatusFailed}
	dest := Dest(in, opts.Out)
	res.Dest = dest
	m := &migration{in: in, opts: opts, stores: stores, wait: wait, res: &res, dest: dest, name: in.Name()}
	// Once per file: resolving a path asks the kernel for the working
	// directory and each folder's links, several system calls.
	m.source = registry.SourcePath(dest)
	if in.Remote != nil && dest == in.Path {
		m.source = m.name // the transcript itself, not its local copy
	}
	j := &job{in: in, dest: dest, replace: opts.Out == "", dryRun: opts.DryRun, guard: true, backup: opts.Backup && in.Remote == nil, noLarger: true,
		progress: opts.Progress, temps: &stores.temps, dirs: &stores.dirs, work: m}
	if err := j.run(ctx, &res); err != nil {
		res.Err = err
		return res
	}
	// The status is set only once the output is in place: a failure
	// before must leave it StatusFailed, also for an unchanged file
	// copied to --out.
	res.Status = m.status
	return res
}

// migration is the work of a job that migrates a transcript: its line
// loop externalizes payloads and collects the registry records that the
// commit appends.
type migration struct {
	in     session.Input
	opts   Options
	stores *storeSet
	wait   func()
	res    *FileResult
	dest   string
	name   string // the transcript's, for messages
	source string // the transcript's, for its records

	// Set by prepare.
	sessionID string
	st        *storeEntry
	x         *externalizer.Externalizer
	inPlace   bool

	// Set by lines and put.
	putErr  error // a failure of the store, not of the input
	records []registry.Record
	changed bool

	status Status // set by done
}

// prepare detects the transcript's format and opens its store.
func (m *migration) prepare(ctx context.Context, src *os.File, inPlace bool) error {
	m.inPlace = inPlace
	format, id, err := session.Detect(src, session.Compressed(m.in.Path), m.opts.Format)
	if err != nil {
		if errors.Is(err, session.ErrUnknownFormat) && !m.in.Explicit {
			m.res.Status = StatusSkipped
		}
		return fmt.Errorf("%s: %w", m.name, err)
	}
	m.res.Format, m.sessionID = format.Name(), id
	m.st, err = m.stores.get(session.StoreFor(cmp.Or(m.opts.Store, m.in.Store), m.dest))
	if err != nil {
		return fmt.Errorf("%s: %w", m.name, err)
	}
	pathFor := session.PathFor(m.st.Store, m.opts.StoreAs)
	put := func(a externalizer.Artifact) error { return m.put(ctx, a) }
	m.x = &externalizer.Externalizer{Format: format, Threshold: m.opts.Threshold, PathFor: pathFor, Put: put, Open: m.st.Opener(ctx),
		Summaries: &m.stores.summaries, Payloads: &m.stores.payloads}
	if m.opts.DryRun {
		return nil
	}
	if err := checkWritable(m.dest, m.st.Store); err != nil {
		return fmt.Errorf("%s: %w; nothing was written", m.name, err)
	}
	m.st.removeStaleTemps()
	return nil
}

// put stores artifact a, or in a dry run finds whether it would be
// written, and counts it.
func (m *migration) put(ctx context.Context, a externalizer.Artifact) error {
	m.res.Artifacts++
	created := false
	if m.opts.DryRun {
		_, created = m.st.Plan(ctx, a.Digest)
	} else {
		var err error
		if a.Stream != nil {
			_, created, err = m.st.PutStream(ctx, a.Digest, a.Stream)
		} else {
			_, created, err = m.st.PutSum(ctx, a.Digest, a.Data)
		}
		if err != nil {
			m.putErr = err
			return err
		}
	}
	if created {
		m.res.Written++
	} else {
		m.res.Deduplicated++
	}
	return nil
}

// lines externalizes the payloads of each line and records where each
// artifact came from.
func (m *migration) lines(dr io.Reader, at io.ReaderAt, w io.Writer) (reread bool, err error) {
	now := time.Now().UTC().Format(time.RFC3339)
	r := transcript.NewReader(dr)
	defer r.Release()
	// Longer lines are read back through at as streams.
	r.Limit = session.LongLine
	for {
		l, err := r.Next()
		if err == io.EOF {
			return reread, nil
		}
		if err != nil {
			return reread, fmt.Errorf("read %s: %w", m.name, err)
		}
		var rw externalizer.Result
		if l.Long {
			reread = true
			var kept bool
			rw, kept, err = rewriteLong(m.x, w, at, &l)
			if kept {
				m.res.LongKept++
			}
		}
		if !l.Long {
			rw, err = m.x.Rewrite(l.Text, transcript.JSONStart(l))
		}
		if m.putErr != nil {
			return reread, fmt.Errorf("%s: %w", m.name, m.putErr)
		}
		if err != nil {
			return reread, &transcript.InputError{Path: m.name, Line: l.Num, Offset: l.Offset, Err: err}
		}
		text := l.Text
		if rw.Line != nil || l.Long && len(rw.Artifacts) > 0 {
			m.changed = true
			text = rw.Line
			for _, a := range rw.Artifacts {
				m.records = append(m.records, registry.Record{
					Hash: a.Digest.String(), Size: int64(a.Size), Media: a.Media, Site: a.Site,
					Tool: a.Tool, ToolCallID: a.ToolCallID, Session: m.sessionID, Source: m.source,
					Entry: a.Entry, Line: l.Num, CreatedAt: now, Summary: a.Summary,
				})
			}
		}
		if _, err := w.Write(text); err != nil {
			return reread, fmt.Errorf("write %s: %w", m.dest, err)
		}
		if _, err := w.Write(l.EOL); err != nil {
			return reread, fmt.Errorf("write %s: %w", m.dest, err)
		}
	}
}

// done decides whether the output is committed: not an unchanged
// transcript in place, nothing in a dry run. Before a commit it waits its
// turn (see migrateFile) and appends the records to the registry.
func (m *migration) done(ctx context.Context, written int64) (commit bool, err error) {
	m.res.BytesAfter = written
	m.status = StatusMigrated
	if !m.changed {
		m.status = StatusUnchanged
		if m.inPlace || m.opts.DryRun {
			m.res.BytesAfter = m.res.BytesBefore
			return false, nil
		}
	}
	if m.opts.DryRun {
		return false, nil
	}
	m.wait()
	if err := m.st.Append(ctx, m.records); err != nil {
		return false, fmt.Errorf("%s: %w", m.name, err)
	}
	return true, nil
}

func unchangedSince(path string, before fileID) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if idOf(fi) != before {
		return fmt.Errorf("%s: %w", path, session.ErrSourceChanged)
	}
	return nil
}

// backup keeps the original as path.bak by a hard link, or a copy where
// links are not supported, and returns the backup's name. An existing
// backup is never overwritten; one that holds the bytes of the original
// (what a run killed before its rename leaves) is kept and used.
func backup(path string, orig os.FileInfo) (string, error) {
	bak := path + ".bak"
	if fi, err := os.Lstat(bak); err == nil {
		if same, err := sameContent(path, orig, bak, fi); err != nil || !same {
			return "", fmt.Errorf("backup %s already exists; move it away or run without --backup", bak)
		}
		// Perhaps not durable yet, if the run that made it was killed.
		return bak, safefile.SyncDir(filepath.Dir(bak))
	}
	if err := safefile.Link(path, bak); err != nil {
		return bak, copyFile(path, bak)
	}
	if err := safefile.SyncDir(filepath.Dir(bak)); err != nil {
		_ = os.Remove(bak) // the link is ours; left, it would block the next run
		return "", err
	}
	return bak, nil
}

// otherLinks returns how many names the file fi describes has besides
// path, a backup left by a killed run (path.bak, a link) not counted.
func otherLinks(path string, fi os.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return 0
	}
	n := int64(st.Nlink) - 1
	if bfi, err := os.Lstat(path + ".bak"); err == nil && os.SameFile(fi, bfi) {
		n--
	}
	return n
}

// sameContent reports whether the regular file bak, described by bfi, is
// the file path (a hard link) or holds the same bytes.
func sameContent(path string, pfi os.FileInfo, bak string, bfi os.FileInfo) (bool, error) {
	if os.SameFile(pfi, bfi) {
		return true, nil
	}
	if !bfi.Mode().IsRegular() || bfi.Size() != pfi.Size() {
		return false, nil
	}
	a, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer a.Close()
	b, err := os.Open(bak)
	if err != nil {
		return false, err
	}
	defer b.Close()
	ha, hb := sha256.New(), sha256.New()
	if _, err := io.Copy(ha, a); err != nil {
		return false, err
	}
	if _, err := io.Copy(hb, b); err != nil {
		return false, err
	}
	return bytes.Equal(ha.Sum(nil), hb.Sum(nil)), nil
}

// checkWritable refuses, before anything is written, a transcript whose
// output directory or store this process cannot write: otherwise artifacts
// could be written for a transcript that cannot be replaced, or a long
// transcript read before the first artifact fails.
func checkWritable(dest string, st *registry.Store) error {
	if err := safefile.Writable(filepath.Dir(dest)); err != nil {
		return err
	}
	if w, ok := store.As[interface{ Writable() error }](st.Backend()); ok {
		return w.Writable()
	}
	return nil
}

// removeTemps deletes the temporary files that a run killed before its
// rename left beside dest (and beside the backup of an in-place
// migration). In place, the caller holds the transcript's lock, which
// every writer of those files takes, so they are all leftovers; beside an
// --out destination only old ones are taken for leftovers.
func removeTemps(temps *safefile.Sweeper, path, dest string, inPlace bool) {
	_, _ = temps.Remove(dest, inPlace)
	if inPlace {
		_, _ = temps.Remove(path+".bak", true)
	}
}

// keepOwner gives a file written by root the owner of the transcript it
// replaces, so that the agent can still read it; other users cannot
// change owners, and their files keep theirs.
func keepOwner(f *os.File, src os.FileInfo) {
	st, ok := src.Sys().(*syscall.Stat_t)
	if ok && os.Geteuid() == 0 {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// copyFile atomically copies src to dst, keeping its mode.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := safefile.Create(dst, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer out.Abort()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return out.Commit()
}

// rewriteLong rewrites the long line l, whose bytes src reads back at
// their offsets in the transcript, into w. A line that cannot be
// rewritten from its skeleton (it carries a marker) is read whole into
// l.Text, l.Long cleared, for the caller to rewrite. kept reports a line
// copied as it is because even its skeleton is too large.
func rewriteLong(x *externalizer.Externalizer, w io.Writer, src io.ReaderAt, l *transcript.Line) (res externalizer.Result, kept bool, err error) {
	line := io.NewSectionReader(src, l.Offset, l.Len)
	sk, err := transcript.BuildSkeleton(line, session.SkeletonOptions(x.Threshold))
	if errors.Is(err, transcript.ErrSkeletonTooLarge) {
		_, err := io.Copy(w, io.NewSectionReader(src, l.Offset, l.Len))
		return externalizer.Result{}, true, err
	}
	if err != nil {
		return externalizer.Result{}, false, err
	}
	start := 0
	if l.Num == 1 && bytes.HasPrefix(sk.Text, transcript.BOM) {
		start = len(transcript.BOM)
	}
	res, err = x.RewriteBig(w, &externalizer.BigLine{Skeleton: sk, Src: line}, start)
	if errors.Is(err, externalizer.ErrNeedWhole) {
		text := make([]byte, l.Len)
		if _, err := line.ReadAt(text, 0); err != nil {
			return externalizer.Result{}, false, err
		}
		l.Text, l.Long = text, false
		return externalizer.Result{}, false, nil
	}
	return res, false, err
}
