package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/transcript-tool/transcript-tool/store"
)

const (
	// partSize is the size of a multipart upload's parts, and the largest
	// file sent in one PUT: most artifacts are far smaller and go in one
	// request; a larger one is cut into parts of this size, which S3
	// allows up to 10,000 of (maxParts), so files up to 48.8 GiB. It is
	// the smallest part S3 takes, since a part's bytes are held in memory
	// until S3 has them.
	partSize = 5 << 20
	maxParts = 10000
	// maxBuffers bounds the part buffers of a Backend, over all its
	// Saves: the ones being filled and the ones on their way. A Save holds
	// one while it fills it and hands it to the part's upload when full,
	// so a lone Save has one part on its way while it fills the next, and
	// the Saves of a Backend take 10 MiB of part buffers at most.
	//
	// The buffers are live heap, and the collector's limit is twice the
	// live heap once that is more than half its floor of 40 MiB (see
	// cmd/transcript-tool/memory.go): with three buffers, migrate of a
	// line of 3·10^9 bytes into versitygw peaked at 66.0 MiB RSS, with two
	// at 60.9 MiB, the limit staying at its floor however long the line.
	// The second part on its way bought no speed on loopback (a line of
	// 3·10^8 bytes: 5.6 s with three buffers, 5.2 s with two, medians of
	// 5); against a distant server, one connection's speed is the bound.
	maxBuffers = 2
	// smallBuffer is how far a file's first bytes grow in a buffer of
	// their own size before a whole part's buffer is taken: the many
	// small artifacts never touch the pool.
	smallBuffer = 1 << 20
	// abortTimeout bounds the abort of a failed multipart upload, which
	// runs even when the Save's context is done.
	abortTimeout = time.Minute
)

// parts recycles part buffers between Saves.
var parts = sync.Pool{New: func() any { return new([partSize]byte) }}

// upload is the io.Writer a Save's write writes to: it fills a part's
// buffer, and sends the bytes in one PUT if they fit in it, else as a
// multipart upload whose parts go out while the next one fills.
type upload struct {
	b      *Backend
	parent context.Context
	ctx    context.Context // canceled when a part fails, or when done
	cancel context.CancelFunc
	h      store.Handle
	key    string
	// sum hashes an object's bytes, to tell whether they are the object
	// its name names (see conditional).
	sum hash.Hash

	buf  []byte
	full *[partSize]byte // buf's array when it is a pooled part buffer

	id   *string // the multipart upload's, once started
	next int32   // the number of the next part
	wg   sync.WaitGroup

	mu   sync.Mutex
	err  error // the first part's failure
	done []types.CompletedPart
}

func (b *Backend) newUpload(ctx context.Context, h store.Handle, key string) *upload {
	u := &upload{b: b, parent: ctx, h: h, key: key, next: 1}
	u.ctx, u.cancel = context.WithCancel(ctx)
	if h.Kind == store.Object {
		u.sum = sha256.New()
	}
	return u
}

func (u *upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// Write buffers p, sending each part as it fills; a part's failure fails
// the Writes after it.
func (u *upload) Write(p []byte) (int, error) {
	if err := u.failed(); err != nil {
		return 0, err
	}
	if u.sum != nil {
		u.sum.Write(p)
	}
	written := 0
	for len(p) > 0 {
		if len(u.buf) == partSize {
			if err := u.sendPart(false); err != nil {
				return written, err
			}
		}
		if u.full == nil && len(u.buf)+len(p) > smallBuffer {
			small := u.buf
			if err := u.take(); err != nil {
				return written, err
			}
			u.buf = append(u.buf, small...)
		}
		n := min(len(p), partSize-len(u.buf))
		u.buf = append(u.buf, p[:n]...)
		p, written = p[n:], written+n
	}
	return written, nil
}

// take waits for one of the Backend's part buffers (see maxBuffers) and
// makes it the one being filled.
func (u *upload) take() error {
	select {
	case u.b.buffers <- struct{}{}:
	case <-u.ctx.Done():
		if err := u.failed(); err != nil {
			return err
		}
		return fmt.Errorf("save %s: %w", u.b.url(u.key), u.ctx.Err())
	}
	u.full = parts.Get().(*[partSize]byte)
	u.buf = u.full[:0]
	return nil
}

// sendPart starts the upload of the full buffer as the next part, and
// unless it is the last part waits for a fresh buffer: a Save holds at
// most one buffer besides the parts on their way, and the Backend at most
// maxBuffers.
func (u *upload) sendPart(last bool) error {
	if u.id == nil {
		out, err := u.b.client.CreateMultipartUpload(u.ctx, &awss3.CreateMultipartUploadInput{
			Bucket:            &u.b.bucket,
			Key:               &u.key,
			ContentType:       aws.String(contentType),
			Metadata:          mtime(),
			ChecksumAlgorithm: u.b.partChecksum,
		})
		if err != nil {
			return u.b.fail("save: start multipart upload to", u.key, err)
		}
		u.id = out.UploadId
	}
	if u.next > maxParts {
		return fmt.Errorf("save %s: larger than %d parts of %d bytes", u.b.url(u.key), maxParts, partSize)
	}
	num, buf, full := u.next, u.buf, u.full
	u.next++
	u.buf, u.full = nil, nil
	u.wg.Go(func() {
		defer u.b.giveBack(full)
		out, err := u.b.client.UploadPart(u.ctx, &awss3.UploadPartInput{
			Bucket:            &u.b.bucket,
			Key:               &u.key,
			UploadId:          u.id,
			PartNumber:        &num,
			Body:              bytes.NewReader(buf),
			ContentLength:     aws.Int64(int64(len(buf))),
			ChecksumAlgorithm: u.b.partChecksum,
		})
		u.mu.Lock()
		defer u.mu.Unlock()
		if err != nil {
			if u.err == nil {
				u.err = u.b.fail(fmt.Sprintf("save: upload part %d of", num), u.key, err)
			}
			u.cancel()
			return
		}
		u.done = append(u.done, types.CompletedPart{
			PartNumber:        &num,
			ETag:              out.ETag,
			ChecksumCRC32:     out.ChecksumCRC32,
			ChecksumCRC32C:    out.ChecksumCRC32C,
			ChecksumCRC64NVME: out.ChecksumCRC64NVME,
			ChecksumSHA1:      out.ChecksumSHA1,
			ChecksumSHA256:    out.ChecksumSHA256,
		})
	})
	if last {
		return nil
	}
	return u.take()
}

// giveBack returns a part buffer taken by take.
func (b *Backend) giveBack(full *[partSize]byte) {
	parts.Put(full)
	<-b.buffers
}

func mtime() map[string]string {
	return map[string]string{mtimeMeta: time.Now().UTC().Format(time.RFC3339Nano)}
}

// conditional returns "*" for If-None-Match when the bytes are an
// object's and hash to its name: the object is then created only where
// none is, since an intact one holds these very bytes. Other bytes
// (a registry segment, or bytes a test plants as damage) replace what is
// there, as Save's contract says.
func (u *upload) conditional() *string {
	if u.sum == nil {
		return nil
	}
	d, err := store.ParseDigest(u.h.Name)
	if err != nil || !bytes.Equal(u.sum.Sum(nil), d[:]) {
		return nil
	}
	return aws.String("*")
}

// finish stores what was written: in one PUT, or by completing the
// multipart upload. Refused with 412 under If-None-Match, it reads the
// object there: intact, it is the same bytes and Save is done; damaged,
// it is replaced.
func (u *upload) finish() error {
	defer u.cancel()
	defer u.release()
	cond := u.conditional()
	if u.id == nil {
		err := u.put(cond)
		if cond != nil && PreconditionFailed(err) {
			var ok bool
			if ok, err = u.b.intact(u.parent, u.h, u.key); err == nil && !ok {
				err = u.put(nil)
			}
		}
		return err
	}
	if len(u.buf) > 0 {
		if err := u.sendPart(true); err != nil {
			return u.abort(err)
		}
	}
	u.wg.Wait()
	if err := u.failed(); err != nil {
		return u.abort(err)
	}
	slices.SortFunc(u.done, func(a, b types.CompletedPart) int { return int(*a.PartNumber - *b.PartNumber) })
	err := u.complete(cond)
	if cond != nil && PreconditionFailed(err) {
		var ok bool
		if ok, err = u.b.intact(u.parent, u.h, u.key); err == nil {
			if ok {
				return u.abort(nil)
			}
			err = u.complete(nil)
		}
	}
	if err != nil {
		return u.abort(err)
	}
	return nil
}

func (u *upload) put(ifNoneMatch *string) error {
	_, err := u.b.client.PutObject(u.ctx, &awss3.PutObjectInput{
		Bucket:        &u.b.bucket,
		Key:           &u.key,
		Body:          bytes.NewReader(u.buf),
		ContentLength: aws.Int64(int64(len(u.buf))),
		ContentType:   aws.String(contentType),
		Metadata:      mtime(),
		IfNoneMatch:   ifNoneMatch,
	})
	if err != nil {
		return u.b.fail("save", u.key, err)
	}
	return nil
}

func (u *upload) complete(ifNoneMatch *string) error {
	_, err := u.b.client.CompleteMultipartUpload(u.ctx, &awss3.CompleteMultipartUploadInput{
		Bucket:          &u.b.bucket,
		Key:             &u.key,
		UploadId:        u.id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: u.done},
		IfNoneMatch:     ifNoneMatch,
	})
	if err != nil {
		return u.b.fail("save: complete multipart upload to", u.key, err)
	}
	return nil
}

// abort ends a failed Save: it stops the parts on their way and aborts the
// multipart upload, so that nothing of it is left, and returns err (joined
// with the abort's failure, if any).
func (u *upload) abort(err error) error {
	u.cancel()
	u.wg.Wait()
	u.release()
	if u.id == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.parent), abortTimeout)
	defer cancel()
	if _, aerr := u.b.client.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{
		Bucket: &u.b.bucket, Key: &u.key, UploadId: u.id,
	}); aerr != nil {
		return errors.Join(err, u.b.fail("save: abort multipart upload to", u.key, aerr))
	}
	u.id = nil
	return err
}

// release gives the part buffer being filled back.
func (u *upload) release() {
	if u.full != nil {
		u.b.giveBack(u.full)
	}
	u.buf, u.full = nil, nil
}
