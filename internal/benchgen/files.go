package benchgen

import (
	"errors"
	"sync"
)

// EachFile calls fn(i, buf) for every i below n on jobs workers, which
// take the indexes in turn, each with a read buffer of 1 MiB of its own:
// the reference commands of `make bench` (hashbench, copybench) go over
// the files of a tree this way. It returns the sizes fn returned, in the
// order of i, or its errors joined.
func EachFile(n, jobs int, fn func(i int, buf []byte) (int64, error)) ([]int64, error) {
	sizes := make([]int64, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for i := range next {
				sizes[i], errs[i] = fn(i, buf)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return sizes, nil
}
