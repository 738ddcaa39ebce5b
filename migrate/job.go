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
// source is unchanged), so that both keep them alike.
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

	// prepare runs with the transcript locked, before any output is made:
	// it may refuse the transcript. src is read from its start after it.
	prepare func(src *os.File, inPlace bool) error
	// lines writes the output's lines to w, reading the transcript's from
	// r, and its long lines back from at (see session.Source). reread
	// reports a long line read back, which must not have changed
	// meanwhile.
	lines func(r io.Reader, at io.ReaderAt, w io.Writer) (reread bool, err error)
	// done runs once the output is complete, of written bytes: commit
	// false ends the job there, nothing replaced (a dry run ends there).
	done func(written int64) (commit bool, err error)
}

// run does the job, with the sizes of the transcript and of its output
// in res. The output is in place when it returns nil, unless done said
// not to commit it.
func (j *job) run(ctx context.Context, res *FileResult) error {
	path, dest, name := j.in.Path, j.dest, j.in.Name()
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	before := idOf(fi)
	res.BytesBefore = fi.Size()
	inPlace := j.replace || sameFile(dest, fi)
	if inPlace {
		// Replacing the file under one name would split it in two: the
		// other names would keep the old bytes.
		if n := otherLinks(path, fi); n > 0 {
			return fmt.Errorf("%s has %s (hard links), which would keep the old bytes if it were replaced in place; left untouched (write the output elsewhere with --out DIR, or remove the other names)",
				path, display.Plural(n, "other name"))
		}
	}
	write := !j.dryRun
	if write && (j.guard || inPlace) {
		if err := session.Lock(src); err != nil {
			return err
		}
		// The lock is on the file we opened: if another run replaced it
		// meanwhile, the lock guards nothing.
		if err := unchangedSince(path, before); err != nil {
			return err
		}
	}
	state := &session.AgentState{}
	if write && inPlace {
		if state, err = session.LockAgentState(path); err != nil {
			return fmt.Errorf("%s: %w; left untouched", name, err)
		}
		defer state.Release()
	}
	if j.prepare != nil {
		if err := j.prepare(src, inPlace); err != nil {
			return err
		}
	}

	var out *safefile.File
	if write {
		removeTemps(j.temps, path, dest, inPlace)
		if err := safefile.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
			return err
		}
		out, err = safefile.Create(dest, fi.Mode().Perm())
		if err != nil {
			return fmt.Errorf("create output for %s: %w", name, err)
		}
		defer out.Abort()
		keepOwner(out.OS(), fi)
	}
	cw := &count.Writer{W: io.Discard}
	if out != nil {
		cw.W = out
	}
	zst := session.Compressed(path)
	atMost := int64(0) // the default level
	if j.noLarger {
		atMost = fi.Size()
	}
	w, releaseW, err := encoder(cw, zst, atMost)
	if err != nil {
		return err
	}
	releaseW = sync.OnceFunc(releaseW)
	defer releaseW()
	dr, at, release, err := session.Source(src, progressReader{src, j.progress}, zst)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	release = sync.OnceFunc(release)
	defer release()
	reread, err := j.lines(dr, at, w)
	if err != nil {
		return err
	}
	// The source's decoder holds a share of the run's budget of zstd
	// windows, which recompressing the output (see encoder) takes from.
	release()
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", dest, err)
	}
	// A file that waits for fsyncs from here holds no buffer.
	releaseW()
	if j.done != nil {
		if commit, err := j.done(cw.N); err != nil || !commit {
			return err
		}
	}

	// In place, an agent may have appended meanwhile; and a long line
	// read back from the file was read more than once.
	if j.guard || inPlace || reread {
		if err := unchangedSince(path, before); err != nil {
			return err
		}
	}
	bak := ""
	if j.backup && inPlace {
		if bak, err = backup(path, fi); err != nil {
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
	if err := state.Reset(ctx); err != nil {
		dropBackup()
		return fmt.Errorf("%s: %w; left untouched", name, err)
	}
	// The state stays reset, its lock held, until the bytes agents
	// appended meanwhile are carried over too.
	var rp *replacement
	if inPlace {
		if rp, err = replace(path, src, fi, before, out, cw.N, zst, j.dirs); err != nil {
			dropBackup()
			return err
		}
		defer rp.close()
	}
	if err := out.CommitNoDirSync(); err != nil {
		dropBackup()
		return fmt.Errorf("replace %s: %w", dest, err)
	}
	// From here the output is in place and the backup, if any, is the
	// only copy of the original's bytes: it stays, whatever happens.
	err = j.dirs.Sync(filepath.Dir(dest))
	if err != nil {
		err = fmt.Errorf("replace %s: %w", dest, err)
	}
	if rp != nil {
		var cerr error
		res.Carried, cerr = rp.settle()
		err = errors.Join(err, cerr)
	}
	if err == nil {
		res.BytesAfter = cw.N
	}
	return err
}
