package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/transcript-tool/transcript-tool/internal/count"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/session"
)

// job is the rewriting of one transcript, by migrate or by rehydrate:
// the steps around the line loop that keep the guarantees of the package
// doc (locks, a temporary output beside dest, the commit only if the
// source is unchanged), so that both keep them alike. run takes the
// steps in turn; each leaves in the job what the next ones need.
type job struct {
	in   session.Input
	dest string
	// replace is true when dest is the transcript itself; an --out that
	// names the transcript's own folder is found to replace it too.
	replace bool
	// dryRun reads and counts only: nothing is locked, written or
	// committed.
	dryRun bool
	// guard locks the transcript, and checks it unchanged before the
	// commit, also when the output goes elsewhere: migrate vouches for
	// the registry records it appends, rehydrate only for what it
	// replaces.
	guard bool
	// backup keeps the original as in.Path+".bak" before replacing it.
	backup bool
	// noLarger compresses a compressed output harder when it would be
	// larger than the original (see encoder).
	noLarger bool
	progress Progress
	temps    *safefile.Sweeper // of the directories written to
	// dirs makes the renames of the run's files durable, one fsync of a
	// directory for the files committed into it meanwhile.
	dirs *safefile.DirSyncer
	// work is what the job does to the lines: migrate's or rehydrate's.
	work rewriter

	// What the steps found and took, for the steps after them.
	res     *FileResult
	src     *os.File    // the transcript, open
	fi      os.FileInfo // of src
	before  fileID      // src's version when it was opened
	zst     bool        // src is compressed, and so is the output
	inPlace bool        // dest is the transcript
	state   *session.AgentState
	out     *safefile.File // the temporary output; nil in a dry run
	written *count.Writer  // the output's bytes, counted
	reread  bool           // a long line was read back from the transcript
}

// rewriter is what a job does to the lines of a transcript.
type rewriter interface {
	// prepare runs with the transcript locked, before any output is
	// made: it may refuse the transcript. src is read from its start
	// after it.
	prepare(ctx context.Context, src *os.File, inPlace bool) error
	// lines writes the output's lines to w, reading the transcript's
	// from r, and its long lines back from at (see session.Source).
	// reread reports a long line read back, which must not have changed
	// meanwhile.
	lines(r io.Reader, at io.ReaderAt, w io.Writer) (reread bool, err error)
	// done runs once the output is complete, of written bytes: commit
	// false ends the job there, nothing replaced (a dry run ends there).
	done(ctx context.Context, written int64) (commit bool, err error)
}

// run does the job, with the sizes of the transcript and of its output
// in res. The output is in place when it returns nil, unless the work's
// done said not to commit it.
func (j *job) run(ctx context.Context, res *FileResult) error {
	j.res = res
	defer j.release()
	if err := j.open(); err != nil {
		return err
	}
	if err := j.work.prepare(ctx, j.src, j.inPlace); err != nil {
		return err
	}
	if err := j.create(); err != nil {
		return err
	}
	if err := j.rewrite(); err != nil {
		return err
	}
	if commit, err := j.work.done(ctx, j.written.N); err != nil || !commit {
		return err
	}
	return j.commit(ctx)
}

// release closes what the steps opened and gives back the locks they
// took, the last taken first; an output not committed is removed.
func (j *job) release() {
	if j.out != nil {
		j.out.Abort()
	}
	if j.state != nil {
		j.state.Release()
	}
	if j.src != nil {
		j.src.Close()
	}
}

// open opens the transcript and, unless the job only reads, locks it
// and, in place, the state its agent keeps about it.
func (j *job) open() error {
	path := j.in.Path
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	j.src = src
	if j.fi, err = src.Stat(); err != nil {
		return err
	}
	j.before = idOf(j.fi)
	j.zst = session.Compressed(path)
	j.res.BytesBefore = j.fi.Size()
	j.inPlace = j.replace || sameFile(j.dest, j.fi)
	if j.inPlace {
		// Replacing the file under one name would split it in two: the
		// other names would keep the old bytes.
		if n := otherLinks(path, j.fi); n > 0 {
			return fmt.Errorf("%s has %s (hard links), which would keep the old bytes if it were replaced in place; left untouched (write the output elsewhere with --out DIR, or remove the other names)",
				path, display.Plural(n, "other name"))
		}
	}
	// Without a lock, an AgentState whose methods do nothing.
	j.state = &session.AgentState{}
	if j.dryRun {
		return nil
	}
	if j.guard || j.inPlace {
		if err := session.Lock(src); err != nil {
			return err
		}
		// The lock is on the file we opened: if another run replaced it
		// meanwhile, the lock guards nothing.
		if err := unchangedSince(path, j.before); err != nil {
			return err
		}
	}
	if j.inPlace {
		if j.state, err = session.LockAgentState(path); err != nil {
			return fmt.Errorf("%s: %w; left untouched", j.in.Name(), err)
		}
	}
	return nil
}

// create makes the temporary output beside dest, with the transcript's
// mode and owner, removing those that killed runs left there; a dry run
// counts the output's bytes only.
func (j *job) create() error {
	j.written = &count.Writer{W: io.Discard}
	if j.dryRun {
		return nil
	}
	removeTemps(j.temps, j.in.Path, j.dest, j.inPlace)
	if err := safefile.MkdirAll(filepath.Dir(j.dest), 0o700); err != nil {
		return err
	}
	out, err := safefile.Create(j.dest, j.fi.Mode().Perm())
	if err != nil {
		return fmt.Errorf("create output for %s: %w", j.in.Name(), err)
	}
	j.out = out
	keepOwner(out.OS(), j.fi)
	j.written.W = out
	return nil
}

// rewrite writes the output of the work's lines, decompressing the
// transcript and compressing the output as its name says.
func (j *job) rewrite() error {
	atMost := int64(0) // the default level
	if j.noLarger {
		atMost = j.fi.Size()
	}
	w, releaseW, err := encoder(j.written, j.zst, atMost)
	if err != nil {
		return err
	}
	releaseW = sync.OnceFunc(releaseW)
	defer releaseW()
	dr, at, release, err := session.Source(j.src, progressReader{j.src, j.progress}, j.zst)
	if err != nil {
		return fmt.Errorf("read %s: %w", j.in.Name(), err)
	}
	release = sync.OnceFunc(release)
	defer release()
	if j.reread, err = j.work.lines(dr, at, w); err != nil {
		return err
	}
	// The source's decoder holds a share of the run's budget of zstd
	// windows, which recompressing the output (see encoder) takes from.
	release()
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", j.dest, err)
	}
	// A file that waits for fsyncs from here holds no buffer.
	releaseW()
	return nil
}

// commit puts the complete output in place if the transcript has not
// changed: in place, after a backup if asked for, the state its agent
// keeps reset, and with what agents appended meanwhile carried over.
func (j *job) commit(ctx context.Context) error {
	path, dest := j.in.Path, j.dest
	// In place, an agent may have appended meanwhile; and a long line
	// read back from the file was read more than once.
	if j.guard || j.inPlace || j.reread {
		if err := unchangedSince(path, j.before); err != nil {
			return err
		}
	}
	bak := ""
	if j.backup && j.inPlace {
		var err error
		if bak, err = backup(path, j.fi); err != nil {
			return err
		}
	}
	// Until the rename, the original is in place: the backup would only
	// block the next run.
	dropBackup := func() {
		if bak != "" {
			_ = os.Remove(bak)
		}
	}
	if err := j.state.Reset(ctx); err != nil {
		dropBackup()
		return fmt.Errorf("%s: %w; left untouched", j.in.Name(), err)
	}
	// The state stays reset, its lock held, until the bytes agents
	// appended meanwhile are carried over too.
	var rp *replacement
	if j.inPlace {
		var err error
		if rp, err = replace(path, j.src, j.fi, j.before, j.out, j.written.N, j.zst, j.dirs); err != nil {
			dropBackup()
			return err
		}
		defer rp.close()
	}
	if err := j.out.CommitNoDirSync(); err != nil {
		dropBackup()
		return fmt.Errorf("replace %s: %w", dest, err)
	}
	// From here the output is in place and the backup, if any, is the
	// only copy of the original's bytes: it stays, whatever happens.
	err := j.dirs.Sync(filepath.Dir(dest))
	if err != nil {
		err = fmt.Errorf("replace %s: %w", dest, err)
	}
	if rp != nil {
		var cerr error
		j.res.Carried, cerr = rp.settle()
		err = errors.Join(err, cerr)
	}
	if err == nil {
		j.res.BytesAfter = j.written.N
	}
	return err
}
