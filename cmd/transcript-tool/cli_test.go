package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// result is what one in-process run of the command line gave.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line in-process, as main does, with no standard
// input. A panic fails the test with its stack instead of killing the
// test binary, and stderr is checked to carry no Go panic trace.
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := func() (code int) {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("transcript-tool %s panicked: %v\n%s", strings.Join(args, " "), p, debug.Stack())
			}
		}()
		return run(context.Background(), append([]string{"transcript-tool"}, args...), strings.NewReader(""), &stdout, &stderr)
	}()
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	for _, trace := range []string{"panic:", "goroutine ", "runtime error", "fatal error:"} {
		assert.NotContains(t, r.stderr, trace, "transcript-tool %s: a Go trace on stderr", strings.Join(args, " "))
	}
	// A transcript in a bucket is named by its URL, never by its local
	// copy in the run's folder (session.Copies).
	assert.NotContains(t, r.stdout+r.stderr, "transcript-tool-copies-", "transcript-tool %s: a local copy named", strings.Join(args, " "))
	assert.Contains(t, []int{exitOK, exitProblems, exitUsage}, r.code, "transcript-tool %s: exit status", strings.Join(args, " "))
	return r
}

// treeHash hashes everything under root that a write could change: each
// entry's path, type, permission bits and modification time (a
// directory's changes when an entry is created or removed in it, even
// if put back), a regular file's size and bytes, and a link's target.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	var entries []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		e := fmt.Sprintf("%q %v %d", rel, fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			e += fmt.Sprintf(" %d %x", fi.Size(), sum)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			e += " -> " + target
		}
		entries = append(entries, e)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(entries)
	sum := sha256.Sum256([]byte(strings.Join(entries, "\n")))
	return hex.EncodeToString(sum[:])
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
