package session

import (
	"context"
	"sync"
)

// Remote is where a transcript that is no file of its own lives: an
// object in a bucket, a session in an agent's database. Every command
// works on a local copy, a file in a Copies folder: Fetch makes it, and a
// command that rewrites the transcript puts the copy back with Replace,
// which writes only if the original still holds what Fetch read, as a
// rewrite of a file on disk is committed only if the file did not change
// meanwhile. A Remote is used by one goroutine at a time.
type Remote interface {
	// Name is how the transcript is named to people and in registry
	// records: a URL (s3://BUCKET/KEY, sqlite:///DB#SESSION).
	Name() string
	// Fetch copies the transcript to a new file at path and returns its
	// size there.
	Fetch(ctx context.Context, path string) (int64, error)
	// Replace makes the transcript the bytes of the file at path if it
	// still holds what Fetch read, and fails wrapping ErrSourceChanged,
	// changing nothing, if it does not. With backup it first keeps the
	// original beside it, as migrate --backup keeps FILE.bak.
	Replace(ctx context.Context, path string, backup bool) error
}

// Guarded is a Remote that its owner can hold against a rewrite, as a
// running agent holds its database. Writable returns, changing nothing,
// the error Replace would refuse with now, so that a command that is to
// replace the transcript refuses it before it does any work for it (no
// artifact stored, no record appended); Replace checks again.
type Guarded interface {
	Remote
	Writable(ctx context.Context) error
}

// Name returns how in is named to people and in registry records: its
// Remote's name, or its path.
func (in Input) Name() string {
	if in.Remote != nil {
		return in.Remote.Name()
	}
	return in.Path
}

// FetchAll fetches the remote inputs to their local copies, at most n at
// a time, for the commands that read transcripts: it returns the inputs
// that are there to read, local ones as they are, and the errors of the
// remote ones that could not be fetched, which fail alone.
func FetchAll(ctx context.Context, inputs []Input, n int) (fetched []Input, failed []error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(n, 1))
	errs := make([]error, len(inputs))
	for i := range inputs {
		if inputs[i].Remote == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			inputs[i].Size, errs[i] = inputs[i].Remote.Fetch(ctx, inputs[i].Path)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			failed = append(failed, err)
			continue
		}
		fetched = append(fetched, inputs[i])
	}
	return fetched, failed
}
