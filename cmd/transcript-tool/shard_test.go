package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/s3test"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/location"
)

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), data)
		return nil
	}))
}

// recordsOf returns the records of the store in dir, each without its
// creation time and with its source relative to root, as sorted JSON
// lines.
func recordsOf(t *testing.T, dir, root string) []string {
	t.Helper()
	var out []string
	st, err := registry.Open(location.Open, dir)
	require.NoError(t, err)
	require.NoError(t, st.Records(context.Background(), func(r registry.Record) error {
		r.CreatedAt, r.Source = "", strings.TrimPrefix(r.Source, root)
		b, err := json.Marshal(r)
		out = append(out, string(b))
		return err
	}, func(e *registry.BadLineError) { t.Error(e) }))
	sort.Strings(out)
	return out
}

// objectsOf returns the object names of the store in dir, sorted.
func objectsOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	st, err := registry.Open(location.Open, dir)
	require.NoError(t, err)
	require.NoError(t, st.Each(context.Background(), func(d store.Digest, _ store.FileInfo) error {
		out = append(out, d.String())
		return nil
	}, func(name string, why error) { t.Errorf("%s: %v", name, why) }))
	sort.Strings(out)
	return out
}

// TestShardsDoWhatOneRunDoes: four concurrent migrate --shard K/4 runs
// over one tree leave the same transcripts, byte for byte, the same
// objects and, merged, the same registry records as one run; each shard
// writes a segment of its own that names it, and a retry of one shard
// changes nothing.
func TestShardsDoWhatOneRunDoes(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		four := t.TempDir()
		shardRuns(t, four, filepath.Join(four, "store"), nil)
	})
	for _, srv := range s3test.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			srv.Setenv(t)
			shardRuns(t, t.TempDir(), "s3://"+srv.Bucket(t, "tt-shards")+"/store", srv.Env())
		})
	}
}

// shardRuns migrates the bundled sessions in one run into a local store,
// and in four shards at once, with env, under four into storeFour, and
// compares.
func shardRuns(t *testing.T, four, storeFour string, env []string) {
	one := t.TempDir()
	copyTree(t, filepath.Join("..", "..", "testdata", "sessions"), filepath.Join(one, "s"))
	copyTree(t, filepath.Join("..", "..", "testdata", "sessions"), filepath.Join(four, "s"))
	storeOne := filepath.Join(one, "store")

	r := runCLI(t, "migrate", "--store", storeOne, "--store-as", "/srv/store", "--json", filepath.Join(one, "s"))
	require.Contains(t, []int{exitOK, exitProblems}, r.code, r.stderr)

	// Four processes at once, as a scheduler runs them (urfave/cli keeps
	// state in package variables: one command line per process).
	bin, err := exec.LookPath("transcript-tool") // installed by testscript.Main
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([]result, 4)
	for k := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "migrate", "--store", storeFour, "--store-as", "/srv/store", "--json", "--shard", fmt.Sprintf("%d/4", k), filepath.Join(four, "s"))
			cmd.Env = append(os.Environ(), env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			results[k] = result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
			if err != nil && cmd.ProcessState == nil {
				results[k].stderr = err.Error()
			}
		}()
	}
	wg.Wait()
	files := 0
	for k, res := range results {
		require.Equal(t, r.code, res.code, "shard %d: %s", k, res.stderr)
		var sum struct{ Files int }
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &sum), res.stdout)
		assert.Positive(t, sum.Files, "shard %d took nothing", k)
		files += sum.Files
	}
	var whole struct{ Files int }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &whole))
	assert.Equal(t, whole.Files, files, "the shards took every file once")

	entries, err := os.ReadDir(filepath.Join(one, "s"))
	require.NoError(t, err)
	for _, e := range entries {
		assert.Equal(t, string(readFile(t, filepath.Join(one, "s", e.Name()))), string(readFile(t, filepath.Join(four, "s", e.Name()))), e.Name())
	}
	assert.Equal(t, objectsOf(t, storeOne), objectsOf(t, storeFour))
	assert.Equal(t, recordsOf(t, storeOne, one), recordsOf(t, storeFour, four))
	b, err := location.Open(storeFour)
	require.NoError(t, err)
	shards := map[string]bool{}
	require.NoError(t, b.List(context.Background(), store.Segment, "", func(fi store.FileInfo) error {
		shards[fi.Name[strings.LastIndex(fi.Name, "_s")+2:len(fi.Name)-len(".jsonl")]] = true
		return nil
	}))
	assert.Equal(t, map[string]bool{"0of4": true, "1of4": true, "2of4": true, "3of4": true}, shards, "segments of each shard, naming it")

	// A scheduler's retry of one shard: nothing changes.
	res := runCLI(t, "migrate", "--store", storeFour, "--store-as", "/srv/store", "--shard", "2/4", filepath.Join(four, "s"))
	assert.Equal(t, r.code, res.code, res.stderr)
	for _, e := range entries {
		assert.Equal(t, string(readFile(t, filepath.Join(one, "s", e.Name()))), string(readFile(t, filepath.Join(four, "s", e.Name()))), e.Name())
	}
	assert.Equal(t, recordsOf(t, storeOne, one), recordsOf(t, storeFour, four))
}
