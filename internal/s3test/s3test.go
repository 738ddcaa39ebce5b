// Package s3test starts S3-compatible servers on loopback for tests: an
// in-process gofakes3 (memory), a versitygw process over a temporary
// folder, and a fault-injecting proxy in front of either. Each Server says
// how the AWS SDK reaches it, as an aws.Config for code in the test and as
// the standard AWS environment for commands the test runs.
//
// Only tests import it. A server lives until its test ends. Nothing it
// starts listens beyond 127.0.0.1.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"go/build"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// The credentials every server of this package accepts, and its region.
const (
	AccessKey = "tt-test-access-key"
	SecretKey = "tt-test-secret-key"
	Region    = "us-east-1"
)

// VersitygwVersion is the versitygw the tests are written against; CI
// installs it (.ci/run).
const VersitygwVersion = "v1.8.0"

// RequireEnv, set to 1, makes a test that cannot start versitygw fail
// instead of skipping: CI sets it.
const RequireEnv = "TT_REQUIRE_S3"

// Server is an S3-compatible server on loopback.
type Server struct {
	// Name says which server it is, for messages: gofakes3, versitygw, or
	// a proxy in front of one.
	Name string
	// Endpoint is its http:// URL.
	Endpoint string
	// Dir is the folder versitygw keeps its buckets in (a bucket is a
	// subfolder), or "" for gofakes3.
	Dir string
	// clock is gofakes3's time, which Age moves; nil for versitygw.
	clock *clock
}

// clock is the time of a gofakes3 server: the real time moved by an
// offset, which Age sets while it rewrites objects.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Config returns an aws.Config that reaches s with its credentials, as
// the standard environment would (see Env).
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		BaseEndpoint: aws.String(s.Endpoint),
	}
}

// Env returns the environment (KEY=value) through which a command finds s
// as it would a user's S3-compatible server: the endpoint, the
// credentials and the region, and no shared files or instance metadata
// of the machine's.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region,
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv sets Env in this process for the rest of the test.
func (s *Server) Setenv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_MAX_ATTEMPTS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// Bucket creates a bucket with a fresh name starting with prefix and
// returns its name.
func (s *Server) Bucket(t testing.TB, prefix string) string {
	t.Helper()
	var r [6]byte
	_, _ = rand.Read(r[:])
	name := strings.ToLower(prefix) + "-" + hex.EncodeToString(r[:])
	client := awss3.NewFromConfig(s.Config(), func(o *awss3.Options) { o.UsePathStyle = true })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("%s: create bucket %s: %v", s.Name, name, err)
	}
	return name
}

// Gofakes3 starts an in-process gofakes3 server with memory storage.
// Its clock is the real time but while Age rewrites objects, so it
// checks no skew of the requests' signing times.
func Gofakes3(t testing.TB) *Server {
	c := &clock{}
	faker := gofakes3.New(s3mem.New(s3mem.WithTimeSource(c)), gofakes3.WithTimeSource(c),
		gofakes3.WithTimeSkewLimit(0), gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	return &Server{Name: "gofakes3", Endpoint: srv.URL, clock: c}
}

// Age makes the LastModified of every object under prefix in bucket at,
// as if they had been written then: versitygw's files get at as their
// modification time, gofakes3's objects are copied onto themselves with
// its clock set back. No other request to s may run meanwhile.
func (s *Server) Age(t testing.TB, bucket, prefix string, at time.Time) {
	t.Helper()
	if s.clock == nil {
		root := filepath.Join(s.Dir, bucket)
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(prefix)), func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return err
			}
			return os.Chtimes(p, at, at)
		})
		if err != nil {
			t.Fatalf("%s: age %s/%s: %v", s.Name, bucket, prefix, err)
		}
		return
	}
	client := awss3.NewFromConfig(s.Config(), func(o *awss3.Options) { o.UsePathStyle = true })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.clock.offset.Store(int64(time.Until(at)))
	defer s.clock.offset.Store(0)
	p := awss3.NewListObjectsV2Paginator(client, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("%s: age %s/%s: %v", s.Name, bucket, prefix, err)
		}
		for _, o := range page.Contents {
			head, err := client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &bucket, Key: o.Key})
			if err == nil {
				_, err = client.CopyObject(ctx, &awss3.CopyObjectInput{
					Bucket: &bucket, Key: o.Key, CopySource: aws.String(bucket + "/" + aws.ToString(o.Key)),
					MetadataDirective: types.MetadataDirectiveReplace, Metadata: head.Metadata, ContentType: head.ContentType,
				})
			}
			if err != nil {
				t.Fatalf("%s: age %s/%s: %v", s.Name, bucket, aws.ToString(o.Key), err)
			}
		}
	}
}

// FindVersitygw returns the versitygw binary: on PATH, or where go
// install puts it.
func FindVersitygw() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	bin := os.Getenv("GOBIN")
	if bin == "" {
		bin = filepath.Join(build.Default.GOPATH, "bin")
	}
	p := filepath.Join(bin, "versitygw")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw@%s)", VersitygwVersion)
	}
	return p, nil
}

// required reports, when versitygw cannot be found, whether the test must
// fail (RequireEnv is 1) rather than skip.
func required() bool { return os.Getenv(RequireEnv) == "1" }

// Versitygw starts a versitygw process with its posix backend over a
// temporary folder, on a free loopback port. Without versitygw it skips
// the test, or fails it when RequireEnv is 1.
func Versitygw(t testing.TB) *Server {
	t.Helper()
	bin, err := FindVersitygw()
	switch {
	case err != nil && required():
		t.Fatalf("%v, and %s=1 requires it", err, RequireEnv)
	case err != nil:
		t.Skipf("%v: skipping; %s=1 makes this a failure", err, RequireEnv)
	}
	return startVersitygw(t, bin)
}

// Servers starts the servers a test runs against: gofakes3, and versitygw
// where it is installed (or required: see RequireEnv).
func Servers(t testing.TB) []*Server {
	t.Helper()
	out := []*Server{Gofakes3(t)}
	if _, err := FindVersitygw(); err == nil || required() {
		out = append(out, Versitygw(t))
	} else {
		t.Logf("%v: running against gofakes3 only", err)
	}
	return out
}

func startVersitygw(t testing.TB, bin string) *Server {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("versitygw exited at start: %s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s within 20s: %s", addr, out)
		}
	}
	return &Server{Name: "versitygw", Endpoint: "http://" + addr, Dir: dir}
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects a process's output, written and read from different
// goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
