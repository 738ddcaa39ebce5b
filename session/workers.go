package session

import "runtime"

// maxJobsPerCore bounds the workers per core, whatever --jobs asks: past
// a few per core they only wait for the disk or the network, each holding
// a line of up to LongLine bytes and a skeleton of up to maxSkeleton.
const maxJobsPerCore = 4

// Workers returns how many workers process n inputs for a --jobs of jobs:
// one per core for 0 (or less), and never more than the inputs nor
// maxJobsPerCore per core, so that a huge --jobs costs no memory.
func Workers(jobs, n int) int {
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	return max(1, min(jobs, n, maxJobsPerCore*runtime.NumCPU()))
}
