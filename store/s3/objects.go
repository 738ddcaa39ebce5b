package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// Objects reaches the objects of any bucket, for code outside the store
// that keeps other files in the same storage (transcripts kept in S3):
// the requests of a Backend's client, with its errors (see Fail), which
// wrap store.ErrNotExist for a missing key. A condition that does not
// hold is reported as ok false, not as an error. It may be used from
// several goroutines at once.
type Objects struct {
	client *awss3.Client
}

// NewObjects returns the Objects reached through client (see Client).
func NewObjects(client *awss3.Client) *Objects { return &Objects{client: client} }

// ParseURL splits an s3://BUCKET/PREFIX URL (see ParseURL).
func (o *Objects) ParseURL(url string) (bucket, prefix string, err error) { return ParseURL(url) }

// Stat returns the size and the ETag of key in bucket.
func (o *Objects) Stat(ctx context.Context, bucket, key string) (size int64, etag string, err error) {
	out, err := o.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return 0, "", Fail("stat", objectURL(bucket, key), err)
	}
	return aws.ToInt64(out.ContentLength), aws.ToString(out.ETag), nil
}

// List calls fn with each key below prefix in bucket and its size, in
// the order of the keys.
func (o *Objects) List(ctx context.Context, bucket, prefix string, fn func(key string, size int64)) error {
	p := awss3.NewListObjectsV2Paginator(o.client, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Fail("list", objectURL(bucket, prefix), err)
		}
		for _, c := range page.Contents {
			fn(aws.ToString(c.Key), aws.ToInt64(c.Size))
		}
	}
	return nil
}

// Get returns the bytes of key in bucket, to be read and closed, and
// their ETag.
func (o *Objects) Get(ctx context.Context, bucket, key string) (body io.ReadCloser, etag string, err error) {
	out, err := o.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, "", Fail("get", objectURL(bucket, key), err)
	}
	return out.Body, aws.ToString(out.ETag), nil
}

// Put makes body, of size bytes, the bytes of key in bucket; with
// ifMatch set, only if key still holds the bytes of that ETag (ok false
// if not). body is re-read to sign and to retry, never held in memory.
func (o *Objects) Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64, ifMatch *string) (ok bool, err error) {
	_, err = o.client.PutObject(ctx, &awss3.PutObjectInput{Bucket: &bucket, Key: &key, Body: body,
		ContentLength: aws.Int64(size), IfMatch: ifMatch})
	if ifMatch != nil && PreconditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, Fail("put", objectURL(bucket, key), err)
	}
	return true, nil
}

// Copy copies key from to key to in bucket, if from still holds the
// bytes of ETag ifMatch (ok false if not).
func (o *Objects) Copy(ctx context.Context, bucket, from, to, ifMatch string) (ok bool, err error) {
	_, err = o.client.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &bucket, Key: &to,
		CopySource: aws.String(CopySource(bucket, from)), CopySourceIfMatch: &ifMatch})
	if PreconditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, Fail("copy to", objectURL(bucket, to), err)
	}
	return true, nil
}

// Delete removes key from bucket.
func (o *Objects) Delete(ctx context.Context, bucket, key string) error {
	if _, err := o.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		return Fail("remove", objectURL(bucket, key), err)
	}
	return nil
}

// url returns the s3:// URL of key in bucket.
func objectURL(bucket, key string) string { return fmt.Sprintf("%s://%s/%s", Scheme, bucket, key) }
