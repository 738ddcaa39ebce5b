package extsort

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
)

// Ranked puts records of any size, given in any order with their ranks,
// back in the order of their ranks, in bounded memory: it deals them
// into buckets of consecutive ranks, spills each bucket's records past a
// share of its limit, and reads the buckets back one at a time. ls
// lists a registry this way: read in the segment's order, printed
// newest first.
type Ranked struct {
	sp      Spill
	per     int64     // ranks per bucket
	held    [][]byte  // each bucket's records not yet spilled
	chunks  [][]Chunk // each bucket's records spilled, in order
	flushAt int
}

// NewRanked returns a Ranked for ranks in [0, n), that holds about
// limit bytes of records being dealt, and a bucket of perBucket ranks
// when read.
func NewRanked(n int64, perBucket int64, limit int) *Ranked {
	nb := max((n+perBucket-1)/perBucket, 1)
	return &Ranked{per: perBucket, held: make([][]byte, nb), chunks: make([][]Chunk, nb),
		flushAt: max(limit/int(nb), 1)}
}

// Add adds a copy of rec, of rank rank; each rank is given at most once.
func (r *Ranked) Add(rank int64, rec []byte) {
	b := rank / r.per
	buf := binary.AppendUvarint(r.held[b], uint64(rank%r.per))
	buf = binary.AppendUvarint(buf, uint64(len(rec)))
	buf = append(buf, rec...)
	if len(buf) >= r.flushAt {
		r.chunks[b] = append(r.chunks[b], r.sp.Write(buf))
		buf = buf[:0]
	}
	r.held[b] = buf
}

var errRankedBad = errors.New("extsort: a rank out of order")

// Each calls fn with every record added, in the order of their ranks;
// the record is fn's only until it returns. The next bucket is read
// while fn is called with the records of one.
func (r *Ranked) Each(fn func(rec []byte) error) error {
	if err := r.sp.Err(); err != nil {
		return err
	}
	type bucket struct {
		all []byte
		err error
	}
	var (
		full = make(chan bucket)
		free = make(chan []byte, 1)
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	free <- nil
	go func() {
		defer close(done)
		defer close(full)
		var all []byte
		for b := range r.held {
			var bk bucket
			bk.all, bk.err = r.load(b, all)
			select {
			case full <- bk:
			case <-stop:
				return
			}
			if bk.err != nil {
				return
			}
			select {
			case all = <-free:
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()
	at := make([]int, r.per)
	for bk := range full {
		if bk.err != nil {
			return bk.err
		}
		if err := r.each(bk.all, at, fn); err != nil {
			return err
		}
		free <- bk.all
	}
	return nil
}

// load returns the records of bucket b, read into all.
func (r *Ranked) load(b int, all []byte) ([]byte, error) {
	all = all[:0]
	for _, c := range r.chunks[b] {
		n := len(all)
		all = slices.Grow(all, int(c.N))[:n+int(c.N)]
		if _, err := io.ReadFull(r.sp.Reader(c), all[n:]); err != nil {
			return nil, err
		}
	}
	all = append(all, r.held[b]...)
	r.held[b] = nil
	return all, nil
}

// each calls fn with the records of all, a bucket's, in the order of
// their ranks; at is scratch of r.per ints.
func (r *Ranked) each(all []byte, at []int, fn func(rec []byte) error) error {
	for i := range at {
		at[i] = -1
	}
	for p := 0; p < len(all); {
		rank, k := binary.Uvarint(all[p:])
		size, l := binary.Uvarint(all[p+k:])
		if k <= 0 || l <= 0 || rank >= uint64(r.per) || at[rank] >= 0 {
			return errRankedBad
		}
		at[rank] = p + k
		p += k + l + int(size)
	}
	for _, p := range at {
		if p < 0 {
			continue
		}
		size, l := binary.Uvarint(all[p:])
		if err := fn(all[p+l : p+l+int(size)]); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the spill file.
func (r *Ranked) Close() { r.sp.Close() }
