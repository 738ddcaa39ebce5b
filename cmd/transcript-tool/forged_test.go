package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// forgedEntry is a pi tool result whose content is text and whose entry
// ends with extra, raw JSON members (without the leading comma).
func forgedEntry(n int, content, details, extra string) string {
	quoted, _ := json.Marshal(content)
	if details != "" {
		details = `,"details":` + details
	}
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"type":"message","id":"h%d","parentId":null,"timestamp":"2025-01-01T00:00:%02d.000Z","message":{"role":"toolResult","toolCallId":"call_%d","toolName":"read","content":[{"type":"text","text":%s}]%s,"isError":false}%s}`,
		n, n, n, quoted, details, extra)
}

// forgedMarker is a marker member, well formed, that says the entry's
// content was replaced by artifact id; its recorded hash is made up.
func forgedMarker(id string) string {
	return `"transcriptTool":{"v":1,"sha256":"` + strings.Repeat("1", 64) + `","edits":[{"at":"/message/content","parts":[{"lit":"[{\"type\":\"text\",\"text\":"},{"id":"` +
		id + `","form":"js"},{"lit":"}]"}]}]}`
}

// forgedSession is a session of genuine tool results that look like what
// migrate writes, all naming artifact id (which may exist): the
// placeholder text, pi's artifactRef, the one-line placeholder, a whole
// marker member, small and over the threshold; and a payload with invalid
// UTF-8.
func forgedSession(id string) []byte {
	path := "artifacts/objects/" + id[:2] + "/" + id
	placeholder := "[Tool result omitted: stored as artifact]\nid: " + id + "\ntool: read\nsize: 5000 bytes\nsummary: file1.txt line 1\npath: " + path
	ref := `{"artifactRef":{"id":"` + id + `","type":"tool-result","toolName":"read","createdAt":"2025-01-01T00:00:00Z","sizeBytes":5000,"summary":"x","path":"` +
		path + `","hash":"sha256:` + id + `"},"artifactVersion":1}`
	big := strings.Repeat("genuine output ", 400)
	invalid := strings.Repeat("x", 3000) + "\xff\xfe bad \xe6\x97 \xc0\xaf \xed\xa0\x80 \x80" + strings.Repeat("y", 3000)
	lines := []string{
		testsession.Header("forged"),
		forgedEntry(2, placeholder, ref, ""),
		forgedEntry(3, placeholder+"\n"+big, ref, ""),
		forgedEntry(4, "[Omitted 5000 bytes (text/plain; charset=utf-8): artifact "+id+" at "+path+"]\n"+big, "", ""),
		forgedEntry(5, "small", "", forgedMarker(id)),
		forgedEntry(6, big, "", forgedMarker(id)),
		// Not through forgedEntry: json.Marshal would replace the invalid bytes.
		strings.Replace(forgedEntry(7, "INVALID", "", ""), "INVALID", invalid, 1),
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestForgedReferences: genuine payloads that forge a placeholder, an
// artifactRef or a whole marker naming an artifact the store holds, and a
// payload with invalid UTF-8, migrate and round-trip exactly; afterwards
// show, recall and cat never take the forgeries for references.
func TestForgedReferences(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "artifacts")
	real := testsession.Text(1, 5000)
	id := storepkg.Sum([]byte(real)).String()
	writeFile(t, filepath.Join(dir, "s.jsonl"), testsession.Pi("s", 1, 5000))
	require.Equal(t, exitOK, runCLI(t, "migrate", filepath.Join(dir, "s.jsonl")).code)
	require.FileExists(t, filepath.Join(store, local.ObjectPath(storepkg.Sum([]byte(real)))))

	path := filepath.Join(dir, "h.jsonl")
	orig := forgedSession(id)
	writeFile(t, path, orig)
	shown := runCLI(t, "show", "--full", path)
	require.Equal(t, exitOK, shown.code, shown.stderr)

	t.Run("before migration", func(t *testing.T) {
		assert.NotContains(t, shown.stdout, "⧉ artifact "+id[:12])
		r := runCLI(t, "recall", "--format", "json", path)
		assert.NotContains(t, r.stdout, id)
	})

	r := runCLI(t, "migrate", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "artifacts: 4 referenced, 4 written, 0 deduplicated")
	migrated := readFile(t, path)
	assert.Less(t, len(migrated), len(orig))
	r = runCLI(t, "rehydrate", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, r.stdout == string(orig), "the round trip is not exact")
	r = runCLI(t, "migrate", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, migrated, readFile(t, path), "migrating again changed the file")
	for _, n := range []int{1, 2} {
		assert.Equal(t, 1, strings.Count(strings.Split(string(migrated), "\n")[n], `"artifactRef"`), "line %d: no artifactRef added beside a forged one", n+1)
	}

	for _, full := range []string{"--full=false", "--full"} {
		r = runCLI(t, "show", full, path)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.NotContains(t, r.stdout, "⧉ artifact "+id[:12], "a forgery shown as a reference")
		assert.Contains(t, r.stdout, "\n  id: "+id+"\n", "the small forged placeholder is shown as the text it is")
		assert.Equal(t, 4, strings.Count(r.stdout, "⧉ artifact "), "the four payloads migrate moved")
		r = runCLI(t, "show", "--rehydrate", full, path)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.NotContains(t, r.stdout, "⧉ artifact ")
		assert.NotContains(t, r.stdout, "file1.txt line 1: the quick brown fox", "the forged artifact was inlined")
		assert.Contains(t, r.stdout, "\n  small\n")
	}
	// Rehydrated, the session shows as the original would without its
	// forged markers: as genuine content.
	plain := filepath.Join(dir, "plain.jsonl")
	writeFile(t, plain, []byte(strings.ReplaceAll(string(orig), ","+forgedMarker(id), "")))
	want := runCLI(t, "show", "--full", plain)
	require.Equal(t, exitOK, want.code, want.stderr)
	r = runCLI(t, "show", "--rehydrate", "--full", path)
	assert.Equal(t, want.stdout, r.stdout)

	r = runCLI(t, "recall", "--format", "json", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	var sec struct {
		Items []struct{ ID, Summary string }
		Text  string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sec))
	assert.Len(t, sec.Items, 4, "the artifacts of this session")
	for _, it := range sec.Items {
		assert.NotEqual(t, id, it.ID, "recall lists the forged artifact")
		assert.NotContains(t, it.Summary, "unreadable")
	}

	// cat finds artifacts by the registry, which forged content does not
	// write: the forging entries' ids name only what migrate stored.
	for _, who := range []string{"call_2", "h2", "call_5", "h5"} {
		r = runCLI(t, "cat", "--store", store, who)
		assert.Equal(t, exitUsage, r.code, "%s: %s", who, r.stdout)
		assert.Empty(t, r.stdout)
	}
	for who, want := range map[string]string{
		"call_3": "[Tool result omitted: stored as artifact]\nid: " + id + "\n",
		"h4":     "[Omitted 5000 bytes (text/plain; charset=utf-8): artifact " + id,
		"call_6": "genuine output genuine output",
	} {
		r = runCLI(t, "cat", "--store", store, who)
		assert.Equal(t, exitOK, r.code, r.stderr)
		assert.True(t, strings.HasPrefix(r.stdout, want), "cat %s: %.80q", who, r.stdout)
		assert.NotContains(t, r.stdout, "file1.txt line 1:")
	}

	// Invalid UTF-8 is kept byte for byte, and counted one character per
	// invalid byte.
	r = runCLI(t, "cat", "--store", store, "call_7")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.True(t, r.stdout == strings.Repeat("x", 3000)+"\xff\xfe bad \xe6\x97 \xc0\xaf \xed\xa0\x80 \x80"+strings.Repeat("y", 3000), "cat changed invalid UTF-8")
	r = runCLI(t, "cat", "--store", store, "--offset", "2998", "--limit", "6", "call_7")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, "xx\xff\xfe b", r.stdout)
}

// TestForgedMarkerNamingMissingArtifact: a genuine entry ending with a
// marker that names an artifact the store lacks cannot be told from a
// migrated entry whose artifact was lost: migrate fails the file naming
// its line and byte offset and leaves it as it was, show marks the
// reference as not in the store, recall lists it as unreadable, and cat
// finds nothing.
func TestForgedMarkerNamingMissingArtifact(t *testing.T) {
	dir := t.TempDir()
	missing := storepkg.Sum([]byte("an artifact no store holds")).String()
	path := filepath.Join(dir, "m.jsonl")
	orig := []byte(testsession.Header("m") + "\n" + forgedEntry(2, strings.Repeat("genuine ", 1000), "", forgedMarker(missing)) + "\n")
	writeFile(t, path, orig)

	r := runCLI(t, "migrate", path)
	assert.Equal(t, exitProblems, r.code)
	at := fmt.Sprintf(`m\.jsonl:2: byte %d: `, len(testsession.Header("m"))+1)
	assert.Regexp(t, `transcript-tool: error: .*`+at+`already migrated, but: artifact for /message/content: `+missing+`: artifact not found`, r.stderr)
	assert.Equal(t, orig, readFile(t, path))

	r = runCLI(t, "show", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "⧉ artifact "+missing[:12]+" · not in store text · ")
	r = runCLI(t, "show", "--rehydrate", path)
	assert.Equal(t, exitProblems, r.code)
	assert.Regexp(t, at+`artifact for /message/content: `+missing+`: artifact not found`, r.stderr)

	r = runCLI(t, "recall", path)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "unreadable: not in the store")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "artifacts"), 0o700))
	for _, id := range []string{missing, missing[:12], "call_2", "h2"} {
		r = runCLI(t, "cat", "--store", filepath.Join(dir, "artifacts"), id)
		assert.Equal(t, exitUsage, r.code)
		assert.Empty(t, r.stdout)
	}
	r = runCLI(t, "rehydrate", path)
	assert.Equal(t, exitProblems, r.code)
	assert.Regexp(t, at+`.*artifact not found`, r.stderr)
	assert.Empty(t, r.stdout, "no byte of a file that does not restore")
}
