package fsck

import (
	"bytes"
	"errors"
	"fmt"
	"iter"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/store"
)

// What compact knows of an artifact when it compacts the registry.
const (
	fateRemoved byte = 1 << iota // GC removed it
	fateLive                     // a record names a transcript that exists
	fatePresent                  // the store holds it after GC
)

// fatesPerBlock is how many of fates' entries are read at once: the
// first digest of each block is held, 32 bytes for that many artifacts.
const fatesPerBlock = 128

// fateSize is the size of an entry of fates: a digest and its fate.
const fateSize = digestSize + 1

// fates answers what compact knows of an artifact, for each record of the
// registry in its order, in bounded memory: the artifacts' fates, sorted
// by digest, are a table in the spill file.
type fates struct {
	t   *extsort.Table // a digest and its fate, fateSize bytes
	err error          // the first failure to read it
}

// newFates merges the digests of removed, live and present (nil for
// none), each sorted, into the fates of the artifacts they hold.
func newFates(sp *extsort.Spill, removed, live, present *extsort.Sorter) (*fates, error) {
	f := &fates{t: extsort.NewTable(sp, fateSize, digestSize, fatesPerBlock)}
	type source struct {
		next func() ([]byte, bool)
		d    []byte
		more bool
		fate byte
		err  error
	}
	var srcs []*source
	for _, s := range []struct {
		sorter *extsort.Sorter
		fate   byte
	}{{removed, fateRemoved}, {live, fateLive}, {present, fatePresent}} {
		if s.sorter == nil {
			continue
		}
		src := &source{fate: s.fate}
		var stop func()
		src.next, stop = iter.Pull(sorted(s.sorter, &src.err))
		defer stop()
		src.d, src.more = src.next()
		srcs = append(srcs, src)
	}
	var least []byte
	for {
		least = least[:0]
		for _, s := range srcs {
			if s.more && (len(least) == 0 || bytes.Compare(s.d, least) < 0) {
				least = append(least[:0], s.d...)
			}
		}
		if len(least) == 0 {
			break
		}
		var fate byte
		for _, s := range srcs {
			for s.more && bytes.Equal(s.d, least) {
				fate |= s.fate
				s.d, s.more = s.next()
			}
		}
		f.t.Add(append(least, fate))
	}
	var errs []error
	for _, s := range srcs {
		errs = append(errs, s.err)
	}
	return f, errors.Join(append(errs, f.t.Done())...)
}

// of returns the fate of d, 0 for an artifact none of the sorters held.
// A failure to read the spill file is kept in f.err, and gives the fate
// of an artifact whose records all stay.
func (f *fates) of(d store.Digest) byte {
	rec, ok, err := f.t.Find(d[:])
	switch {
	case err != nil:
		if f.err == nil {
			f.err = fmt.Errorf("read the fates of artifacts: %w", err)
		}
		return fatePresent
	case !ok:
		return 0
	}
	return rec[digestSize]
}
