package bucket

import (
	"bytes"
	"context"
	"strings"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// TestList: a prefix lists its transcripts with keys relative to it, and
// skips what session.Collect skips on disk: stores (by their artifacts'
// keys, or named artifacts/), hidden keys and folders, backups,
// trajectories and files of other kinds; a key names one object.
func TestList(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bkt := srv.Bucket(t, "tt-list")
	raw := awss3.NewFromConfig(srv.Config(), func(o *awss3.Options) { o.UsePathStyle = true })
	digest := strings.Repeat("ab", 32)
	for _, key := range []string{
		"p/a.jsonl", "p/sub/b.jsonl.zst", "p/sub/c.jsonl.bak", "p/notes.txt", "p/.hidden.jsonl",
		"p/.git/x.jsonl", "p/x.trajectory.jsonl", "p/artifacts/registry/w.jsonl",
		"p/st/objects/ab/" + digest, "p/st/registry/w.jsonl", "p/registry/d.jsonl", "q/other.jsonl",
	} {
		_, err := raw.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: &bkt, Key: &key, Body: bytes.NewReader([]byte("{}\n"))})
		require.NoError(t, err)
	}
	c := New(s3.NewObjects(s3.NewClient(srv.Config())))

	objs, err := c.List(context.Background(), "s3://"+bkt+"/p/")
	require.NoError(t, err)
	var rels []string
	for _, o := range objs {
		rels = append(rels, o.Rel)
		assert.False(t, o.Explicit)
	}
	assert.Equal(t, []string{"a.jsonl", "registry/d.jsonl", "sub/b.jsonl.zst"}, rels)
	assert.Equal(t, "s3://"+bkt+"/p/artifacts", objs[0].Store())
	assert.Equal(t, "s3://"+bkt+"/p/sub/artifacts", objs[2].Store())

	one, err := c.List(context.Background(), "s3://"+bkt+"/p/a.jsonl")
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, Object{Bucket: bkt, Key: "p/a.jsonl", Rel: "a.jsonl", Explicit: true, Size: 3}, one[0])
}
