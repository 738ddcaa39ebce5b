package session

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// scratchPrefix starts the name of every folder of local copies a run
// makes in the system's temporary directory (earlier versions' started
// with oldScratchPrefix); a folder still being made ends in scratchNew.
const (
	scratchPrefix    = "transcript-tool-copies-"
	oldScratchPrefix = "transcript-tool-s3-"
	scratchNew       = ".new"
)

// Copies is the folder of a run's local copies of transcripts that are
// no files of their own (see Remote), in the system's temporary directory
// ($TMPDIR), locked for as long as the run lives, so that a run killed
// before it removed its folder leaves it to the next one: every Copies
// first removes the folders no run holds.
type Copies struct {
	Dir  string
	lock *os.File
}

// NewCopies removes the folders of local copies that killed runs left,
// then makes and locks a new one.
func NewCopies() (*Copies, error) {
	tmp := os.TempDir()
	sweepCopies(tmp)
	// Locked under a name the sweep leaves alone, then renamed: a folder
	// is never seen under its final name before it is locked.
	dir, err := os.MkdirTemp(tmp, scratchPrefix+"*"+scratchNew)
	if err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err == nil {
		final := strings.TrimSuffix(dir, scratchNew)
		if err = os.Rename(dir, final); err == nil {
			return &Copies{Dir: final, lock: lock}, nil
		}
		lock.Close()
	}
	_ = os.RemoveAll(dir)
	return nil, err
}

// Remove removes the folder and its lock.
func (s *Copies) Remove() error {
	err := os.RemoveAll(s.Dir)
	s.lock.Close()
	return err
}

// lockDir takes the lock of a folder of local copies, refused with
// EWOULDBLOCK while another run holds it. It goes with the returned file.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepCopies removes the folders of local copies in tmp that no run
// holds: those of runs killed before they removed theirs. One still being
// made is left until it is older than safefile.StaleAge: its run may lock
// it yet. What cannot be removed is left for the next run.
func sweepCopies(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, scratchPrefix) && !strings.HasPrefix(name, oldScratchPrefix) {
			continue
		}
		dir := filepath.Join(tmp, name)
		if strings.HasSuffix(name, scratchNew) {
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < safefile.StaleAge {
				continue
			}
		}
		lock, err := lockDir(dir)
		if err != nil {
			continue // a live run's (EWOULDBLOCK), or gone meanwhile
		}
		_ = os.RemoveAll(dir)
		lock.Close()
	}
}
