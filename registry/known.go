package registry

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
)

// keySet is the set of the keys of the records a Store has read from the
// registry and appended to it (see readKnown), in bounded memory, however
// large the registry: a registry of millions of records would otherwise
// hold tens of MB of keys, more than a command may take. It holds up to
// maxKnownHeld keys in memory; past that it sorts them and writes them
// as a run to an unlinked temporary file of its own. A run holds in
// memory only the first key of each of its blocks of keysPerBlock keys,
// so that looking a key up costs one read of a block per run. Runs are
// merged as they are made, so that each is at least twice the size of
// the next: a few runs hold any number of keys, and the keys written to
// disk are written again only a few times each.
type keySet struct {
	held map[recordKey]struct{}
	runs []*keyRun // each at least twice the size of the next
	buf  []byte    // a block being read
}

// maxKnownHeld is how many keys a keySet holds in memory, in a map of
// under 1 MiB: a variable for tests.
var maxKnownHeld = 16 << 10

// keysPerBlock is how many keys of a run one lookup reads, 4 KiB.
const keysPerBlock = 256

// keyRun is a run of a keySet: its keys, sorted and distinct, in a
// temporary file.
type keyRun struct {
	sp    extsort.Spill
	n     int64       // keys
	first []recordKey // the first key of each block
}

func newKeySet() *keySet { return &keySet{held: map[recordKey]struct{}{}} }

// add adds k to the set. When it fails (its temporary files could not be
// written or read), the set holds what it held, and k in memory: no key
// is lost.
func (ks *keySet) add(k recordKey) error {
	ks.held[k] = struct{}{}
	if len(ks.held) < maxKnownHeld {
		return nil
	}
	keys := make([]recordKey, 0, len(ks.held))
	for k := range ks.held {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b recordKey) int { return bytes.Compare(a[:], b[:]) })
	w := newRunWriter()
	for _, k := range keys {
		w.add(k)
	}
	r, err := w.done()
	if err != nil {
		return err
	}
	// Merge while the newest run would not be at most half the size of
	// the one before: log2(keys / maxKnownHeld) runs at most. The set is
	// left as it was until every merge has succeeded.
	made := []*keyRun{r}
	n := len(ks.runs)
	for ; n > 0 && ks.runs[n-1].n < 2*r.n; n-- {
		if r, err = mergeRuns(ks.runs[n-1], r); err != nil {
			closeRuns(made)
			return err
		}
		made = append(made, r)
	}
	closeRuns(made[:len(made)-1])
	closeRuns(ks.runs[n:])
	ks.runs = append(ks.runs[:n], r)
	clear(ks.held)
	return nil
}

// has reports whether k is in the set.
func (ks *keySet) has(k recordKey) (bool, error) {
	if _, ok := ks.held[k]; ok {
		return true, nil
	}
	for _, r := range ks.runs {
		// The last block whose first key is not past k: the only one
		// that can hold it.
		b := sort.Search(len(r.first), func(i int) bool { return bytes.Compare(r.first[i][:], k[:]) > 0 }) - 1
		if b < 0 {
			continue
		}
		n := min(int64(keysPerBlock), r.n-int64(b)*keysPerBlock)
		ks.buf = slices.Grow(ks.buf[:0], int(n)*len(k))[:int(n)*len(k)]
		if _, err := r.sp.Section(extsort.Chunk{N: r.n * int64(len(k))}).ReadAt(ks.buf, int64(b)*keysPerBlock*int64(len(k))); err != nil {
			return false, fmt.Errorf("read registry keys: %w", err)
		}
		i := sort.Search(int(n), func(i int) bool { return bytes.Compare(ks.buf[i*len(k):(i+1)*len(k)], k[:]) >= 0 })
		if i < int(n) && bytes.Equal(ks.buf[i*len(k):(i+1)*len(k)], k[:]) {
			return true, nil
		}
	}
	return false, nil
}

// close releases the set's temporary files.
func (ks *keySet) close() {
	closeRuns(ks.runs)
	ks.runs = nil
}

func (r *keyRun) close() { r.sp.Close() }

func closeRuns(runs []*keyRun) {
	for _, r := range runs {
		r.close()
	}
}

// runWriter writes a run of keys given in order, dropping repeats.
type runWriter struct {
	r    *keyRun
	buf  []byte
	last recordKey
}

func newRunWriter() *runWriter { return &runWriter{r: &keyRun{}} }

func (w *runWriter) add(k recordKey) {
	if w.r.n > 0 && k == w.last {
		return
	}
	if w.r.n%keysPerBlock == 0 {
		w.r.first = append(w.r.first, k)
	}
	w.r.n++
	w.last = k
	w.buf = append(w.buf, k[:]...)
	if len(w.buf) >= 64<<10 {
		w.r.sp.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

// done returns the run written, or the first failure to write it.
func (w *runWriter) done() (*keyRun, error) {
	if len(w.buf) > 0 {
		w.r.sp.Write(w.buf)
	}
	if err := w.r.sp.Err(); err != nil {
		w.r.close()
		return nil, fmt.Errorf("write registry keys: %w", err)
	}
	return w.r, nil
}

// mergeRuns returns a new run of the keys of a and b.
func mergeRuns(a, b *keyRun) (*keyRun, error) {
	var ka, kb recordKey
	read := func(r io.Reader, k *recordKey) (bool, error) {
		_, err := io.ReadFull(r, k[:])
		if err == io.EOF {
			return false, nil
		}
		return err == nil, err
	}
	ra := bufio.NewReaderSize(a.sp.Section(extsort.Chunk{N: a.n * int64(len(ka))}), 64<<10)
	rb := bufio.NewReaderSize(b.sp.Section(extsort.Chunk{N: b.n * int64(len(kb))}), 64<<10)
	okA, err := read(ra, &ka)
	if err != nil {
		return nil, fmt.Errorf("read registry keys: %w", err)
	}
	okB, err := read(rb, &kb)
	if err != nil {
		return nil, fmt.Errorf("read registry keys: %w", err)
	}
	w := newRunWriter()
	for okA || okB {
		if okA && (!okB || bytes.Compare(ka[:], kb[:]) <= 0) {
			w.add(ka)
			okA, err = read(ra, &ka)
		} else {
			w.add(kb)
			okB, err = read(rb, &kb)
		}
		if err != nil {
			w.r.close()
			return nil, fmt.Errorf("read registry keys: %w", err)
		}
	}
	return w.done()
}
