package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/transcript-tool/transcript-tool/bucket"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// remote holds what a command line needs for its transcripts that are no
// files of their own (see session.Remote): the run's folder of local
// copies and the client of S3, each made the first time it is needed, and
// the count of those that could not be fetched.
type remote struct {
	mu     sync.Mutex
	copies *session.Copies
	client *bucket.Client
	failed int
}

// fetchers bounds the transcripts fetched at once by the commands that
// read them all before they start.
const fetchers = 4

// open makes the folder of local copies and the client, once.
func (r *remote) open(ctx context.Context) error {
	if _, err := r.copiesDir(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return nil
	}
	client, err := s3.Client(ctx)
	if err != nil {
		return err
	}
	r.client = bucket.New(s3.NewObjects(client))
	return nil
}

// copiesDir makes the folder of local copies, once, and returns it: the
// sessions of agents' databases need no client of S3.
func (r *remote) copiesDir() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.copies == nil {
		copies, err := session.NewCopies()
		if err != nil {
			return "", err
		}
		r.copies = copies
	}
	return r.copies.Dir, nil
}

// close removes the local copies.
func (r *remote) close() {
	if r.copies != nil {
		_ = r.copies.Remove()
	}
}

// inputs returns the transcripts of the s3:// PATH url, not fetched.
func (r *remote) inputs(ctx context.Context, url string) ([]session.Input, error) {
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	return r.client.Inputs(ctx, url, r.copies.Dir)
}

// fetch fetches the remote inputs for a command that reads them all
// before it starts, and returns those there to read: one that cannot be
// fetched fails alone (see failures).
func (r *remote) fetch(ctx context.Context, inputs []session.Input) (fetched []session.Input, failed []error) {
	fetched, failed = session.FetchAll(ctx, inputs, fetchers)
	r.mu.Lock()
	r.failed += len(failed)
	r.mu.Unlock()
	return fetched, failed
}

// failures returns how many transcripts could not be fetched: the run has
// failed for them, whatever it did with the others.
func (r *remote) failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// outDir returns where a command writes its outputs for --out out: out
// itself, or for an s3:// prefix, the local folder that upload puts in
// its place.
func (r *remote) outDir(ctx context.Context, out string) (string, error) {
	if !bucket.IsURL(out) {
		return canon.Path(out)
	}
	bkt, prefix, err := s3.ParseURL(out)
	if err != nil {
		return "", err
	}
	if err := r.open(ctx); err != nil {
		return "", err
	}
	for _, seg := range strings.Split(prefix, "/") {
		if prefix != "" && (seg == "" || seg == "." || seg == "..") {
			return "", errors.New(out + ": a prefix with an empty, . or .. segment has no local folder")
		}
	}
	return filepath.Join(r.copies.Dir, ".out", bkt, filepath.FromSlash(prefix)), nil
}

// upload puts the output of one file written under an --out prefix in S3
// (see outDir) in its bucket; an output elsewhere is left where it is.
func (r *remote) upload(ctx context.Context, res *migrate.FileResult) error {
	if r.copies == nil {
		return nil
	}
	rel, ok := strings.CutPrefix(res.Dest, filepath.Join(r.copies.Dir, ".out")+string(filepath.Separator))
	if !ok {
		return nil
	}
	bkt, key, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if err := r.client.Put(ctx, bkt, key, res.Dest); err != nil {
		return err
	}
	res.Dest = "s3://" + bkt + "/" + key
	return nil
}
