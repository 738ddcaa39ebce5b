package location_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/location"
)

// TestOpenFolder: a spec without a URL scheme is a local folder, opened
// as given.
func TestOpenFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	b, err := location.Open(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, b.Location())
	_, ok := store.As[store.Appender](b)
	assert.True(t, ok, "a folder appends in place")
}

// TestOpenFromEnvironment: location.Open of an s3:// URL finds the server
// through the standard AWS environment, as the command line does.
func TestOpenFromEnvironment(t *testing.T) {
	srv := s3test.Gofakes3(t)
	bucket := srv.Bucket(t, "env")
	srv.Setenv(t)
	b, err := location.Open("s3://" + bucket + "/some/prefix/")
	require.NoError(t, err)
	assert.Equal(t, "s3://"+bucket+"/some/prefix", b.Location())
	s := store.New(b)
	d, created, err := s.Put(context.Background(), []byte("through the environment"))
	require.NoError(t, err)
	assert.True(t, created)
	got, err := s.Get(context.Background(), d)
	require.NoError(t, err)
	assert.Equal(t, "through the environment", string(got))

	_, err = location.Open("gs://bucket/x")
	assert.ErrorContains(t, err, "unknown kind of store")
}
