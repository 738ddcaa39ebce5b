// Package s3 is a store.Backend in a bucket of S3-compatible object
// storage (AWS S3, versitygw, MinIO, Ceph, ...), s3://BUCKET/PREFIX.
//
// # Layout
//
// Its keys are the local store's paths below PREFIX (see store.Key):
// PREFIX/objects/<hh>/<64 hex> and PREFIX/registry/<name>, so that a plain
// copy of a local store into the bucket (aws s3 sync) is a valid S3 store,
// and back. PREFIX/locks/ holds the leases of the store's lock while
// writers and collectors hold them (see # Locking); List never sees them.
//
// # Configuration
//
// Endpoint, region and credentials come from the standard AWS environment
// and files, as the AWS CLI reads them (see Open). With a custom endpoint
// (an S3-compatible server) requests use path-style addressing and carry
// checksums only where the API requires them, since some servers refuse
// the CRC32 trailers the SDK sends by default.
//
// # Guarantees
//
// A file is durable once its Save returns nil: S3's 200 to the PUT, or to
// the completion of a multipart upload, is durability; Flush only checks.
// A Save never leaves part of a file under its name: a failed or
// abandoned multipart upload is aborted. An object whose bytes hash to its
// name is created only where none is (If-None-Match: *), so that writers
// on many machines storing the same artifact never replace each other's;
// a 412 is success once the object there is read and found intact, and a
// damaged one is replaced. Payloads of any size stream in bounded memory
// (see partSize, maxBuffers). Requests are retried with backoff on 5xx,
// 429 and connection errors (see maxAttempts), and reads resume where a
// broken connection left them. Every error names the object's s3:// URL
// and, where the server answered, its HTTP status. A Backend may be used
// from several goroutines at once.
//
// # Locking
//
// S3 has no locks, so the Backend is a store.Locker made of leases:
// PREFIX/locks/shared-<id> for each writer from its first write until
// Release, PREFIX/locks/exclusive-<id> for a collector. Each is rewritten
// by its holder while held and counts for a minute after its last
// rewrite, by the server's clock: the lease of a process that died keeps
// collectors waiting a minute at most. A holder that could not renew its
// lease for half that stops relying on it (store.ErrLockLost). The
// protocol, and why a writer and a collector never both go on, is in
// lease.go. Collectors of earlier versions take no lease; for them, and
// for the writers of earlier versions, Touch renews an object's
// LastModified, which a collector's grace period counts from, and
// RemoveUnchanged deletes an object only if its LastModified is still the
// one the collector saw, where the server honours the condition.
package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/transcript-tool/transcript-tool/store"
)

// Scheme is the URL scheme of an S3 store's location.
const Scheme = "s3"

const (
	// maxAttempts bounds the tries of one request (the first and four
	// retries, with the standard retryer's jittered exponential backoff up
	// to maxBackoff): enough to ride out a server restart or a burst of
	// 503 SlowDown, few enough that a dead endpoint fails a run within a
	// minute. AWS_MAX_ATTEMPTS overrides it.
	maxAttempts = 5
	maxBackoff  = 10 * time.Second
	// responseTimeout bounds the wait for a response's headers once the
	// request is sent: a server that hangs is then retried like one that
	// dropped the connection, not waited for for ever. It is generous,
	// since completing a multipart upload of gigabytes takes a while.
	responseTimeout = 2 * time.Minute
	// mtimeMeta is the user metadata (x-amz-meta-mtime) where Save and
	// Touch record when, to the nanosecond: HEAD's Last-Modified has whole
	// seconds only (see modTime).
	mtimeMeta = "mtime"
	// contentType is every file's: artifacts are bytes; a text one reads as
	// text all the same.
	contentType = "application/octet-stream"
)

// Backend is a store.Backend in a bucket of S3-compatible object storage.
type Backend struct {
	client *awss3.Client
	bucket string
	// base is the prefix of every key, "" or ending in "/".
	base string
	// partChecksum is the checksum multipart uploads declare: CRC32 where
	// the SDK computes checksums whenever it can (AWS), none where only
	// when required (a custom endpoint).
	partChecksum types.ChecksumAlgorithm
	// buffers holds a token per part buffer taken, being filled or on its
	// way, by every Save of this Backend: part buffers are bounded per
	// Backend, not per Save (see maxBuffers).
	buffers chan struct{}

	mu sync.Mutex
	// saved holds the files Save or Touch left in place, for Flush to
	// confirm without asking the server; Remove forgets them. A run keeps
	// one entry per distinct artifact, as Store does.
	saved map[savedKey]struct{}

	// lockMu guards shared, the lease this Backend's writes hold from
	// the first until Release (see lease.go).
	lockMu sync.Mutex
	shared *lease
	// unconditional is set once the server refused a conditional
	// deletion as not implemented (see RemoveUnchanged).
	unconditional atomic.Bool
}

// savedKey is a handle in fewer bytes than a Handle: an object's name as
// its digest.
type savedKey struct {
	digest  store.Digest
	segment string
}

func keyOf(h store.Handle) savedKey {
	if h.Kind == store.Object {
		if d, err := store.ParseDigest(h.Name); err == nil {
			return savedKey{digest: d}
		}
	}
	return savedKey{segment: h.Name}
}

var _ store.Backend = (*Backend)(nil)

// ParseURL splits an s3://BUCKET/PREFIX location into its bucket and its
// prefix (without surrounding slashes, "" for the bucket's root).
func ParseURL(location string) (bucket, prefix string, err error) {
	u, err := url.Parse(location)
	if err != nil {
		return "", "", fmt.Errorf("store %s: %w", location, err)
	}
	if u.Scheme != Scheme || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("store %s: want s3://BUCKET/PREFIX", location)
	}
	prefix = strings.Trim(u.Path, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if prefix != "" && (seg == "" || seg == "." || seg == "..") {
			return "", "", fmt.Errorf("store %s: the prefix has an empty, . or .. segment", location)
		}
	}
	return u.Host, prefix, nil
}

// Open returns the Backend of the store at location, s3://BUCKET/PREFIX,
// configured as the AWS CLI is: credentials from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared files (~/.aws/config,
// ~/.aws/credentials, their SSO sessions and roles); the region from
// AWS_REGION or the profile (us-east-1 when none says); the endpoint from
// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's endpoint_url.
// It sends no request.
func Open(ctx context.Context, location string) (*Backend, error) {
	bucket, prefix, err := ParseURL(location)
	if err != nil {
		return nil, err
	}
	client, err := Client(ctx)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", location, err)
	}
	return New(client, bucket, prefix), nil
}

// Client returns an S3 client configured as Open's, for code outside
// the store that reaches the same buckets (transcripts kept in S3). It
// sends no request.
func Client(ctx context.Context) (*awss3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return NewClient(cfg), nil
}

// NewClient returns an S3 client for cfg with the retries, addressing and
// checksums this package wants (see the package doc, # Configuration).
func NewClient(cfg aws.Config, optFns ...func(*awss3.Options)) *awss3.Client {
	return awss3.NewFromConfig(cfg, append([]func(*awss3.Options){func(o *awss3.Options) {
		if c, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
			o.HTTPClient = c.WithTransportOptions(func(tr *http.Transport) {
				tr.ResponseHeaderTimeout = responseTimeout
			})
		}
		if o.Region == "" {
			o.Region = "us-east-1"
		}
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = maxAttempts
			so.MaxBackoff = maxBackoff
			so.Retryables = append(slices.Clone(so.Retryables), retry.IsErrorRetryableFunc(racedDirectory))
			// The client-side retry budget would turn a long run's
			// scattered failures into errors that no retry was tried for.
			so.RateLimiter = ratelimit.None
		})
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	}}, optFns...)...)
}

// racedDirectory says to retry a request that versitygw's posix backend
// failed with a 409 ExistingObjectIsDirectory because it lost a race for
// the object's folder: it makes the folders of a key before it writes
// the object, removes a folder left empty by a delete, and reports a
// failure to make one as that error. Leases, made and removed by every
// run in one folder, met it under load (TestGCRaceFresh). A key that
// really is a folder fails after the retries, as before.
func racedDirectory(err error) aws.Ternary {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ExistingObjectIsDirectory" {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// New returns the Backend of the store under prefix (without surrounding
// slashes, "" for the root) in bucket, through client (see NewClient).
func New(client *awss3.Client, bucket, prefix string) *Backend {
	b := &Backend{
		client:  client,
		bucket:  bucket,
		buffers: make(chan struct{}, maxBuffers),
		saved:   map[savedKey]struct{}{},
	}
	if prefix != "" {
		b.base = prefix + "/"
	}
	if client.Options().RequestChecksumCalculation == aws.RequestChecksumCalculationWhenSupported {
		b.partChecksum = types.ChecksumAlgorithmCrc32
	}
	return b
}

// Location returns the store's s3://BUCKET/PREFIX URL.
func (b *Backend) Location() string {
	return strings.TrimSuffix(b.url(b.base), "/")
}

// Path returns the s3:// URL of h.
func (b *Backend) Path(h store.Handle) string { return b.url(b.base + store.Key(h)) }

func (b *Backend) url(key string) string { return "s3://" + b.bucket + "/" + key }

// key returns the key of h, or an error for a name that is not one of
// its kind (see store.CheckHandle).
func (b *Backend) key(h store.Handle) (string, error) {
	if err := store.CheckHandle(h); err != nil {
		return "", err
	}
	return b.base + store.Key(h), nil
}

// fail is Fail for the key of b's bucket.
func (b *Backend) fail(op, key string, err error) error { return Fail(op, b.url(key), err) }

// Fail returns err of the request op on the object at url, naming the
// URL and the HTTP status the server answered, and wrapping
// store.ErrNotExist for a missing key, so that every error of a request
// to S3 reads alike.
func Fail(op, url string, err error) error {
	if errors.Is(err, store.ErrNotExist) {
		return err
	}
	msg := op + " " + url
	if status := httpStatus(err); status != 0 {
		msg += fmt.Sprintf(": HTTP %d %s", status, http.StatusText(status))
	}
	if notExist(err) {
		return fmt.Errorf("%s: %w: %w", msg, store.ErrNotExist, err)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// notExist reports whether err says the key is not there: a missing
// bucket (NoSuchBucket) is a misconfiguration, and a missing multipart
// upload (NoSuchUpload) a failed write, never a missing file.
func notExist(err error) bool {
	switch errorCode(err) {
	case "NoSuchKey", "NotFound":
		return true
	case "":
		return httpStatus(err) == http.StatusNotFound
	}
	return false
}

// PreconditionFailed reports whether err is S3's 412: an If-Match or
// If-None-Match that did not hold.
func PreconditionFailed(err error) bool {
	return errorCode(err) == "PreconditionFailed" || httpStatus(err) == http.StatusPreconditionFailed
}

func (b *Backend) remember(h store.Handle) {
	b.mu.Lock()
	b.saved[keyOf(h)] = struct{}{}
	b.mu.Unlock()
}

// Save stores the bytes write writes under h: in one PUT when they fit in
// a part, else as a multipart upload (see the package doc, # Guarantees).
func (b *Backend) Save(ctx context.Context, h store.Handle, write func(io.Writer) error) error {
	key, err := b.key(h)
	if err != nil {
		return err
	}
	u := b.newUpload(ctx, h, key)
	if err := write(u); err != nil {
		return u.abort(err)
	}
	if err := u.finish(); err != nil {
		return err
	}
	b.remember(h)
	return nil
}

// intact reports whether the object at key hashes to its name: whether a
// PUT refused with 412 met the same bytes, or damaged ones to replace.
func (b *Backend) intact(ctx context.Context, h store.Handle, key string) (bool, error) {
	rc, err := b.Load(ctx, h, 0, 0)
	if errors.Is(err, store.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer rc.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, rc); err != nil {
		return false, err
	}
	d, _ := store.ParseDigest(h.Name)
	return bytes.Equal(sum.Sum(nil), d[:]), nil
}

// Load returns a reader of length bytes of h from offset (to the end when
// length is 0) that resumes where it was on a broken connection.
func (b *Backend) Load(ctx context.Context, h store.Handle, offset, length int64) (io.ReadCloser, error) {
	key, err := b.key(h)
	if err != nil {
		return nil, err
	}
	r := &reader{b: b, ctx: ctx, key: key, off: offset, end: -1}
	if length > 0 {
		r.end = offset + length
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// Stat describes h (HEAD).
func (b *Backend) Stat(ctx context.Context, h store.Handle) (store.FileInfo, error) {
	key, err := b.key(h)
	if err != nil {
		return store.FileInfo{}, err
	}
	out, err := b.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return store.FileInfo{}, b.fail("stat", key, err)
	}
	return store.FileInfo{
		Name:    h.Name,
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: modTime(aws.ToTime(out.LastModified), out.Metadata[mtimeMeta]),
	}, nil
}

// modTime returns the time of a file whose Last-Modified header says
// lastModified, made precise to the nanosecond by the time its writer
// recorded (mtime), within the header's second: a writer's clock never
// moves a file's time by more than the header's rounding. A later mtime
// counts as the second's last nanosecond, not as the header's start: a
// server that keeps the Last-Modified of an object copied onto itself
// (versitygw) would otherwise have a Touch a moment past a second's
// boundary move the time back.
func modTime(lastModified time.Time, mtime string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, mtime)
	if err != nil || t.Before(lastModified) {
		return lastModified
	}
	if last := lastModified.Add(time.Second - time.Nanosecond); t.After(last) {
		return last
	}
	return t
}

// List calls fn for the files of kind k whose names start with prefix
// (ListObjectsV2 below the kind's folder), and, when prefix is empty, for
// the keys there that cannot be files of the kind, as bad. Folder markers
// (keys ending in "/") and temporary files are skipped.
func (b *Backend) List(ctx context.Context, k store.Kind, prefix string, fn func(store.FileInfo) error) error {
	var dir string
	switch k {
	case store.Object:
		dir = b.base + "objects/"
		if len(prefix) >= 2 {
			dir += prefix[:2] + "/" + prefix
		} else {
			dir += prefix
		}
	case store.Segment:
		dir = b.base + store.SegmentsDir + "/" + prefix
	case store.Legacy:
		switch {
		case strings.HasPrefix(prefix, store.RegistryFile):
			dir = b.base + prefix
		case strings.HasPrefix(store.RegistryFile, prefix):
			dir = b.base + store.RegistryFile
		default:
			return nil
		}
	default:
		return fmt.Errorf("list: invalid kind %d", k)
	}
	in := &awss3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &dir}
	if k == store.Legacy {
		in.Delimiter = aws.String("/") // the root's files, not the folders named like them
	}
	p := awss3.NewListObjectsV2Paginator(b.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return b.fail("list", dir, err)
		}
		for _, o := range page.Contents {
			fi, ok := b.info(k, o)
			if !ok || fi.Bad != nil && prefix != "" {
				continue
			}
			if err := fn(fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// info describes the listed object o, a file of kind k, or reports it
// bad; ok is false for what List skips.
func (b *Backend) info(k store.Kind, o types.Object) (fi store.FileInfo, ok bool) {
	rel := strings.TrimPrefix(aws.ToString(o.Key), b.base)
	if strings.HasSuffix(rel, "/") {
		return fi, false
	}
	name := rel[strings.LastIndex(rel, "/")+1:]
	if store.IsTemp(name) {
		return fi, false
	}
	switch k {
	case store.Object:
		shard, _, _ := strings.Cut(strings.TrimPrefix(rel, "objects/"), "/")
		if _, err := store.ParseDigest(name); err != nil {
			return store.FileInfo{Name: rel, Bad: errors.New("not an artifact name")}, true
		}
		if rel != store.Key(store.Handle{Kind: k, Name: name}) {
			return store.FileInfo{Name: rel, Bad: fmt.Errorf("artifact in folder %s, not %s", shard, name[:2])}, true
		}
	case store.Segment:
		if rel != store.Key(store.Handle{Kind: k, Name: name}) {
			return store.FileInfo{Name: rel, Bad: errors.New("not a registry segment: in a subfolder")}, true
		}
	case store.Legacy:
		if rel != name {
			return fi, false
		}
	}
	return store.FileInfo{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}, true
}

// Remove deletes h (DeleteObject; S3 answers the same for a key that is
// not there).
func (b *Backend) Remove(ctx context.Context, h store.Handle) error {
	_, err := b.remove(ctx, h, nil)
	return err
}

// RemoveUnchanged deletes h if its LastModified is still seen's (a Stat's:
// within its second), with DeleteObject's If-Match-Last-Modified-Time,
// and reports false when the server refused for a precondition that
// failed (a Touch or a Save since). A server that ignores the header
// (gofakes3) deletes h all the same; one that refuses it as not
// implemented gets an unconditional DeleteObject, then and from then on.
func (b *Backend) RemoveUnchanged(ctx context.Context, h store.Handle, seen store.FileInfo) (bool, error) {
	if b.unconditional.Load() {
		return b.remove(ctx, h, nil)
	}
	at := seen.ModTime.Truncate(time.Second)
	removed, err := b.remove(ctx, h, &at)
	if httpStatus(err) == http.StatusNotImplemented {
		b.unconditional.Store(true)
		return b.remove(ctx, h, nil)
	}
	return removed, err
}

// remove deletes h, if modified is not nil only if its LastModified is
// still that, and reports whether it did.
func (b *Backend) remove(ctx context.Context, h store.Handle, modified *time.Time) (bool, error) {
	key, err := b.key(h)
	if err != nil {
		return false, err
	}
	b.mu.Lock()
	delete(b.saved, keyOf(h))
	b.mu.Unlock()
	_, err = b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b.bucket, Key: &key, IfMatchLastModifiedTime: modified})
	switch {
	case err == nil || notExist(err):
		return true, nil
	case modified != nil && PreconditionFailed(err):
		return false, nil
	}
	return false, b.fail("remove", key, err)
}

// Touch makes h's LastModified now by copying h onto itself with its
// metadata replaced (the new mtime), which S3 allows and does. A server
// that copies an object onto itself without changing its LastModified
// (versitygw's posix backend) gets a copy through a temporary key instead,
// when the object is older than a minute: a younger one is within any
// collector's grace anyway.
func (b *Backend) Touch(ctx context.Context, h store.Handle) error {
	key, err := b.key(h)
	if err != nil {
		return err
	}
	start := time.Now()
	out, err := b.copy(ctx, key, key)
	if err != nil {
		return b.fail("touch", key, err)
	}
	if out.CopyObjectResult != nil && aws.ToTime(out.CopyObjectResult.LastModified).Before(start.Add(-time.Minute)) {
		if err := b.touchByCopies(ctx, key); err != nil {
			return err
		}
	}
	b.remember(h)
	return nil
}

// touchByCopies copies the object at key to a temporary key beside it and
// back: a copy from another key writes the object anew on every server.
// The temporary key starts with ".", so List skips it if a crash leaves
// it behind.
func (b *Backend) touchByCopies(ctx context.Context, key string) error {
	dir, name := key[:strings.LastIndex(key, "/")+1], key[strings.LastIndex(key, "/")+1:]
	tmp := fmt.Sprintf("%s.touch-%s-%d", dir, name, time.Now().UnixNano())
	if _, err := b.copy(ctx, key, tmp); err != nil {
		return b.fail("touch: copy to", tmp, err)
	}
	_, err := b.copy(ctx, tmp, key)
	if _, derr := b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b.bucket, Key: &tmp}); err == nil && derr != nil {
		return b.fail("touch: remove", tmp, derr)
	}
	if err != nil {
		return b.fail("touch: copy back to", key, err)
	}
	return nil
}

func (b *Backend) copy(ctx context.Context, from, to string) (*awss3.CopyObjectOutput, error) {
	return b.client.CopyObject(ctx, &awss3.CopyObjectInput{
		Bucket:            &b.bucket,
		Key:               &to,
		CopySource:        aws.String(CopySource(b.bucket, from)),
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          map[string]string{mtimeMeta: time.Now().UTC().Format(time.RFC3339Nano)},
		ContentType:       aws.String(contentType),
	})
}

// CopySource returns CopyObject's x-amz-copy-source naming key in
// bucket: escaped, but for the key's slashes.
func CopySource(bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return url.PathEscape(bucket) + "/" + strings.Join(segs, "/")
}

// Flush has nothing to make durable: a Save or Touch that returned nil
// was durable then. It reports a handle of must that no Save or Touch of
// this Backend left in place and that is not there.
func (b *Backend) Flush(ctx context.Context, must ...store.Handle) error {
	for _, h := range must {
		b.mu.Lock()
		_, ok := b.saved[keyOf(h)]
		b.mu.Unlock()
		if ok {
			continue
		}
		if _, err := b.Stat(ctx, h); err != nil {
			return fmt.Errorf("%s was not made durable: %w", b.Path(h), err)
		}
		b.remember(h)
	}
	return nil
}

// Discard has nothing to drop: a Save leaves a whole file or nothing.
func (b *Backend) Discard() {}
