package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
)

// docBucket is the bucket the examples in docs/ name; the tests put a
// bucket of their own in its place.
const docBucket = "team-transcripts"

// Each example's reader returns how many shards it runs and, for each,
// the command line it runs and the environment it runs it with.

// kubernetesLines reads the Indexed Job: its container's sh -c argument,
// run with JOB_COMPLETION_INDEX as Kubernetes sets it and the env it
// declares.
func kubernetesLines(t *testing.T) (int, func(int) (string, []string)) {
	var job struct {
		Kind string
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string
						Args    []string
						Env     []struct{ Name, Value string }
					}
				}
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(readFile(t, filepath.Join("..", "..", "docs", "kubernetes-indexed-job.yaml")), &job))
	require.Equal(t, "Job", job.Kind)
	require.Equal(t, "Indexed", job.Spec.CompletionMode)
	require.Equal(t, job.Spec.Completions, job.Spec.Parallelism)
	require.Len(t, job.Spec.Template.Spec.Containers, 1)
	c := job.Spec.Template.Spec.Containers[0]
	require.Equal(t, []string{"sh", "-c"}, c.Command)
	require.Len(t, c.Args, 1)
	var env []string
	for _, e := range c.Env {
		if e.Name != "AWS_REGION" { // the test server's own
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return job.Spec.Completions, func(k int) (string, []string) {
		return c.Args[0], append(env, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k))
	}
}

// actionsLines reads the workflow: the migrate step's run line, with the
// matrix index substituted as GitHub Actions does.
func actionsLines(t *testing.T) (int, func(int) (string, []string)) {
	var wf struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct{ Shard []int }
			}
			Steps []struct{ Name, Run string }
		}
	}
	require.NoError(t, yaml.Unmarshal(readFile(t, filepath.Join("..", "..", "docs", "github-actions-matrix.yml")), &wf))
	job, ok := wf.Jobs["migrate"]
	require.True(t, ok)
	run := ""
	for _, s := range job.Steps {
		if s.Name == "migrate" {
			run = s.Run
		}
	}
	require.NotEmpty(t, run)
	shards := job.Strategy.Matrix.Shard
	for i, k := range shards {
		require.Equal(t, i, k, "the matrix numbers the shards from 0")
	}
	return len(shards), func(k int) (string, []string) {
		return strings.ReplaceAll(run, "${{ matrix.shard }}", fmt.Sprint(k)), nil
	}
}

// parallelLines reads the GNU parallel line: the command it runs for
// each number seq gives, with {} replaced as parallel does.
func parallelLines(t *testing.T) (int, func(int) (string, []string)) {
	m := regexp.MustCompile(`(?m)^seq 0 (\d+) \| parallel -j \d+ '([^']+)'$`).FindSubmatch(readFile(t, filepath.Join("..", "..", "docs", "gnu-parallel.sh")))
	require.NotNil(t, m, "no seq | parallel line")
	var last int
	_, err := fmt.Sscan(string(m[1]), &last)
	require.NoError(t, err)
	return last + 1, func(k int) (string, []string) {
		return strings.ReplaceAll(string(m[2]), "{}", fmt.Sprint(k)), nil
	}
}

// TestDocsShardedRuns runs the command lines of the examples in docs/ for
// each shard, at once, against a bucket of sessions on the local S3
// servers: together they migrate every transcript once, each writes its
// report, and every transcript then verifies against the store.
func TestDocsShardedRuns(t *testing.T) {
	bin, err := exec.LookPath("transcript-tool") // installed by testscript.Main
	require.NoError(t, err)
	docs := map[string]func(*testing.T) (int, func(int) (string, []string)){
		"kubernetes": kubernetesLines, "actions": actionsLines, "parallel": parallelLines,
	}
	for _, srv := range s3test.Servers(t) {
		for name, lines := range docs {
			t.Run(srv.Name+"/"+name, func(t *testing.T) {
				n, line := lines(t)
				require.Equal(t, 4, n)
				srv.Setenv(t)
				bucket := srv.Bucket(t, "tt-docs")
				count := uploadSessions(t, srv, bucket, "sessions/")
				work := t.TempDir()
				var wg sync.WaitGroup
				errs := make([]error, n)
				outs := make([]string, n)
				for k := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cmdline, env := line(k)
						cmdline = strings.ReplaceAll(cmdline, docBucket, bucket)
						cmd := exec.Command("sh", "-c", cmdline)
						cmd.Dir = work
						cmd.Env = append(append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
						var stderr bytes.Buffer
						cmd.Stderr = &stderr
						out, err := cmd.Output()
						if err != nil {
							err = fmt.Errorf("%w: %s", err, stderr.String())
						}
						errs[k], outs[k] = err, string(out)
					}()
				}
				wg.Wait()
				files := 0
				for k := range n {
					require.NoError(t, errs[k], outs[k])
					var rep struct{ Files, Failed int }
					// The report is a file, or, where the example keeps none
					// (a pod's log), what the command printed.
					data, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("report-%d.json", k)))
					if errors.Is(err, fs.ErrNotExist) {
						data, err = []byte(outs[k]), nil
					}
					require.NoError(t, err, "shard %d wrote no report", k)
					require.NoError(t, json.Unmarshal(data, &rep), string(data))
					assert.Zero(t, rep.Failed, string(data))
					files += rep.Files
				}
				assert.Equal(t, count, files, "the shards took every transcript once")
				v := runCLI(t, "verify", "--store", "s3://"+bucket+"/artifacts", "s3://"+bucket+"/sessions/")
				assert.Equal(t, exitOK, v.code, v.stdout+v.stderr)
			})
		}
	}
}

// uploadSessions puts the bundled sessions in bucket under prefix and
// returns how many.
func uploadSessions(t *testing.T, srv *s3test.Server, bucket, prefix string) int {
	t.Helper()
	client := awss3.NewFromConfig(srv.Config(), func(o *awss3.Options) { o.UsePathStyle = true })
	dir := filepath.Join("..", "..", "testdata", "sessions")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		data := readFile(t, filepath.Join(dir, e.Name()))
		key := prefix + e.Name()
		_, err := client.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)})
		require.NoError(t, err)
		n++
	}
	return n
}
