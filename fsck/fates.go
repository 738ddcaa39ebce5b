package fsck

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"

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
// by digest, are in the spill file, in blocks whose first digests it
// holds.
type fates struct {
	sp     *extsort.Spill
	firsts []byte // the first digest of each block
	blocks []extsort.Chunk
	block  []byte // the block read last
	at     int    // its number, -1 before
	err    error  // the first failure to read one
}

// newFates merges the digests of removed, live and present (nil for
// none), each sorted, into the fates of the artifacts they hold.
func newFates(sp *extsort.Spill, removed, live, present *extsort.Sorter) (*fates, error) {
	f := &fates{sp: sp, at: -1}
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
	var block, least []byte
	flush := func() {
		f.firsts = append(f.firsts, block[:digestSize]...)
		f.blocks = append(f.blocks, sp.Write(block))
		block = block[:0]
	}
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
		block = append(append(block, least...), fate)
		if len(block) == fatesPerBlock*fateSize {
			flush()
		}
	}
	if len(block) > 0 {
		flush()
	}
	var errs []error
	for _, s := range srcs {
		errs = append(errs, s.err)
	}
	return f, errors.Join(append(errs, sp.Err())...)
}

// of returns the fate of d, 0 for an artifact none of the sorters held.
// A failure to read the spill file is kept in f.err, and gives the fate
// of an artifact whose records all stay.
func (f *fates) of(d store.Digest) byte {
	// The last block whose first digest is not after d.
	i := sort.Search(len(f.blocks), func(i int) bool {
		return bytes.Compare(f.firsts[i*digestSize:(i+1)*digestSize], d[:]) > 0
	}) - 1
	if i < 0 {
		return 0
	}
	if i != f.at {
		c := f.blocks[i]
		f.block = slices.Grow(f.block[:0], int(c.N))[:c.N]
		if _, err := f.sp.Section(c).ReadAt(f.block, 0); err != nil {
			f.err, f.at = fmt.Errorf("read the fates of artifacts: %w", err), -1
			return fatePresent
		}
		f.at = i
	}
	n := len(f.block) / fateSize
	j := sort.Search(n, func(j int) bool { return bytes.Compare(f.block[j*fateSize:j*fateSize+digestSize], d[:]) >= 0 })
	if j == n || !bytes.Equal(f.block[j*fateSize:j*fateSize+digestSize], d[:]) {
		return 0
	}
	return f.block[j*fateSize+digestSize]
}
