package registry

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

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
}

// maxKnownHeld is how many keys a keySet holds in memory, in a map of
// under 1 MiB: a variable for tests.
var maxKnownHeld = 16 << 10

// keysPerBlock is how many keys of a run one lookup reads, 4 KiB.
const keysPerBlock = 256

// keyRun is a run of a keySet: its keys, sorted and distinct, a table in
// a temporary file of its own.
type keyRun struct {
	sp extsort.Spill
	t  *extsort.Table // records of a key and nothing else
}

// newKeyRun returns an empty run, to add keys to in order; a key added
// twice is held once.
func newKeyRun() *keyRun {
	r := &keyRun{}
	r.t = extsort.NewTable(&r.sp, len(recordKey{}), len(recordKey{}), keysPerBlock)
	return r
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
	r := newKeyRun()
	for _, k := range keys {
		r.t.Add(k[:])
	}
	if err := r.done(); err != nil {
		return err
	}
	// Merge while the newest run would not be at most half the size of
	// the one before: log2(keys / maxKnownHeld) runs at most. The set is
	// left as it was until every merge has succeeded.
	made := []*keyRun{r}
	n := len(ks.runs)
	for ; n > 0 && ks.runs[n-1].t.Len() < 2*r.t.Len(); n-- {
		var err error
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
		if _, ok, err := r.t.Find(k[:]); err != nil {
			return false, fmt.Errorf("read registry keys: %w", err)
		} else if ok {
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

// done finishes writing r; when it fails, r is released.
func (r *keyRun) done() error {
	if err := r.t.Done(); err != nil {
		r.close()
		return fmt.Errorf("write registry keys: %w", err)
	}
	return nil
}

// mergeRuns returns a new run of the keys of a and b.
func mergeRuns(a, b *keyRun) (*keyRun, error) {
	r := newKeyRun()
	ra, rb := a.t.Reader(), b.t.Reader()
	ka, okA := ra.Next()
	kb, okB := rb.Next()
	for okA || okB {
		if okA && (!okB || bytes.Compare(ka, kb) <= 0) {
			r.t.Add(ka)
			ka, okA = ra.Next()
		} else {
			r.t.Add(kb)
			kb, okB = rb.Next()
		}
	}
	if err := cmp.Or(ra.Err(), rb.Err()); err != nil {
		r.close()
		return nil, fmt.Errorf("read registry keys: %w", err)
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return r, nil
}
