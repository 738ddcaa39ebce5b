package safefile

import "sync"

// DirSyncer makes directories' entries durable for many writers at once:
// a writer that asks while another's fsync of the same directory is
// running waits for it to end, then makes one fsync for itself and every
// other writer that asked meanwhile, instead of one each. A DirSyncer may
// be used from several goroutines at once; the zero DirSyncer is ready.
type DirSyncer struct {
	mu   sync.Mutex
	dirs map[string]*dirSync
}

type dirSync struct {
	run sync.Mutex // held by the fsync in progress

	mu     sync.Mutex
	asked  uint64 // the last request's number
	done   uint64 // requests up to this one are covered by an fsync that ended
	failed uint64 // requests up to this one were covered by one that failed
	err    error  // of that fsync
}

// Sync makes dir's entries, as they are when Sync is called, durable
// (SyncDir). When the fsync covering them fails, every Sync it covered
// returns its error: none of them knows its entries durable, even if an
// fsync now would succeed.
func (s *DirSyncer) Sync(dir string) error {
	s.mu.Lock()
	if s.dirs == nil {
		s.dirs = map[string]*dirSync{}
	}
	d := s.dirs[dir]
	if d == nil {
		d = &dirSync{}
		s.dirs[dir] = d
	}
	s.mu.Unlock()

	d.mu.Lock()
	d.asked++
	mine := d.asked
	d.mu.Unlock()

	d.run.Lock()
	defer d.run.Unlock()
	d.mu.Lock()
	if mine <= d.done {
		var err error
		if mine <= d.failed {
			err = d.err
		}
		d.mu.Unlock()
		return err
	}
	target := d.asked // every request made before this fsync starts
	d.mu.Unlock()
	err := SyncDir(dir)
	d.mu.Lock()
	d.done = target
	if err != nil {
		d.failed, d.err = target, err
	}
	d.mu.Unlock()
	return err
}
