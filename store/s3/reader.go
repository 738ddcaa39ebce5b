package s3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// reader streams a range of an object (GetObject) and, when the
// connection breaks mid-body, asks again from where it was, for the same
// object (If-Match its ETag), up to maxAttempts-1 times.
type reader struct {
	b   *Backend
	ctx context.Context
	key string
	// off is the offset of the next byte; end the offset after the last
	// one wanted, or -1 for the object's end.
	off, end int64
	etag     *string
	body     io.ReadCloser // nil after a broken connection
	resumes  int
}

func (r *reader) open() error {
	in := &awss3.GetObjectInput{Bucket: &r.b.bucket, Key: &r.key, IfMatch: r.etag}
	if r.off > 0 || r.end >= 0 {
		rng := fmt.Sprintf("bytes=%d-", r.off)
		if r.end >= 0 {
			rng += fmt.Sprint(r.end - 1)
		}
		in.Range = &rng
	}
	out, err := r.b.client.GetObject(r.ctx, in)
	switch {
	case err == nil:
		r.etag, r.body = out.ETag, out.Body
		return nil
	case httpStatus(err) == http.StatusRequestedRangeNotSatisfiable:
		// Only a range that starts at or past the object's end is refused:
		// it holds no byte.
		r.body = io.NopCloser(strings.NewReader(""))
		return nil
	case r.etag != nil && PreconditionFailed(err):
		return fmt.Errorf("load %s: it changed while it was read", r.b.url(r.key))
	}
	return r.b.fail("load", r.key, err)
}

// Read reads from the body, asking for the rest after a broken connection.
func (r *reader) Read(p []byte) (int, error) {
	if r.end >= 0 {
		p = p[:min(int64(len(p)), r.end-r.off)]
	}
	for {
		if len(p) == 0 && r.end >= 0 {
			return 0, io.EOF
		}
		if r.body == nil {
			if err := r.open(); err != nil {
				return 0, err
			}
		}
		n, err := r.body.Read(p)
		r.off += int64(n)
		if err == nil || err == io.EOF {
			return n, err
		}
		r.body.Close()
		r.body = nil
		if r.resumes++; r.resumes >= maxAttempts || r.ctx.Err() != nil {
			return n, r.b.fail("load", r.key, err)
		}
		if n > 0 {
			return n, nil
		}
	}
}

// Close closes the body.
func (r *reader) Close() error {
	if r.body == nil {
		return nil
	}
	return r.body.Close()
}
