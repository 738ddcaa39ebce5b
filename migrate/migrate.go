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
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// DefaultThreshold is the payload size, in JSON bytes, from which a payload
// is externalized.
const DefaultThreshold = 4096

// Options configure a migration.
type Options struct {
	Store string // store directory; "" is the default of StoreFor
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
	// maxSkeleton), copied as they are.
	LongKept int    `json:"longLinesKept,omitempty"`
	Err      error  `json:"-"`
	Message  string `json:"error,omitempty"`
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

// ErrUnknownFormat is the error of a file whose format is not recognised.
var ErrUnknownFormat = errors.New("unknown transcript format")

// ErrSourceChanged is the error of a file that changed while it was being
// migrated, typically because an agent is still appending to it.
var ErrSourceChanged = errors.New("the file changed while it was migrated (is an agent still writing to it?); left untouched")

// Run migrates every input. It returns an error only when nothing could be
// done; per-file failures are in the Summary.
func Run(ctx context.Context, inputs []Input, opts Options) Summary {
	if opts.Threshold <= 0 {
		opts.Threshold = DefaultThreshold
	}
	stores := &storeSet{m: map[string]*storeEntry{}}
	results := forEach(ctx, inputs, opts.Jobs, func(in Input, wait func()) FileResult {
		return migrateFile(ctx, in, opts, stores, wait)
	})
	// Every transcript that succeeded synced its artifacts before its
	// registry records; what is left belongs to transcripts that failed.
	// Only now, with every transcript in place or failed, may gc run: each
	// Store has held the store's lock shared since its first write.
	for _, st := range stores.m {
		st.Discard()
		_ = st.Release() // the lock goes with the descriptor, whatever Close says
	}
	sum := Summary{DryRun: opts.DryRun}
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

// forEach runs fn over inputs on Workers(jobs, len(inputs)) slots and
// returns the results in input order. A slot is the right to work on a
// file's bytes, and bounds the CPU and memory a run takes; fn gives its
// slot up by calling wait once all that is left of its file is waiting
// for the disk (fsyncs and renames), so that another file takes the core
// meanwhile. With more than one slot a second worker per slot may wait
// so; with one, files go strictly one after the other, each operation of
// a run in a fixed order.
func forEach(ctx context.Context, inputs []Input, jobs int, fn func(in Input, wait func()) FileResult) []FileResult {
	jobs = Workers(jobs, len(inputs))
	workers := jobs
	if jobs > 1 {
		workers = min(2*jobs, len(inputs))
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
			results[i] = FileResult{Path: inputs[i].Path, Status: StatusFailed, Err: ctx.Err()}
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

// maxJobsPerCore bounds the workers per core, whatever --jobs asks: past
// a few per core they only wait for the disk or the network, each holding
// a line of up to LongLine bytes and a skeleton of up to maxSkeleton.
const maxJobsPerCore = 4

// Workers returns how many workers process n inputs for a --jobs of jobs:
// one per core for 0 (or less), and never more than the inputs nor
// maxJobsPerCore per core, so that a huge --jobs costs no memory.
func Workers(jobs, n int) int {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	return max(1, min(jobs, n, maxJobsPerCore*runtime.NumCPU()))
}

// largestFirst returns the order in which jobs workers should take the
// inputs: with one worker, as given; with more, the largest first, so
// that no large file is left to one worker while the others idle at the
// end of the run. Files of equal size keep their order.
func largestFirst(inputs []Input, jobs int) []int {
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
	temps     safefile.Sweeper
	summaries externalizer.Summaries
	payloads  externalizer.Payloads
}

type storeEntry struct {
	*registry.Store
	clean sync.Once

	// planned holds, for a dry run, the objects the run has met: only the
	// first meeting would write one, as Put would.
	plannedMu sync.Mutex
	planned   map[registry.Digest]bool
}

// wouldWrite reports, for a dry run, whether the run would write object
// d: the first time the run meets it, and then only if the store lacks an
// intact copy.
func (s *storeEntry) wouldWrite(d registry.Digest) bool {
	s.plannedMu.Lock()
	first := !s.planned[d]
	s.planned[d] = true
	s.plannedMu.Unlock()
	return first && s.Verify(d) != nil
}

func (s *storeSet) get(dir string) *storeEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[dir]
	if !ok {
		st = &storeEntry{Store: registry.Open(dir), planned: map[registry.Digest]bool{}}
		s.m[dir] = st
	}
	return st
}

// removeStaleTemps removes, once per run, what writers killed in an
// earlier run left in the store.
func (s *storeEntry) removeStaleTemps() {
	s.clean.Do(func() { s.RemoveStaleTemps() })
}

// PathFor returns where the artifacts of store are shown to readers of
// migrated transcripts, as migrate writes them into placeholders: the
// object's absolute path, which an agent opens with its own read tool from
// whatever its working directory, or its path under storeAs, the store's
// location as the agent sees it, when that is set.
func PathFor(store *registry.Store, storeAs string) func(registry.Digest) string {
	if storeAs == "" {
		return store.Path
	}
	// Joined as text, not cleaned: storeAs may be a URL.
	base := strings.TrimSuffix(storeAs, "/") + "/"
	return func(d registry.Digest) string {
		return base + filepath.ToSlash(registry.ObjectPath(d))
	}
}

// Dest returns where the output for in goes.
func Dest(in Input, out string) string {
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

// migrateFile migrates one file; it calls wait once the output is written
// and only the steps that make it durable and put it in place are left.
func migrateFile(ctx context.Context, in Input, opts Options, stores *storeSet, wait func()) (res FileResult) {
	res = FileResult{Path: in.Path, Status: StatusFailed}
	src, err := os.Open(in.Path)
	if err != nil {
		res.Err = err
		return res
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		res.Err = err
		return res
	}
	before := idOf(fi)
	res.BytesBefore = fi.Size()
	if !opts.DryRun {
		if err := lockSource(src); err != nil {
			res.Err = err
			return res
		}
		// The lock is on the file we opened: if another run replaced it
		// meanwhile, the lock guards nothing.
		if err := unchangedSince(in.Path, before); err != nil {
			res.Err = err
			return res
		}
	}
	dest := Dest(in, opts.Out)
	res.Dest = dest
	// An --out naming the transcript's own folder replaces it too.
	inPlace := opts.Out == "" || sameFile(dest, fi)
	state := &agentState{}
	if !opts.DryRun && inPlace {
		if state, err = lockAgentState(in.Path); err != nil {
			res.Err = fmt.Errorf("%s: %w; left untouched", in.Path, err)
			return res
		}
		defer state.release()
	}

	zst := compressed(in.Path)
	format, session, err := detect(src, zst, opts.Format)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", in.Path, err)
		if errors.Is(err, ErrUnknownFormat) && !in.Explicit {
			res.Status = StatusSkipped
		}
		return res
	}
	res.Format = format.Name()
	store := stores.get(StoreFor(opts.Store, dest))
	pathFor := PathFor(store.Store, opts.StoreAs)
	var putErr error // a failure of the store, not of the input
	put := func(a externalizer.Artifact) error {
		res.Artifacts++
		created := false
		if opts.DryRun {
			created = store.wouldWrite(a.Digest)
		} else {
			var err error
			if a.Stream != nil {
				_, created, err = store.PutStream(a.Digest, a.Stream)
			} else {
				_, created, err = store.PutSum(a.Digest, a.Data)
			}
			if err != nil {
				putErr = err
				return err
			}
		}
		if created {
			res.Written++
		} else {
			res.Deduplicated++
		}
		return nil
	}
	x := &externalizer.Externalizer{Format: format, Threshold: opts.Threshold, PathFor: pathFor, Put: put, Open: store.Open,
		Summaries: &stores.summaries, Payloads: &stores.payloads}

	var out *safefile.File
	if !opts.DryRun {
		if err := checkWritable(dest, store.Store); err != nil {
			res.Err = fmt.Errorf("%s: %w; nothing was written", in.Path, err)
			return res
		}
		removeTemps(&stores.temps, in.Path, dest, inPlace)
		store.removeStaleTemps()
		if opts.Out != "" {
			if err := safefile.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
				res.Err = err
				return res
			}
		}
		out, err = safefile.Create(dest, fi.Mode().Perm())
		if err != nil {
			res.Err = fmt.Errorf("create output for %s: %w", in.Path, err)
			return res
		}
		defer out.Abort()
		keepOwner(out.OS(), fi)
	}
	written := &countWriter{w: io.Discard}
	if out != nil {
		written.w = out
	}
	w, releaseW, err := encoder(written, zst, res.BytesBefore)
	if err != nil {
		res.Err = err
		return res
	}
	defer releaseW()
	dr, at, release, err := source(src, progressReader{src, opts.Progress}, zst)
	if err != nil {
		res.Err = fmt.Errorf("read %s: %w", in.Path, err)
		return res
	}
	defer release()
	br, releaseR := pooledReader(dr)
	defer releaseR()

	var (
		records []registry.Record
		changed bool
		now     = time.Now().UTC().Format(time.RFC3339)
		r       = transcript.NewReader(br)
		// Once per file: filepath.Abs asks the kernel for the working
		// directory each time, two system calls per reference.
		source = absPath(dest)
	)
	// Longer lines are read back through at as streams.
	r.Limit = LongLine
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.Err = fmt.Errorf("read %s: %w", in.Path, err)
			return res
		}
		var rw externalizer.Result
		if l.Long {
			var kept bool
			rw, kept, err = rewriteLong(x, w, at, &l)
			if kept {
				res.LongKept++
			}
		}
		if !l.Long {
			rw, err = x.Rewrite(l.Text, transcript.JSONStart(l))
		}
		if putErr != nil {
			res.Err = fmt.Errorf("%s: %w", in.Path, putErr)
			return res
		}
		if err != nil {
			res.Err = &transcript.InputError{Path: in.Path, Line: l.Num, Offset: l.Offset, Err: err}
			return res
		}
		text := l.Text
		if rw.Line != nil || l.Long && len(rw.Artifacts) > 0 {
			changed = true
			text = rw.Line
			for _, a := range rw.Artifacts {
				records = append(records, registry.Record{
					Hash: a.Digest.String(), Size: int64(a.Size), Media: a.Media, Site: a.Site,
					Tool: a.Tool, ToolCallID: a.ToolCallID, Session: session, Source: source,
					Entry: a.Entry, Line: l.Num, CreatedAt: now, Summary: a.Summary,
				})
			}
		}
		if _, err := w.Write(text); err != nil {
			res.Err = fmt.Errorf("write %s: %w", dest, err)
			return res
		}
		if _, err := w.Write(l.EOL); err != nil {
			res.Err = fmt.Errorf("write %s: %w", dest, err)
			return res
		}
	}
	if err := w.Close(); err != nil {
		res.Err = fmt.Errorf("write %s: %w", dest, err)
		return res
	}
	res.BytesAfter = written.n
	// The status is set only once the output is in place: a failure
	// below must leave it StatusFailed, also for an unchanged file
	// copied to --out.
	done := StatusMigrated
	if !changed {
		done = StatusUnchanged
		if inPlace || opts.DryRun {
			res.Status = done
			res.BytesAfter = res.BytesBefore
			return res
		}
	}
	if opts.DryRun {
		res.Status = done
		return res
	}
	wait()
	if err := store.Append(records); err != nil {
		res.Err = fmt.Errorf("%s: %w", in.Path, err)
		return res
	}
	if err := unchangedSince(in.Path, before); err != nil {
		res.Err = err
		return res
	}
	bak := ""
	if opts.Backup && inPlace {
		if bak, err = backup(in.Path, fi); err != nil {
			res.Err = err
			return res
		}
	}
	if err := state.reset(ctx); err != nil {
		if bak != "" {
			_ = os.Remove(bak)
		}
		res.Err = fmt.Errorf("%s: %w; left untouched", in.Path, err)
		return res
	}
	if err := out.CommitNoDirSync(); err != nil {
		if bak != "" {
			// The original is still in place: the backup would only
			// block the next run.
			_ = os.Remove(bak)
		}
		res.Err = fmt.Errorf("replace %s: %w", dest, err)
		return res
	}
	// From here the migrated transcript is in place and the backup, if
	// any, is the only copy of the original's bytes: it stays, whatever
	// happens.
	if err := safefile.SyncDir(filepath.Dir(dest)); err != nil {
		res.Err = fmt.Errorf("replace %s: %w", dest, err)
		return res
	}
	res.Status = done
	return res
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// detect reads the first entries of src to find its format and session id,
// then rewinds src.
func detect(src *os.File, zst bool, name string) (externalizer.Format, string, error) {
	defer src.Seek(0, io.SeekStart)
	var format externalizer.Format
	if name != "" {
		f, ok := externalizer.Lookup(name)
		if !ok {
			return nil, "", fmt.Errorf("%w %q", ErrUnknownFormat, name)
		}
		format = f
	}
	session := ""
	dr, release, err := decoded(src, zst)
	if err != nil {
		return nil, "", err
	}
	defer release()
	br, releaseR := pooledReader(io.LimitReader(dr, detectBytes))
	defer releaseR()
	r := transcript.NewReader(br)
	for n := 0; n < detectLines; n++ {
		l, err := r.Next()
		if err != nil {
			break
		}
		v, err := transcript.Parse(l.Text, transcript.JSONStart(l))
		if err != nil || v.Kind() != transcript.Object {
			continue
		}
		if format == nil {
			format, _ = externalizer.Detect(v)
		}
		if format != nil && session == "" {
			session = format.Session(v)
		}
		if format != nil && session != "" {
			break
		}
	}
	if format == nil {
		return nil, "", ErrUnknownFormat
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	return format, session, nil
}

// Detection looks at most at the first detectLines lines within the first
// detectBytes bytes, so that a huge first entry is not read twice.
const (
	detectLines = 16
	detectBytes = 4 << 20
)

func unchangedSince(path string, before fileID) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if idOf(fi) != before {
		return fmt.Errorf("%s: %w", path, ErrSourceChanged)
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
func checkWritable(dest string, store *registry.Store) error {
	for _, p := range []string{
		filepath.Dir(dest),
		store.Dir(),
		filepath.Join(store.Dir(), registry.ObjectsDir),
		filepath.Join(store.Dir(), registry.SegmentsDir),
	} {
		if err := safefile.Writable(p); err != nil {
			return err
		}
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

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// LongLine is the length from which migrate streams a line instead of
// holding it: such a line is rewritten from its skeleton (see
// transcript.BuildSkeleton) and its payloads are read back from the file
// (for a compressed transcript, from a spool: see source), so that memory
// does not grow with the line.
const LongLine = 4 << 20

// maxSkeleton bounds a long line's skeleton. A line whose skeleton would
// be larger (megabytes of numbers or of short strings) is copied as it is.
const maxSkeleton = 16 << 20

// SkeletonOptions are the options of the skeletons migrate builds of long
// lines for payloads of threshold bytes: strings of 16 KiB or more are cut
// to stubs as long as the threshold (a stub must be at least that long:
// see transcript.SkeletonOptions), so that sites and their sizes come out
// of them as out of the whole line.
func SkeletonOptions(threshold int) transcript.SkeletonOptions {
	stub := max(threshold, 256)
	return transcript.SkeletonOptions{Long: max(16<<10, stub), StubLen: stub, Max: maxSkeleton}
}

// rewriteLong rewrites the long line l, whose bytes src reads back at
// their offsets in the transcript, into w. A line that cannot be
// rewritten from its skeleton (it carries a marker) is read whole into
// l.Text, l.Long cleared, for the caller to rewrite. kept reports a line
// copied as it is because even its skeleton is too large.
func rewriteLong(x *externalizer.Externalizer, w io.Writer, src io.ReaderAt, l *transcript.Line) (res externalizer.Result, kept bool, err error) {
	line := io.NewSectionReader(src, l.Offset, l.Len)
	sk, err := transcript.BuildSkeleton(line, SkeletonOptions(x.Threshold))
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
