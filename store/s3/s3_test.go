package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/s3"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

var ctx = context.Background()

// conformance runs the store conformance suite against srv, each test in
// a prefix of its own in one bucket.
func conformance(t *testing.T, srv *s3test.Server) {
	bucket := srv.Bucket(t, "conformance")
	var n atomic.Int32
	storetest.Run(t, func(t *testing.T) store.Backend {
		return s3.New(s3.NewClient(srv.Config()), bucket, fmt.Sprintf("runs/%d", n.Add(1)))
	})
}

func TestConformanceGofakes3(t *testing.T) { conformance(t, s3test.Gofakes3(t)) }

func TestConformanceVersitygw(t *testing.T) { conformance(t, s3test.Versitygw(t)) }

func put(t *testing.T, b store.Backend, h store.Handle, data []byte) {
	t.Helper()
	require.NoError(t, b.Save(ctx, h, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}))
}

func get(t *testing.T, b store.Backend, h store.Handle, offset, length int64) []byte {
	t.Helper()
	rc, err := b.Load(ctx, h, offset, length)
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	return data
}

// payload returns n bytes that differ from those of another seed.
func payload(n int, seed byte) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*31+i>>9) ^ seed
	}
	return data
}

func pendingUploads(t *testing.T, srv *s3test.Server, bucket string) int {
	t.Helper()
	out, err := awss3.NewFromConfig(srv.Config(), func(o *awss3.Options) { o.UsePathStyle = true }).
		ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &bucket})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload" {
		return 0 // gofakes3's answer for a bucket that never had one
	}
	require.NoError(t, err)
	return len(out.Uploads)
}

// TestMultipart: a file larger than a part goes up in parts, and comes
// back whole; ranges across parts read right; a write that fails halfway
// leaves nothing, no upload pending either; two writers of the same large
// object both succeed.
func TestMultipart(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bucket := srv.Bucket(t, "multipart")
			b := s3.New(s3.NewClient(srv.Config()), bucket, "p")
			data := payload(s3.PartSize*2+12345, 1)
			h := store.ObjectHandle(store.Sum(data))
			put(t, b, h, data)
			require.NoError(t, b.Flush(ctx, h))
			assert.True(t, bytes.Equal(data, get(t, b, h, 0, 0)), "the bytes come back")
			assert.Equal(t, data[s3.PartSize-5:s3.PartSize+5], get(t, b, h, s3.PartSize-5, 10), "a range across parts")
			fi, err := b.Stat(ctx, h)
			require.NoError(t, err)
			assert.Equal(t, int64(len(data)), fi.Size)

			// The same bytes again: If-None-Match refuses (or the server
			// overwrites), and the Save succeeds either way.
			put(t, b, h, data)
			assert.True(t, bytes.Equal(data, get(t, b, h, 0, 0)))

			boom := errors.New("boom")
			other := payload(s3.PartSize*2, 2)
			oh := store.ObjectHandle(store.Sum(other))
			err = b.Save(ctx, oh, func(w io.Writer) error {
				if _, err := w.Write(other[:s3.PartSize+1]); err != nil {
					return err
				}
				return boom
			})
			require.ErrorIs(t, err, boom)
			_, err = b.Stat(ctx, oh)
			assert.ErrorIs(t, err, store.ErrNotExist, "nothing of a failed Save")
			assert.Zero(t, pendingUploads(t, srv, bucket), "the failed upload is aborted")

			// A damaged large object is replaced by the Store.
			damaged := bytes.Clone(data)
			damaged[s3.PartSize+7] ^= 1
			put(t, b, h, damaged)
			s := store.New(b)
			_, created, err := s.PutStream(ctx, store.Sum(data), func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			})
			require.NoError(t, err)
			assert.True(t, created)
			require.NoError(t, s.Verify(ctx, store.Sum(data)))
		})
	}
}

// TestBuffersPerBackend: Saves at once hold the Backend's part buffers
// between them, not one more each. Four large Saves write while the server
// holds every part it is sent; when their writes stall, the bytes they took
// are what the Backend holds in memory: at most MaxBuffers parts, and what
// each Save keeps in a buffer of its own until one is free.
func TestBuffersPerBackend(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "buffers")
	var holding atomic.Bool
	holding.Store(true)
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if holding.Load() && r.Query.Has("partNumber") {
			return s3test.Fault{Delay: 3 * time.Second}
		}
		return s3test.Fault{}
	})
	b := s3.New(s3.NewClient(proxy.Config()), bucket, "p")
	const saves = 4
	var taken atomic.Int64
	errs := make(chan error, saves)
	datas := make([][]byte, saves)
	for i := range datas {
		datas[i] = payload(2*s3.PartSize+1, byte(i+1))
	}
	for i := range datas {
		go func() {
			errs <- b.Save(ctx, store.ObjectHandle(store.Sum(datas[i])), func(w io.Writer) error {
				for p := datas[i]; len(p) > 0; {
					n, err := w.Write(p[:min(len(p), 64<<10)])
					taken.Add(int64(n))
					if err != nil {
						return err
					}
					p = p[n:]
				}
				return nil
			})
		}()
	}
	// The writes stall once the buffers are taken: wait until the count
	// stands still.
	last := int64(-1)
	for taken.Load() != last {
		last = taken.Load()
		time.Sleep(300 * time.Millisecond)
	}
	holding.Store(false)
	assert.LessOrEqual(t, last, int64(s3.MaxBuffers*s3.PartSize+saves*s3.SmallBuffer),
		"bytes taken by %d Saves while the server holds their parts", saves)
	for range saves {
		require.NoError(t, <-errs)
	}
	for _, data := range datas {
		assert.True(t, bytes.Equal(data, get(t, b, store.ObjectHandle(store.Sum(data)), 0, 0)), "the bytes come back")
	}
}

// TestNoneMatch: an object whose bytes hash to its name is created only
// where none is; when one is there, the Save reads it, keeps it if intact,
// and replaces it if damaged (a race with a writer of damaged bytes, after
// the Store's check), in one PUT or in parts.
func TestNoneMatch(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		for _, size := range []int{100, s3.PartSize + 10} {
			t.Run(fmt.Sprint(srv.Name, "/", size), func(t *testing.T) {
				bucket := srv.Bucket(t, "nonematch")
				b := s3.New(s3.NewClient(srv.Config()), bucket, "")
				data := payload(size, 3)
				h := store.ObjectHandle(store.Sum(data))
				damaged := bytes.Clone(data)
				damaged[size/2] ^= 1
				put(t, b, h, damaged)
				put(t, b, h, data)
				assert.True(t, bytes.Equal(data, get(t, b, h, 0, 0)), "damaged bytes are replaced")
				before, err := b.Stat(ctx, h)
				require.NoError(t, err)
				time.Sleep(10 * time.Millisecond)
				put(t, b, h, data)
				after, err := b.Stat(ctx, h)
				require.NoError(t, err)
				if size < s3.PartSize || srv.Name != "gofakes3" {
					// gofakes3 ignores If-None-Match on the completion of a
					// multipart upload, and writes the same bytes again.
					assert.Equal(t, before.ModTime, after.ModTime, "intact bytes are left as they were")
				}
				assert.Zero(t, pendingUploads(t, srv, bucket))
			})
		}
	}
}

// TestAWSChecksums: with the SDK's default checksums, as against AWS
// itself, parts declare CRC32 and the completion lists them.
func TestAWSChecksums(t *testing.T) {
	srv := s3test.Versitygw(t)
	b := s3.New(s3.NewClient(srv.Config(), func(o *awss3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	}), srv.Bucket(t, "checksums"), "p")
	for _, size := range []int{100, s3.PartSize*2 + 10} {
		data := payload(size, 4)
		h := store.ObjectHandle(store.Sum(data))
		put(t, b, h, data)
		assert.True(t, bytes.Equal(data, get(t, b, h, 0, 0)), "size %d", size)
	}
}

// TestLayout: keys are the local store's paths below the prefix, and
// what stands under the kinds' folders that cannot be a file of the kind
// is listed as bad, while temporary files and folder markers are not
// listed at all.
func TestLayout(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "layout")
	client := awss3.NewFromConfig(srv.Config(), func(o *awss3.Options) { o.UsePathStyle = true })
	b := s3.New(s3.NewClient(srv.Config()), bucket, "team/store")
	assert.Equal(t, "s3://"+bucket+"/team/store", b.Location())
	data := []byte("an artifact")
	d := store.Sum(data)
	h := store.ObjectHandle(d)
	put(t, b, h, data)
	put(t, b, store.Handle{Kind: store.Segment, Name: "w.jsonl"}, []byte("{}\n"))
	assert.Equal(t, "s3://"+bucket+"/team/store/objects/"+d.String()[:2]+"/"+d.String(), b.Path(h))

	raw := func(key string) []byte {
		out, err := client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &bucket, Key: aws.String(key)})
		require.NoError(t, err, key)
		defer out.Body.Close()
		got, err := io.ReadAll(out.Body)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, data, raw("team/store/objects/"+d.String()[:2]+"/"+d.String()))
	assert.Equal(t, "{}\n", string(raw("team/store/registry/w.jsonl")))

	other := store.Sum([]byte("elsewhere")).String()
	for _, key := range []string{
		"team/store/objects/zz/" + other,
		"team/store/objects/" + other[:2] + "/junk",
		"team/store/objects/" + other[:2] + "/.tmp-123",
		"team/store/objects/" + other[:2] + "/",
		"team/store/registry/sub/x.jsonl",
		"team/store/registry/.tmp-w.jsonl",
		"team/other/objects/" + other[:2] + "/" + other,
	} {
		_, err := client.PutObject(ctx, &awss3.PutObjectInput{Bucket: &bucket, Key: aws.String(key), Body: strings.NewReader("x")})
		require.NoError(t, err, key)
	}
	list := func(k store.Kind, prefix string) (good, bad []string) {
		require.NoError(t, b.List(ctx, k, prefix, func(fi store.FileInfo) error {
			if fi.Bad != nil {
				bad = append(bad, fi.Name)
			} else {
				good = append(good, fi.Name)
			}
			return nil
		}))
		return good, bad
	}
	good, bad := list(store.Object, "")
	assert.Equal(t, []string{d.String()}, good)
	assert.ElementsMatch(t, []string{"objects/zz/" + other, "objects/" + other[:2] + "/junk"}, bad)
	good, bad = list(store.Object, d.String()[:3])
	assert.Equal(t, []string{d.String()}, good)
	assert.Empty(t, bad, "a listing by prefix reports nothing bad")
	good, bad = list(store.Segment, "")
	assert.Equal(t, []string{"w.jsonl"}, good)
	assert.Equal(t, []string{"registry/sub/x.jsonl"}, bad)
}

func TestParseURL(t *testing.T) {
	for _, tt := range []struct {
		in             string
		bucket, prefix string
		bad            bool
	}{
		{in: "s3://bucket", bucket: "bucket"},
		{in: "s3://bucket/", bucket: "bucket"},
		{in: "s3://bucket/a/b/", bucket: "bucket", prefix: "a/b"},
		{in: "s3://bucket/a", bucket: "bucket", prefix: "a"},
		{in: "s3:///a", bad: true},
		{in: "s3://bucket/a//b", bad: true},
		{in: "s3://bucket/a/../b", bad: true},
		{in: "s3://user@bucket/a", bad: true},
		{in: "s3://bucket/a?versionId=1", bad: true},
		{in: "gs://bucket/a", bad: true},
	} {
		bucket, prefix, err := s3.ParseURL(tt.in)
		if tt.bad {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.bucket, bucket, tt.in)
		assert.Equal(t, tt.prefix, prefix, tt.in)
	}
}

// TestMissingBucket: a bucket that is not there is an error that names it,
// not a store of missing artifacts.
func TestMissingBucket(t *testing.T) {
	srv := s3test.Gofakes3(t)
	b := s3.New(s3.NewClient(srv.Config()), "no-such-bucket", "p")
	h := store.ObjectHandle(store.Sum([]byte("x")))
	_, err := b.Load(ctx, h, 0, 0)
	require.Error(t, err)
	assert.NotErrorIs(t, err, store.ErrNotExist)
	assert.ErrorContains(t, err, "s3://no-such-bucket/p/objects/")
	assert.ErrorContains(t, err, "HTTP 404")
	err = b.List(ctx, store.Object, "", func(store.FileInfo) error { return nil })
	assert.ErrorContains(t, err, "no-such-bucket")
}

// TestTouchOldObject: on a server whose copy of an object onto itself
// keeps its LastModified (versitygw's posix backend keeps the file's
// mtime), Touch of an object older than a minute still makes it now.
func TestTouchOldObject(t *testing.T) {
	srv := s3test.Versitygw(t)
	bucket := srv.Bucket(t, "touch")
	b := s3.New(s3.NewClient(srv.Config()), bucket, "p")
	data := []byte("an old artifact")
	h := store.ObjectHandle(store.Sum(data))
	put(t, b, h, data)
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(srv.Dir, bucket, "p", filepath.FromSlash(store.Key(h))), old, old))
	fi, err := b.Stat(ctx, h)
	require.NoError(t, err)
	require.WithinDuration(t, old, fi.ModTime, time.Second)

	start := time.Now().Add(-time.Second)
	require.NoError(t, b.Touch(ctx, h))
	fi, err = b.Stat(ctx, h)
	require.NoError(t, err)
	assert.True(t, fi.ModTime.After(start), "Stat: %v, not after %v", fi.ModTime, start)
	var listed time.Time
	require.NoError(t, b.List(ctx, store.Object, "", func(fi store.FileInfo) error {
		listed = fi.ModTime
		return nil
	}))
	assert.True(t, listed.After(start), "List: %v, not after %v", listed, start)
	assert.Equal(t, data, get(t, b, h, 0, 0))
	assert.Zero(t, pendingUploads(t, srv, bucket))
	entries, err := os.ReadDir(filepath.Dir(filepath.Join(srv.Dir, bucket, "p", filepath.FromSlash(store.Key(h)))))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary copy is left")
}

// TestFaults: through a proxy that fails one request in three (a 500, a
// 503, a 429, a reset connection, a response body cut short, a slow
// answer), Save, Load, Stat, List, Touch and Remove all succeed, by
// retrying and resuming.
func TestFaults(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		for _, f := range []s3test.Fault{
			{Status: 500}, {Status: 503}, {Status: 429}, {Reset: true}, {CutAfter: 100}, {Delay: 50 * time.Millisecond},
		} {
			t.Run(srv.Name+"/"+f.String(), func(t *testing.T) {
				bucket := srv.Bucket(t, "faults")
				proxy := s3test.NewProxy(t, srv, s3test.EveryNth(3, f))
				b := s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p")
				s := store.New(b)
				var ds []store.Digest
				for i := 0; i < 12; i++ {
					d, _, err := s.Put(ctx, payload(1000+i*100, byte(i)))
					require.NoError(t, err)
					ds = append(ds, d)
				}
				large := payload(s3.PartSize+4096, 99)
				_, _, err := s.PutStream(ctx, store.Sum(large), func(w io.Writer) error {
					_, err := w.Write(large)
					return err
				})
				require.NoError(t, err)
				ds = append(ds, store.Sum(large))
				for _, d := range ds {
					require.NoError(t, s.Verify(ctx, d))
					_, err := s.Stat(ctx, d)
					require.NoError(t, err)
				}
				n := 0
				require.NoError(t, s.Each(ctx, func(store.Digest, store.FileInfo) error { n++; return nil },
					func(name string, why error) { t.Errorf("bad %s: %v", name, why) }))
				assert.Equal(t, len(ds), n)
				require.NoError(t, b.Touch(ctx, store.ObjectHandle(ds[0])))
				require.NoError(t, s.Remove(ctx, ds[1]))
				_, err = s.Stat(ctx, ds[1])
				assert.ErrorIs(t, err, store.ErrNotFound)
				assert.NotEmpty(t, proxy.Faults(), "faults were injected")
			})
		}
	}
}

// fastRetries keeps the backend's retry policy, with backoffs of
// milliseconds, for tests that fail many requests.
func fastRetries(o *awss3.Options) {
	o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, 5*time.Millisecond)
}

// TestPersistentFailure: a server that keeps failing gets the bounded
// number of tries, and the error names the key and the HTTP status.
func TestPersistentFailure(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "failing")
	proxy := s3test.NewProxy(t, srv, nil)
	b := s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p")
	data := []byte("never stored")
	h := store.ObjectHandle(store.Sum(data))
	url := "s3://" + bucket + "/p/objects/" + h.Name[:2] + "/" + h.Name
	for _, f := range []s3test.Fault{{Status: 503}, {Status: 500}, {Reset: true}} {
		proxy.SetFault(func(s3test.Request) s3test.Fault { return f })
		before := proxy.Requests()
		err := b.Save(ctx, h, func(w io.Writer) error { _, err := w.Write(data); return err })
		require.Error(t, err, f.String())
		assert.ErrorContains(t, err, url, f.String())
		if f.Status != 0 {
			assert.ErrorContains(t, err, fmt.Sprintf("HTTP %d", f.Status))
		}
		assert.Equal(t, s3.MaxAttempts, proxy.Requests()-before, "%s: tries", f)

		_, err = b.Load(ctx, h, 0, 0)
		require.Error(t, err)
		assert.NotErrorIs(t, err, store.ErrNotExist)
		assert.ErrorContains(t, err, url)
		_, err = b.Stat(ctx, h)
		assert.ErrorContains(t, err, url)
		assert.ErrorContains(t, b.Touch(ctx, h), url)
		assert.ErrorContains(t, b.Remove(ctx, h), url)
		assert.ErrorContains(t, b.List(ctx, store.Object, "", func(store.FileInfo) error { return nil }), "s3://"+bucket+"/p/objects/")
	}

	proxy.SetFault(nil)
	put(t, b, h, data)
	// A body broken more often than the reader resumes fails, naming the key.
	proxy.SetFault(func(r s3test.Request) s3test.Fault {
		if r.Method == "GET" {
			return s3test.Fault{CutAfter: 1}
		}
		return s3test.Fault{}
	})
	rc, err := b.Load(ctx, h, 0, 0)
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	rc.Close()
	assert.ErrorContains(t, err, url)
}

// TestStreamedMemory: a 1 GiB Save streams through bounded memory. It
// takes a while, so it runs only with TT_S3_MEMTEST=1, against versitygw
// (a server in another process, whose memory is not counted).
func TestStreamedMemory(t *testing.T) {
	if os.Getenv("TT_S3_MEMTEST") != "1" {
		t.Skip("TT_S3_MEMTEST=1 runs it")
	}
	srv := s3test.Versitygw(t)
	b := s3.New(s3.NewClient(srv.Config()), srv.Bucket(t, "memory"), "p")
	const size = 1 << 30
	gen := func(w io.Writer) error {
		chunk := make([]byte, 256<<10)
		for off := 0; off < size; off += len(chunk) {
			for i := 0; i < len(chunk); i += 8 {
				chunk[i] = byte(off>>18) ^ byte(i)
			}
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
	sum := sha256.New()
	require.NoError(t, gen(sum))
	d := store.Digest(sum.Sum(nil))

	peak := s3test.WatchMemory(t)
	start := time.Now()
	_, created, err := store.New(b).PutStream(ctx, d, gen)
	require.NoError(t, err)
	require.True(t, created)
	elapsed := time.Since(start)
	m := peak()
	t.Logf("1 GiB streamed in %v: peak heap in use %d MiB, Go runtime total %d MiB, peak RSS %d MiB",
		elapsed.Round(time.Millisecond), m.HeapInuse>>20, m.Sys>>20, m.RSS>>20)
	assert.Less(t, m.HeapInuse, uint64(48<<20))
	assert.Less(t, m.RSS, uint64(64<<20))
	fi, err := b.Stat(ctx, store.ObjectHandle(d))
	require.NoError(t, err)
	assert.Equal(t, int64(size), fi.Size)
}

// TestFlush: Flush confirms what this Backend saved without a request, and
// reports a handle that is not there: never saved, or removed since.
func TestFlush(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "flush")
	proxy := s3test.NewProxy(t, srv, nil)
	b := s3.New(s3.NewClient(proxy.Config()), bucket, "p")
	data := []byte("saved")
	h := store.ObjectHandle(store.Sum(data))
	put(t, b, h, data)
	before := proxy.Requests()
	require.NoError(t, b.Flush(ctx, h))
	assert.Equal(t, before, proxy.Requests(), "no request for what Save stored")

	never := store.ObjectHandle(store.Sum([]byte("never saved")))
	assert.ErrorIs(t, b.Flush(ctx, h, never), store.ErrNotExist)
	require.NoError(t, b.Remove(ctx, h))
	assert.ErrorIs(t, b.Flush(ctx, h), store.ErrNotExist)

	// Another run's Backend finds what is there.
	put(t, b, h, data)
	require.NoError(t, s3.New(s3.NewClient(proxy.Config()), bucket, "p").Flush(ctx, h))
}

// TestLocker runs the suite of store.Locker against each server: the
// store's lock made of leases.
func TestLocker(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bucket := srv.Bucket(t, "locker")
			client := s3.NewClient(srv.Config())
			var n atomic.Int32
			storetest.RunLocker(t, func(t *testing.T) func() store.Backend {
				prefix := fmt.Sprintf("runs/%d", n.Add(1))
				return func() store.Backend { return s3.New(client, bucket, prefix) }
			})
		})
	}
}

// TestLeaseOfTheDead: the lease of a writer that died, never removed,
// keeps a collector waiting no longer than the lease's time to live (and
// the second LastModified may be off by), and is removed by it.
func TestLeaseOfTheDead(t *testing.T) {
	const ttl = 3 * time.Second
	s3.SetLeaseTTL(t, ttl, 100*time.Millisecond)
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bucket := srv.Bucket(t, "dead")
			client := s3.NewClient(srv.Config())
			dead := s3.New(client, bucket, "p")
			_, _, err := store.New(dead).Put(ctx, []byte("written by a writer that dies"))
			require.NoError(t, err)
			died := time.Now()
			dead.Die()
			require.Len(t, keys(t, client, bucket, "p/locks/"), 1)

			waited := 0
			c, cancel := context.WithTimeout(ctx, 3*ttl)
			defer cancel()
			lock, err := s3.New(client, bucket, "p").LockExclusive(c, func() { waited++ })
			require.NoError(t, err)
			took := time.Since(died)
			t.Logf("the collector went on %v after the writer died", took.Round(time.Millisecond))
			assert.Equal(t, 1, waited)
			assert.Greater(t, took, ttl-time.Second, "a live lease was taken as expired")
			assert.Less(t, took, ttl+3*time.Second, "the dead writer's lease held the collector past its time")
			require.NoError(t, lock.Close())
			assert.Empty(t, keys(t, client, bucket, "p/locks/"), "the dead lease and the collector's are removed")
		})
	}
}

// TestLeaseLost: a writer whose lease cannot be renewed (every request
// to its key fails) stops relying on it half a time to live after its
// last renewal: a write fails, saying so, until Release; a later write
// takes a new lease. A collector's lock says so too.
func TestLeaseLost(t *testing.T) {
	const ttl = 1200 * time.Millisecond
	s3.SetLeaseTTL(t, ttl, 50*time.Millisecond)
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "lost")
	var failing atomic.Bool
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if failing.Load() && strings.Contains(r.Key, "/locks/") {
			return s3test.Fault{Status: 403}
		}
		return s3test.Fault{}
	})
	b := s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p")
	s := store.New(b)
	_, _, err := s.Put(ctx, []byte("before"))
	require.NoError(t, err)
	collector := s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "q")
	lock, err := collector.LockExclusive(ctx, nil)
	require.NoError(t, err)

	failing.Store(true)
	time.Sleep(ttl / 2)
	_, _, err = s.Put(ctx, []byte("after"))
	require.ErrorIs(t, err, store.ErrLockLost)
	assert.ErrorContains(t, err, "s3://"+bucket+"/p/locks/shared-")
	assert.ErrorContains(t, err, "HTTP 403")
	assert.ErrorIs(t, lock.Held(), store.ErrLockLost)

	failing.Store(false)
	time.Sleep(ttl / 6)
	_, _, err = s.Put(ctx, []byte("after"))
	require.ErrorIs(t, err, store.ErrLockLost, "lost until Release, though renewals work again")
	require.NoError(t, b.Release())
	_, _, err = s.Put(ctx, []byte("after"))
	require.NoError(t, err)
	require.NoError(t, b.Release())
	require.NoError(t, lock.Close())
}

// TestRemoveUnchanged: a conditional deletion spares an object touched
// since its Stat where the server honours If-Match-Last-Modified-Time
// (versitygw), and deletes it where the server ignores it (gofakes3);
// one that answers 501 gets an unconditional deletion.
func TestRemoveUnchanged(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			bucket := srv.Bucket(t, "unchanged")
			b := s3.New(s3.NewClient(srv.Config()), bucket, "p")
			data := []byte("an old artifact")
			h := store.ObjectHandle(store.Sum(data))
			put(t, b, h, data)
			srv.Age(t, bucket, "p/objects/", time.Now().Add(-48*time.Hour))
			seen, err := b.Stat(ctx, h)
			require.NoError(t, err)
			require.NoError(t, b.Touch(ctx, h))

			removed, err := b.RemoveUnchanged(ctx, h, seen)
			require.NoError(t, err)
			_, statErr := b.Stat(ctx, h)
			if srv.Name == "versitygw" {
				assert.False(t, removed, "touched since: kept")
				require.NoError(t, statErr)
				now, err := b.Stat(ctx, h)
				require.NoError(t, err)
				removed, err = b.RemoveUnchanged(ctx, h, now)
				require.NoError(t, err)
				assert.True(t, removed, "unchanged since: deleted")
				_, statErr = b.Stat(ctx, h)
			} else {
				assert.True(t, removed, "the condition is ignored")
			}
			assert.ErrorIs(t, statErr, store.ErrNotExist)
		})
	}

	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "unconditional")
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if r.Method == "DELETE" && r.Header.Get("X-Amz-If-Match-Last-Modified-Time") != "" {
			return s3test.Fault{Status: 501}
		}
		return s3test.Fault{}
	})
	b := s3.New(s3.NewClient(proxy.Config()), bucket, "p")
	for i, data := range [][]byte{[]byte("an artifact"), []byte("another")} {
		h := store.ObjectHandle(store.Sum(data))
		put(t, b, h, data)
		seen, err := b.Stat(ctx, h)
		require.NoError(t, err)
		removed, err := b.RemoveUnchanged(ctx, h, seen)
		require.NoError(t, err)
		assert.True(t, removed)
		_, err = b.Stat(ctx, h)
		assert.ErrorIs(t, err, store.ErrNotExist)
		assert.Len(t, proxy.Faults(), 1, "%d: asked on condition once", i)
	}
}

// keys lists the keys below prefix in bucket.
func keys(t *testing.T, client *awss3.Client, bucket, prefix string) []string {
	t.Helper()
	out, err := client.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	require.NoError(t, err)
	var ks []string
	for _, o := range out.Contents {
		ks = append(ks, aws.ToString(o.Key))
	}
	return ks
}

// TestRacedFolder: versitygw's posix backend fails a PUT with a 409
// ExistingObjectIsDirectory when it loses a race for the key's folder
// with a delete that removes it; through a proxy that answers every
// second PUT so, Save succeeds by retrying, and a HEAD answered with a
// 409 (no code: a HEAD has no body) is not retried.
func TestRacedFolder(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "raced")
	n := 0
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if r.Method != "PUT" {
			return s3test.Fault{}
		}
		if n++; n%2 == 1 {
			return s3test.Fault{Status: 409, Code: "ExistingObjectIsDirectory"}
		}
		return s3test.Fault{}
	})
	s := store.New(s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p"))
	for i := range 4 {
		d, _, err := s.Put(ctx, payload(1000+i, byte(i)))
		require.NoError(t, err)
		require.NoError(t, s.Verify(ctx, d))
	}
	assert.GreaterOrEqual(t, len(proxy.Faults()), 4, "a PUT of each object failed once")
}

// TestLeaseRenewalOutlivesClose checks that a lease is removed only once
// every renewal of it has been answered: a renewal that its holder
// stopped waiting for, and the server does after the removal, would
// leave a lease that keeps collectors out until it expires.
func TestLeaseRenewalOutlivesClose(t *testing.T) {
	const ttl = 600 * time.Millisecond // renewed every 100 ms
	s3.SetLeaseTTL(t, ttl, 20*time.Millisecond)
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "late-renewal")
	const lateBy = 250 * time.Millisecond
	var (
		mu    sync.Mutex
		first string // the key of the first lease written
	)
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if r.Method != "PUT" || !strings.Contains(r.Key, "/locks/") {
			return s3test.Fault{}
		}
		mu.Lock()
		defer mu.Unlock()
		switch first {
		case "":
			first = r.Key // taken
		case r.Key:
			return s3test.Fault{Late: lateBy} // renewed
		}
		return s3test.Fault{}
	})
	open := func() *s3.Backend { return s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p") }
	lock, err := open().LockExclusive(ctx, nil)
	require.NoError(t, err)
	for len(proxy.Faults()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(ttl / 6) // the renewal is no longer waited for, if it ever was
	require.NoError(t, lock.Close())
	time.Sleep(2 * lateBy) // the late renewal has been done by now
	lock, err = open().LockExclusive(ctx, func() { t.Error("waited for a lease left behind") })
	require.NoError(t, err)
	require.NoError(t, lock.Close())
}

// TestLeaseWriteOutlivesCaller: a collector whose context ends while the
// server still has its lease to write leaves no lease behind. It waits
// for the write's answer before it removes the lease, so that the
// removal cannot reach the server first and the write land after it,
// keeping every other writer and collector out until the lease expires.
func TestLeaseWriteOutlivesCaller(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "late")
	var late atomic.Bool
	late.Store(true)
	const lateBy = 300 * time.Millisecond
	proxy := s3test.NewProxy(t, srv, func(r s3test.Request) s3test.Fault {
		if r.Method == "PUT" && strings.Contains(r.Key, "/locks/") && late.Swap(false) {
			return s3test.Fault{Late: lateBy}
		}
		return s3test.Fault{}
	})
	open := func() *s3.Backend { return s3.New(s3.NewClient(proxy.Config(), fastRetries), bucket, "p") }
	c, cancel := context.WithTimeout(ctx, lateBy/6)
	defer cancel()
	_, err := open().LockExclusive(c, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, proxy.Faults(), 1, "the lease's write was late")
	time.Sleep(2 * lateBy) // the late write has been done by now
	lock, err := open().LockExclusive(ctx, func() { t.Error("waited for a lease left behind") })
	require.NoError(t, err)
	require.NoError(t, lock.Close())
}
