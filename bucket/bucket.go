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
// a KEY.bak of other bytes. Requests go through store/s3's client
// (configuration, retries, addressing, checksums) and its errors name the
// object's s3:// URL and the HTTP status.
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

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store"
	s3store "github.com/transcript-tool/transcript-tool/store/s3"
)

// IsURL reports whether the PATH p names transcripts in S3.
func IsURL(p string) bool { return strings.HasPrefix(p, s3store.Scheme+"://") }

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

// Client reaches transcripts in S3. It may be used from several
// goroutines at once.
type Client struct {
	c *awss3.Client
}

// Open returns a Client configured from the AWS environment as an S3
// store is (see store/s3.Open). It sends no request.
func Open(ctx context.Context) (*Client, error) {
	c, err := s3store.Client(ctx)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// List returns the transcripts that url names: the object url names, if
// there is one; otherwise the *.jsonl and *.jsonl.zst objects below it,
// but for those in stores, in hidden folders or hidden themselves, as
// session.Collect skips them on disk.
func (c *Client) List(ctx context.Context, url string) ([]Object, error) {
	bkt, prefix, err := s3store.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if prefix != "" && !strings.HasSuffix(url, "/") {
		out, err := c.c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &bkt, Key: &prefix})
		if err == nil {
			return []Object{{Bucket: bkt, Key: prefix, Rel: path.Base(prefix), Explicit: true, Size: aws.ToInt64(out.ContentLength)}}, nil
		}
		if err = s3store.Fail("stat", url, err); !errors.Is(err, store.ErrNotExist) {
			return nil, err
		}
	}
	dir := prefix
	if dir != "" {
		dir += "/"
	}
	var all []Object
	stores := map[string]bool{} // folders holding a store's objects or registry
	p := awss3.NewListObjectsV2Paginator(c.c, &awss3.ListObjectsV2Input{Bucket: &bkt, Prefix: &dir})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s3store.Fail("list", "s3://"+bkt+"/"+dir, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if d, ok := storeOf(key); ok {
				stores[d] = true
			}
			all = append(all, Object{Bucket: bkt, Key: key, Rel: strings.TrimPrefix(key, dir), Size: aws.ToInt64(o.Size)})
		}
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
	out, err := c.c.GetObject(ctx, &awss3.GetObjectInput{Bucket: &o.Bucket, Key: &o.Key})
	if err != nil {
		return s3store.Fail("get", o.URL(), err)
	}
	defer out.Body.Close()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, out.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s3store.Fail("get", o.URL(), err)
	}
	o.ETag, o.Size = aws.ToString(out.ETag), n
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
	// The file is the body as a ReadSeeker: the SDK re-reads it to sign
	// and to retry, never holding it in memory.
	_, err = c.c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &bkt, Key: &key, Body: f,
		ContentLength: aws.Int64(fi.Size()), IfMatch: ifMatch})
	url := "s3://" + bkt + "/" + key
	if ifMatch != nil && s3store.PreconditionFailed(err) {
		return fmt.Errorf("%s: %w", url, ErrChanged)
	}
	if err != nil {
		return s3store.Fail("put", url, err)
	}
	return nil
}

// Backup copies o to o.Key+".bak", if o still holds the bytes Fetch read
// (ErrChanged if not). A KEY.bak already there is kept if it holds those
// same bytes, as a rerun after a crash finds it, and refused otherwise.
func (c *Client) Backup(ctx context.Context, o Object) (string, error) {
	bak := o.Key + ".bak"
	url := "s3://" + o.Bucket + "/" + bak
	head, err := c.c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &o.Bucket, Key: &bak})
	if err == nil {
		if aws.ToString(head.ETag) == o.ETag && aws.ToInt64(head.ContentLength) == o.Size {
			return bak, nil
		}
		return "", fmt.Errorf("backup %s already exists; move it away or run without --backup", url)
	}
	if err := s3store.Fail("stat", url, err); !errors.Is(err, store.ErrNotExist) {
		return "", err
	}
	_, err = c.c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &o.Bucket, Key: &bak,
		CopySource: aws.String(s3store.CopySource(o.Bucket, o.Key)), CopySourceIfMatch: &o.ETag})
	if s3store.PreconditionFailed(err) {
		return "", fmt.Errorf("%s: %w", o.URL(), ErrChanged)
	}
	if err != nil {
		return "", s3store.Fail("copy to", url, err)
	}
	return bak, nil
}

// Holds says what o holds after a Replace with the file at name failed:
// Original (the bytes Fetch read, by their ETag), Replaced (the file's
// bytes, by the MD5 that is a single PUT's ETag: the write succeeded and
// its reply was lost), or Other (another writer's).
func (c *Client) Holds(ctx context.Context, o Object, name string) (Holding, error) {
	head, err := c.c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &o.Bucket, Key: &o.Key})
	if err != nil {
		return Other, s3store.Fail("stat", o.URL(), err)
	}
	etag := aws.ToString(head.ETag)
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
	if _, err := c.c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &bkt, Key: &key}); err != nil {
		return s3store.Fail("remove", "s3://"+bkt+"/"+key, err)
	}
	return nil
}
