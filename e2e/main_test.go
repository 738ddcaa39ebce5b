// Package e2e drives the real agents (Claude Code, Codex, pi, Copilot
// CLI), installed from npm by `make agents`, against a stand-in model API on loopback: an
// agent writes a session with large tool outputs, transcript-tool migrates
// it in place as a user would, and the agent resumes it and opens the
// placeholders' paths with its own tools.
//
// The agents live outside the repository, in AGENTS_DIR (default
// $XDG_CACHE_HOME/transcript-tool/agents, see scripts/agents.sh). A test
// whose agent is not installed skips with a message, or fails when
// TT_REQUIRE_AGENTS=1 (set by .ci/run, which installs them).
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// toolBin is the transcript-tool binary built once for the whole package.
var toolBin string

func TestMain(m *testing.M) {
	os.Exit(mainTest(m))
}

func mainTest(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tt-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	toolBin = filepath.Join(dir, "transcript-tool")
	_, here, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", toolBin, "./cmd/transcript-tool")
	build.Dir = filepath.Dir(filepath.Dir(here))
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building transcript-tool: %v\n%s", err, out)
		return 2
	}
	return m.Run()
}

// runTool runs transcript-tool with args and returns its stdout; it fails
// t on a non-zero exit status.
func runTool(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolBin, append([]string{"--progress", "never"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("transcript-tool %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// runAgent runs agent a with args in dir with env (added to a minimal
// environment: a's PATH and nothing of the developer's own HOME) and
// returns its combined output; it fails t on a non-zero exit status or
// after timeout.
func runAgent(t *testing.T, a agent, dir string, env []string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + a.Path, "LANG=C.UTF-8", "TERM=dumb", "CI=1"}, env...)
	cmd.Stdin = bytes.NewReader(nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", a.Pin, args, err, out)
	}
	return out
}
