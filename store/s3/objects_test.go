package s3_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// TestObjects: an object is put, stated, listed, read, copied and
// removed; a put or a copy whose ETag no longer holds is refused as such
// (ok false) and changes nothing; a missing key is store.ErrNotExist,
// named by its URL.
func TestObjects(t *testing.T) {
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			o := s3.NewObjects(s3.NewClient(srv.Config()))
			bkt := srv.Bucket(t, "objects")
			put := func(key, body string, ifMatch *string) bool {
				t.Helper()
				ok, err := o.Put(ctx, bkt, key, strings.NewReader(body), int64(len(body)), ifMatch)
				require.NoError(t, err)
				return ok
			}
			require.True(t, put("p/a.jsonl", "one\n", nil))
			size, etag, err := o.Stat(ctx, bkt, "p/a.jsonl")
			require.NoError(t, err)
			assert.Equal(t, int64(4), size)

			var keys []string
			require.NoError(t, o.List(ctx, bkt, "p/", func(key string, size int64) { keys = append(keys, key) }))
			assert.Equal(t, []string{"p/a.jsonl"}, keys)

			body, got, err := o.Get(ctx, bkt, "p/a.jsonl")
			require.NoError(t, err)
			b, err := io.ReadAll(body)
			require.NoError(t, err)
			require.NoError(t, body.Close())
			assert.Equal(t, "one\n", string(b))
			assert.Equal(t, etag, got)

			ok, err := o.Copy(ctx, bkt, "p/a.jsonl", "p/a.jsonl.bak", etag)
			require.NoError(t, err)
			assert.True(t, ok)
			require.True(t, put("p/a.jsonl", "two\n", &etag), "the ETag read holds")
			require.NoError(t, o.Delete(ctx, bkt, "p/a.jsonl.bak"))
			_, _, err = o.Stat(ctx, bkt, "p/a.jsonl.bak")
			require.ErrorIs(t, err, store.ErrNotExist)
			assert.Contains(t, err.Error(), "s3://"+bkt+"/p/a.jsonl.bak")
			if srv.Name != "versitygw" {
				return // gofakes3 ignores If-Match and x-amz-copy-source-if-match
			}
			assert.False(t, put("p/a.jsonl", "three\n", &etag), "the ETag read no longer holds")
			ok, err = o.Copy(ctx, bkt, "p/a.jsonl", "p/b.jsonl.bak", etag)
			require.NoError(t, err)
			assert.False(t, ok, "the ETag read no longer holds")
			body, _, err = o.Get(ctx, bkt, "p/a.jsonl")
			require.NoError(t, err)
			b, _ = io.ReadAll(body)
			require.NoError(t, body.Close())
			assert.True(t, bytes.Equal([]byte("two\n"), b), "a refused put changes nothing")
			_, _, err = o.Stat(ctx, bkt, "p/b.jsonl.bak")
			require.ErrorIs(t, err, store.ErrNotExist, "a refused copy makes nothing")
		})
	}
}
