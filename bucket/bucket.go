// Package bucket reaches transcripts kept in S3-compatible object storage,
// a PATH s3://BUCKET/PREFIX/: Inputs lists them as inputs whose
// session.Remote is their object, which fetches each to a local file for
// the commands that read and rewrite transcripts on disk and puts a
// rewritten one back in its object's place.
//
// # Guarantees
//
// Objects stream to and from files: memory does not grow with their size.
// Those files are kept in a run's folder of local copies
// (session.Copies). Replace writes an object only if it still holds the bytes Fetch read
// (PutObject with If-Match: the ETag fetched), so that a transcript an
// agent rewrote or appended to meanwhile is left as that agent wrote it,
// as migrate leaves a file on disk that changed while it was migrated.
// Backup copies an object to KEY.bak on the same condition, never over
// a KEY.bak of other bytes. Requests go through the Objects given to New
// (store/s3's, whose client the command line configures as the store's),
// whose errors name the object's s3:// URL and the HTTP status.
package bucket

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
)

// IsURL reports whether the PATH p names transcripts in S3.
func IsURL(p string) bool { return strings.HasPrefix(p, "s3://") }

// Object is a transcript kept in S3.
type Object struct {
	Bucket, Key string
	// Rel is the key relative to the PATH it was listed under, as
	// session.Input's Rel: --shard partitions a bucket as it would the
	// same tree on disk.
	Rel string
	// Explicit is true for an object the PATH names itself.
	Explicit bool
	Size     int64
	// ETag is the version Fetch read, which Replace and Backup require.
	ETag string
}

// URL returns the object's s3:// URL.
func (o Object) URL() string { return "s3://" + o.Bucket + "/" + o.Key }

// Store returns the default store of the transcript: artifacts/ in its
// session root (session.Root applied to its key), in the same bucket.
func (o Object) Store() string {
	return "s3://" + o.Bucket + "/" + path.Join(session.Root(o.Key), session.StoreDirName)
}

// Objects are the requests on objects that a Client makes: store/s3's
// Objects. Errors name the object's s3:// URL, and wrap store.ErrNotExist
// for a missing key; ok is false, with no error, for a condition
// (ifMatch) that does not hold.
type Objects interface {
	// ParseURL splits an s3://BUCKET/PREFIX URL into its bucket and its
	// prefix, without surrounding slashes.
	ParseURL(url string) (bucket, prefix string, err error)
	// Stat returns the size and ETag of key in bucket.
	Stat(ctx context.Context, bucket, key string) (size int64, etag string, err error)
	// List calls fn with each key below prefix in bucket and its size.
	List(ctx context.Context, bucket, prefix string, fn func(key string, size int64)) error
	// Get returns the bytes of key, to be read and closed, and their ETag.
	Get(ctx context.Context, bucket, key string) (body io.ReadCloser, etag string, err error)
	// Put makes body, of size bytes, key's bytes; with ifMatch set, only
	// if key still holds the bytes of that ETag.
	Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64, ifMatch *string) (ok bool, err error)
	// Copy copies from to to, only if from holds the bytes of ETag ifMatch.
	Copy(ctx context.Context, bucket, from, to, ifMatch string) (ok bool, err error)
	// Delete removes key.
	Delete(ctx context.Context, bucket, key string) error
}

// Client reaches transcripts in S3. It may be used from several
// goroutines at once.
type Client struct {
	c Objects
}

// New returns a Client that makes its requests through objs. It sends no
// request.
func New(objs Objects) *Client { return &Client{c: objs} }

// List returns the transcripts that url names: the object url names, if
// there is one; otherwise the *.jsonl and *.jsonl.zst objects below it,
// but for those in stores, in hidden folders or hidden themselves, as
// session.Collect skips them on disk.
func (c *Client) List(ctx context.Context, url string) ([]Object, error) {
	bkt, prefix, err := c.c.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if prefix != "" && !strings.HasSuffix(url, "/") {
		size, _, err := c.c.Stat(ctx, bkt, prefix)
		if err == nil {
			return []Object{{Bucket: bkt, Key: prefix, Rel: path.Base(prefix), Explicit: true, Size: size}}, nil
		}
		if !errors.Is(err, store.ErrNotExist) {
			return nil, err
		}
	}
	dir := prefix
	if dir != "" {
		dir += "/"
	}
	var all []Object
	stores := map[string]bool{} // folders holding a store's objects or registry
	err = c.c.List(ctx, bkt, dir, func(key string, size int64) {
		if d, ok := storeOf(key); ok {
			stores[d] = true
		}
		all = append(all, Object{Bucket: bkt, Key: key, Rel: strings.TrimPrefix(key, dir), Size: size})
	})
	if err != nil {
		return nil, err
	}
	var objs []Object
	for _, o := range all {
		if transcriptKey(o.Rel, stores, dir) {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// Inputs returns the transcripts url names (see List) as inputs whose
// Remote is their object, each with the path of its local copy below dir
// (dir/BUCKET/KEY), not fetched yet, and its default store in the bucket.
// A key with an empty, "." or ".." segment has no local copy: no key may
// reach outside dir.
func (c *Client) Inputs(ctx context.Context, url, dir string) ([]session.Input, error) {
	objs, err := c.List(ctx, url)
	if err != nil {
		return nil, err
	}
	inputs := make([]session.Input, 0, len(objs))
	for _, o := range objs {
		for _, seg := range strings.Split(o.Key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return nil, fmt.Errorf("%s: a key with an empty, . or .. segment has no local copy", o.URL())
			}
		}
		inputs = append(inputs, session.Input{Path: filepath.Join(dir, o.Bucket, filepath.FromSlash(o.Key)), Rel: o.Rel,
			Explicit: o.Explicit, Size: o.Size, Store: o.Store(), Remote: &transcript{c: c, o: o}})
	}
	return inputs, nil
}

// transcript is a transcript kept in an object, as a session.Remote.
type transcript struct {
	c *Client
	o Object
}

func (t *transcript) Name() string { return t.o.URL() }

func (t *transcript) Fetch(ctx context.Context, path string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	err := t.c.Fetch(ctx, &t.o, path)
	return t.o.Size, err
}

// Replace puts the file at path in the object's place, if the object
// still holds the bytes fetched; with backup, after copying them to
// KEY.bak. A reply lost after the write succeeded is found out and is no
// failure; a backup whose replace failed is removed when the original is
// known to be in place, and kept when that is not known: it may be the
// original's only copy.
func (t *transcript) Replace(ctx context.Context, path string, backup bool) error {
	c, o := t.c, t.o
	bak := ""
	if backup {
		var err error
		if bak, err = c.Backup(ctx, o); err != nil {
			return err
		}
	}
	err := c.Replace(ctx, o, path)
	if err == nil {
		return nil
	}
	holds, herr := c.Holds(ctx, o, path)
	switch {
	case herr == nil && holds == Replaced:
		return nil // the write succeeded and its reply was lost
	case herr == nil && bak != "":
		// The original, or another writer's bytes, in place: the backup
		// would only block the next run.
		_ = c.Remove(ctx, o.Bucket, bak)
	}
	return err
}

// storeOf returns the folder of the store key belongs to, if it is one of
// a store's artifacts (see store.Key): only a folder that holds them is
// known for a store, since transcripts' folders may hold a registry/.
func storeOf(key string) (string, bool) {
	segs := strings.Split(key, "/")
	n := len(segs)
	if n < 3 || segs[n-3] != "objects" {
		return "", false
	}
	d, err := store.ParseDigest(segs[n-1])
	if err != nil || store.Key(store.ObjectHandle(d)) != strings.Join(segs[n-3:], "/") {
		return "", false
	}
	return strings.Join(segs[:n-3], "/") + strings.Repeat("/", min(n-3, 1)), true
}

// transcriptKey reports whether rel, a key below dir, is a transcript's.
func transcriptKey(rel string, stores map[string]bool, dir string) bool {
	if strings.HasSuffix(rel, "/") || !(strings.HasSuffix(rel, ".jsonl") || session.Compressed(rel)) ||
		strings.HasSuffix(rel, ".trajectory.jsonl") {
		return false
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ".") || i < len(segs)-1 && s == session.StoreDirName {
			return false
		}
		if stores[dir+strings.Join(segs[:i], "/")+strings.Repeat("/", min(i, 1))] {
			return false
		}
	}
	return true
}

// Fetch streams o into a new file at name (mode 0600) and records the
// ETag of the bytes read in o.
func (c *Client) Fetch(ctx context.Context, o *Object, name string) error {
	body, etag, err := c.c.Get(ctx, o.Bucket, o.Key)
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A broken body: the server's answer was a success.
		return fmt.Errorf("get %s: %w", o.URL(), err)
	}
	o.ETag, o.Size = etag, n
	return nil
}

// ErrChanged is the error of an object that changed since it was
// fetched: left as it is.
var ErrChanged = session.ErrSourceChanged

// Replace makes the file at name o's bytes, if o still holds those Fetch
// read; ErrChanged if it does not.
func (c *Client) Replace(ctx context.Context, o Object, name string) error {
	return c.put(ctx, o.Bucket, o.Key, name, &o.ETag)
}

// Put uploads the file at name to key in bkt, whatever is there.
func (c *Client) Put(ctx context.Context, bkt, key, name string) error {
	return c.put(ctx, bkt, key, name, nil)
}

func (c *Client) put(ctx context.Context, bkt, key, name string, ifMatch *string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// The file is the body as a ReadSeeker, re-read to sign and to
	// retry, never held in memory.
	ok, err := c.c.Put(ctx, bkt, key, f, fi.Size(), ifMatch)
	if err == nil && !ok {
		return fmt.Errorf("s3://%s/%s: %w", bkt, key, ErrChanged)
	}
	return err
}

// Backup copies o to o.Key+".bak", if o still holds the bytes Fetch read
// (ErrChanged if not). A KEY.bak already there is kept if it holds those
// same bytes, as a rerun after a crash finds it, and refused otherwise.
func (c *Client) Backup(ctx context.Context, o Object) (string, error) {
	bak := o.Key + ".bak"
	url := "s3://" + o.Bucket + "/" + bak
	size, etag, err := c.c.Stat(ctx, o.Bucket, bak)
	if err == nil {
		if etag == o.ETag && size == o.Size {
			return bak, nil
		}
		return "", fmt.Errorf("backup %s already exists; move it away or run without --backup", url)
	}
	if !errors.Is(err, store.ErrNotExist) {
		return "", err
	}
	ok, err := c.c.Copy(ctx, o.Bucket, o.Key, bak, o.ETag)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s: %w", o.URL(), ErrChanged)
	}
	return bak, nil
}

// Holds says what o holds after a Replace with the file at name failed:
// Original (the bytes Fetch read, by their ETag), Replaced (the file's
// bytes, by the MD5 that is a single PUT's ETag: the write succeeded and
// its reply was lost), or Other (another writer's).
func (c *Client) Holds(ctx context.Context, o Object, name string) (Holding, error) {
	_, etag, err := c.c.Stat(ctx, o.Bucket, o.Key)
	if err != nil {
		return Other, err
	}
	if etag == o.ETag {
		return Original, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return Other, err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return Other, err
	}
	if strings.Trim(etag, `"`) == hex.EncodeToString(h.Sum(nil)) {
		return Replaced, nil
	}
	return Other, nil
}

// Holding is what an object holds after a failed Replace (see Holds).
type Holding int

// What an object may hold.
const (
	Other Holding = iota
	Original
	Replaced
)

// Remove deletes key in bkt: a backup whose replace failed, which would
// block the next run.
func (c *Client) Remove(ctx context.Context, bkt, key string) error {
	return c.c.Delete(ctx, bkt, key)
}
