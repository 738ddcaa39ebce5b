//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/transcript-tool/transcript-tool/internal/reggen"
	"github.com/transcript-tool/transcript-tool/internal/testsession"
)

// openTerminal returns the terminal end of a new pseudo-terminal of cols
// columns, and a function that returns what was written to it so far.
func openTerminal(t *testing.T, cols uint16) (*os.File, func() string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	require.NoError(t, unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: cols}))
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&out, master)
	}()
	return tty, func() string {
		tty.Close() // the reader ends at the terminal's hang-up
		<-done
		return strings.ReplaceAll(out.String(), "\r\n", "\n")
	}
}

// runOn runs the command line with stdout w.
func runOn(w io.Writer, args ...string) (int, string) {
	var stderr bytes.Buffer
	code := run(context.Background(), append([]string{"transcript-tool"}, args...), strings.NewReader(""), w, &stderr)
	return code, stderr.String()
}

// TestLsFitsTheTerminal: on a terminal of 100 columns no row of ls is
// wider than it; into a pipe the rows are whole.
func TestLsFitsTheTerminal(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("a-rather-long-folder-name-", 3), "session-with-a-long-name.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(long), 0o755))
	require.NoError(t, os.WriteFile(long, testsession.Pi(strings.Repeat("session-id-", 6), 3, 5000), 0o644))
	store := filepath.Join(dir, "store")
	require.Equal(t, exitOK, runCLI(t, "migrate", "--store", store, long).code)

	tty, output := openTerminal(t, 100)
	code, stderr := runOn(tty, "ls", "--store", store)
	require.Equal(t, exitOK, code, stderr)
	rows := strings.Split(strings.TrimRight(output(), "\n"), "\n")
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.LessOrEqual(t, utf8.RuneCountInString(r), 100, "%q", r)
	}

	piped := runCLI(t, "ls", "--store", store)
	assert.Greater(t, len(strings.Split(piped.stdout, "\n")[1]), 100, "a pipe gets whole rows")
}

// TestLsListingOnTerminal: on terminals narrow and wide, ls of a
// registry that is one indexed segment (its listing, read in the
// segment's order) writes what ls of the same registry read whole
// writes, summaries cut at every width around the column's.
func TestLsListingOnTerminal(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	seg := filepath.Join(store, "registry", "20200101T000000.000000000Z_gen_1_1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(seg), 0o700))
	var b bytes.Buffer
	require.NoError(t, reggen.Write(&b, 3000))
	for k := range 300 {
		summary := strings.Repeat("x", k) + " \\t " + strings.Repeat("y", 300-k) + " —  z"
		fmt.Fprintf(&b, `{"hash":"%064x","size":%d,"media":"text/plain","tool":"bash","session":"s%d","source":"/t/%s.jsonl","createdAt":"2027-01-01T00:00:%02dZ","summary":%q}`+"\n",
			k+1, k, k%3, strings.Repeat("d", k%50), k%60, summary)
	}
	require.NoError(t, os.WriteFile(seg, b.Bytes(), 0o600))
	ls := func(cols uint16) string {
		tty, output := openTerminal(t, cols)
		code, stderr := runOn(tty, "ls", "--store", store)
		require.Equal(t, exitOK, code, stderr)
		return output()
	}
	widths := []uint16{10, 60, 100, 250, 400}
	listed := make([]string, len(widths))
	for i, cols := range widths {
		listed[i] = ls(cols)
		require.FileExists(t, strings.TrimSuffix(seg, ".jsonl")+".idx", "listed through the index")
	}
	// Read whole, as ls reads a registry of two segments.
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(seg), "20300101T000000.000000000Z_gen_1_1.jsonl"), nil, 0o600))
	for i, cols := range widths {
		assert.Equal(t, ls(cols), listed[i], "%d columns", cols)
	}
}

// TestCatBinaryToTerminal: cat refuses to write an image to a terminal,
// and writes it to a pipe.
func TestCatBinaryToTerminal(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	img.Set(0, 0, color.White)
	var pngBytes bytes.Buffer
	require.NoError(t, png.Encode(&pngBytes, img))
	dir := t.TempDir()
	session := filepath.Join(dir, "chat.jsonl")
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes.Bytes())
	require.NoError(t, os.WriteFile(session, []byte(`{"role":"user","content":"look"}`+"\n"+
		`{"role":"tool","tool_call_id":"call_img","content":[{"type":"image_url","image_url":{"url":"`+url+`"}}]}`+"\n"), 0o644))
	store := filepath.Join(dir, "artifacts")
	require.Equal(t, exitOK, runCLI(t, "migrate", session).code)

	tty, output := openTerminal(t, 100)
	code, stderr := runOn(tty, "cat", "--store", store, "call_img")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "is image/png, not text: it is not written to a terminal")
	assert.Contains(t, stderr, "hint: redirect it to a file")
	assert.Empty(t, output())

	var piped bytes.Buffer
	code, stderr = runOn(&piped, "cat", "--store", store, "call_img")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, pngBytes.Bytes(), piped.Bytes())
}
