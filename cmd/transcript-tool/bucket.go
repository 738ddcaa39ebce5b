package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/transcript-tool/transcript-tool/bucket"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// remote holds the transcripts of a command line's s3:// PATHs, fetched
// to local copies on which the commands run as on any file: the copy of
// s3://BUCKET/KEY is DIR/BUCKET/KEY, so that a message naming the copy
// names the object once DIR/ reads s3:// (see urlWriter), and an --out
// prefix in S3 is written to DIR/BUCKET/PREFIX before it is uploaded.
type remote struct {
	mu      sync.Mutex
	scratch *bucket.Scratch
	dir     string // scratch's, "" until something is fetched
	client  *bucket.Client
	objects map[string]bucket.Object // by the path of the local copy
	failed  int                      // objects that could not be fetched
}

// fetchers bounds the objects fetched at once.
const fetchers = 4

// open makes the temporary folder and the client, once.
func (r *remote) open(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return nil
	}
	client, err := bucket.Open(ctx)
	if err != nil {
		return err
	}
	scratch, err := bucket.NewScratch()
	if err != nil {
		return err
	}
	r.scratch, r.dir, r.client, r.objects = scratch, scratch.Dir, client, map[string]bucket.Object{}
	return nil
}

// close removes the local copies.
func (r *remote) close() {
	if r.scratch != nil {
		_ = r.scratch.Remove()
	}
}

// local returns the path of the copy of key in bkt, or an error for a key
// that is no relative path: no key may reach outside the folder.
func (r *remote) local(bkt, key string) (string, error) {
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("s3://%s/%s: a key with an empty, . or .. segment has no local copy", bkt, key)
		}
	}
	return filepath.Join(r.dir, bkt, filepath.FromSlash(key)), nil
}

// name returns how path is named to the user and in registry records: the
// s3:// URL of the object whose copy it is.
func (r *remote) name(path string) string {
	if r.dir != "" {
		if rel, ok := strings.CutPrefix(path, r.dir+string(filepath.Separator)); ok {
			return "s3://" + filepath.ToSlash(rel)
		}
	}
	return registry.SourcePath(path)
}

// list returns the transcripts url names as inputs whose Path is their
// copy's, not yet fetched (see fetch).
func (r *remote) list(ctx context.Context, url string) ([]session.Input, error) {
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	objs, err := r.client.List(ctx, url)
	if err != nil {
		return nil, err
	}
	inputs := make([]session.Input, 0, len(objs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range objs {
		path, err := r.local(o.Bucket, o.Key)
		if err != nil {
			return nil, err
		}
		r.objects[path] = o
		inputs = append(inputs, session.Input{Path: path, Rel: o.Rel, Explicit: o.Explicit, Size: o.Size, Store: o.Store()})
	}
	return inputs, nil
}

// fetch fetches the objects among inputs to their copies, with the sizes
// read, and returns the inputs fetched, and local ones: an object that
// cannot be fetched fails alone, its error in failed, and the others go
// on.
func (r *remote) fetch(ctx context.Context, inputs []session.Input) (fetched []session.Input, failed []error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, fetchers)
	errs := make([]error, len(inputs))
	for i := range inputs {
		o, ok := r.object(inputs[i].Path)
		if !ok {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			path := inputs[i].Path
			if errs[i] = os.MkdirAll(filepath.Dir(path), 0o700); errs[i] != nil {
				return
			}
			if errs[i] = r.client.Fetch(ctx, &o, path); errs[i] == nil {
				inputs[i].Size = o.Size
				r.mu.Lock()
				r.objects[path] = o
				r.mu.Unlock()
			}
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
	r.mu.Lock()
	r.failed += len(failed)
	r.mu.Unlock()
	return fetched, failed
}

// failures returns how many objects could not be fetched: the run has
// failed for them, whatever it did with the others.
func (r *remote) failures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *remote) object(path string) (bucket.Object, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.objects[path]
	return o, ok
}

// store returns the default store of the copy at path (see
// bucket.Object.Store), or "" for a file that is no copy.
func (r *remote) store(path string) string {
	if o, ok := r.object(path); ok {
		return o.Store()
	}
	return ""
}

// outDir returns where the command writes its outputs for --out out: out
// itself, or for an s3:// prefix, the local folder uploaded to it by
// upload.
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
	if prefix == "" {
		return filepath.Join(r.dir, bkt), nil
	}
	return r.local(bkt, prefix)
}

// commit puts the transcripts of sum that were rewritten in place and are
// copies of objects back in their objects' place, in the order of SPEC:
// their artifacts and registry records are durable when migrate.Run or
// Rehydrate returns. With backup, the original is copied to KEY.bak first.
// An object that changed since it was fetched is left as it is and its
// file fails. Outputs under an --out prefix in S3 are uploaded.
func (r *remote) commit(ctx context.Context, sum *migrate.Summary, backup bool) {
	if r.dir == "" {
		return
	}
	for i := range sum.Results {
		res := &sum.Results[i]
		if err := r.commitOne(ctx, res, backup); err != nil {
			sum.Failed++
			if res.Status != migrate.StatusUnchanged {
				sum.Migrated--
			} else {
				sum.Unchanged--
			}
			sum.BytesAfter += res.BytesBefore - res.BytesAfter
			res.Status, res.Err, res.Message, res.BytesAfter = migrate.StatusFailed, err, err.Error(), res.BytesBefore
		}
	}
}

// commitOne puts the output of one file of the run in its bucket, when
// it has one: the object replaced (after its backup), or the --out
// object written.
func (r *remote) commitOne(ctx context.Context, res *migrate.FileResult, backup bool) error {
	if r.dir == "" {
		return nil
	}
	if res.Status != migrate.StatusMigrated && res.Status != migrate.StatusRestored && res.Status != migrate.StatusUnchanged {
		return nil
	}
	if o, ok := r.object(res.Path); ok && res.Dest == res.Path {
		if res.Status != migrate.StatusUnchanged {
			return r.replace(ctx, o, backup)
		}
		return nil
	}
	if rel, ok := strings.CutPrefix(res.Dest, r.dir+string(filepath.Separator)); ok {
		bkt, key, _ := strings.Cut(filepath.ToSlash(rel), "/")
		return r.client.Put(ctx, bkt, key, res.Dest)
	}
	return nil
}

func (r *remote) replace(ctx context.Context, o bucket.Object, backup bool) error {
	path, _ := r.local(o.Bucket, o.Key)
	if !backup {
		err := r.client.Replace(ctx, o, path)
		if err != nil {
			if holds, herr := r.client.Holds(ctx, o, path); herr == nil && holds == bucket.Replaced {
				return nil // the write succeeded and its reply was lost
			}
		}
		return err
	}
	bak, err := r.client.Backup(ctx, o)
	if err != nil {
		return err
	}
	if err := r.client.Replace(ctx, o, path); err != nil {
		holds, herr := r.client.Holds(ctx, o, path)
		switch {
		case herr == nil && holds == bucket.Replaced:
			// The write succeeded and its reply was lost (a retry then
			// met its own new ETag): migrated, and the backup stays.
			return nil
		case herr == nil:
			// The original, or another writer's bytes, in place: the
			// backup would only block the next run.
			_ = r.client.Remove(ctx, o.Bucket, bak)
		}
		// Unknown: the backup may be the original's only copy, and stays.
		return err
	}
	return nil
}

// urlWriter writes to w with the local copies of objects named by their
// s3:// URLs (see remote).
type urlWriter struct {
	w io.Writer
	r *remote
}

// raw returns the writer under w: a transcript's bytes go there as they
// are, never rewritten; and it is what may be a terminal.
func raw(w io.Writer) io.Writer {
	if u, ok := w.(urlWriter); ok {
		return u.w
	}
	return w
}

func (u urlWriter) Write(p []byte) (int, error) {
	u.r.mu.Lock()
	dir := u.r.dir
	u.r.mu.Unlock()
	if dir == "" {
		return u.w.Write(p)
	}
	if _, err := u.w.Write(bytes.ReplaceAll(p, []byte(dir+string(filepath.Separator)), []byte("s3://"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
