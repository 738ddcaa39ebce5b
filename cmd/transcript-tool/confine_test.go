package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// sentinelMark is in every byte of the sentinel tree's artifacts and
// secret: output holding it was read outside the store.
const sentinelMark = "SENTINEL"

// sentinelSize is the size of the sentinel's artifacts: output that
// shows it was told a size outside the store.
const sentinelSize = 3333

// sentinel is a tree outside the store, shaped like a store, that links
// planted in the store point into.
type sentinel struct {
	root string
	// named is an artifact the hostile transcript names, with a marker
	// that restores exactly from its bytes; hidden is one nothing names,
	// so that only listing the sentinel's directories finds it.
	named, hidden storepkg.Digest
	namedText     string
}

// newSentinel writes the sentinel tree: artifacts in shards no artifact
// of avoid uses, a registry, a secret, and a transcript. Its artifacts are
// two days old, so that gc would collect them if it saw them.
func newSentinel(t *testing.T, avoid ...storepkg.Digest) *sentinel {
	t.Helper()
	s := &sentinel{root: t.TempDir()}
	used := map[byte]bool{}
	for _, d := range avoid {
		used[d[0]] = true
	}
	artifact := func(name string) (storepkg.Digest, string) {
		for i := 0; ; i++ {
			text := fmt.Sprintf("%s %s artifact %d\n", sentinelMark, name, i) + strings.Repeat(sentinelMark+" bytes outside the store\n", 200)
			text = text[:sentinelSize-1] + "\n"
			d := storepkg.Sum([]byte(text))
			if used[d[0]] {
				continue
			}
			used[d[0]] = true
			path := filepath.Join(s.root, local.ObjectPath(d))
			writeFile(t, path, []byte(text))
			old := time.Now().Add(-48 * time.Hour)
			require.NoError(t, os.Chtimes(path, old, old))
			return d, text
		}
	}
	s.named, s.namedText = artifact("named")
	s.hidden, _ = artifact("hidden")
	// A writer's temporary file, old enough for a run to clean it up.
	temp := filepath.Join(s.root, local.ObjectPath(s.hidden))
	temp = filepath.Join(filepath.Dir(temp), "."+s.hidden.String()+".tmp-42")
	writeFile(t, temp, []byte(sentinelMark+" temporary file\n"))
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(temp, old, old))
	var reg strings.Builder
	for _, d := range []storepkg.Digest{s.named, s.hidden} {
		fmt.Fprintf(&reg, `{"hash":"%s","size":777,"media":"text/plain; charset=utf-8","site":"/message/content","toolCallId":"call_sentinel","summary":"%s","createdAt":"2025-01-01T00:00:00Z"}`+"\n", d, sentinelMark)
	}
	writeFile(t, filepath.Join(s.root, storepkg.RegistryFile), []byte(reg.String()))
	writeFile(t, filepath.Join(s.root, storepkg.SegmentsDir, "20250101T000000.000000000Z_sentinel_1_1.jsonl"), []byte(reg.String()))
	writeFile(t, filepath.Join(s.root, "secret"), []byte(sentinelMark+" secret\n"))
	writeFile(t, filepath.Join(s.root, "transcript.jsonl"), testsession.Pi(sentinelMark, 2, 5000))
	require.NoError(t, os.Chmod(filepath.Join(s.root, "secret"), 0o600))
	return s
}

// hostileIDs are artifact ids a marker or a registry record may carry
// that must never name a file: paths, a NUL, upper case, wrong lengths.
func hostileIDs(named storepkg.Digest, secret string) []string {
	id := named.String()
	return []string{
		"../../x",
		"../../../../../../../../etc/passwd",
		"/etc/passwd",
		secret,
		"objects/" + id[:2] + "/" + id,
		id[:32] + "\x00" + id[33:],
		strings.ToUpper(id),
		id[:63],
		id + "0",
		"../" + id[3:],
		"",
	}
}

// forgedLine is a pi tool result with a marker that names artifact id for
// its content and records sha, as a migration would write it.
func forgedLine(n int, id, sha string) string {
	quotedID, _ := json.Marshal(id)
	return fmt.Sprintf(`{"type":"message","id":"h%d","parentId":null,"timestamp":"2025-01-01T00:10:00.000Z","message":{"role":"toolResult","toolCallId":"call_h%d","toolName":"read","content":[{"type":"text","text":"[Tool result omitted: stored as artifact]"}],"isError":false},`+
		`"transcriptTool":{"v":1,"sha256":"%s","edits":[{"at":"/message/content","parts":[{"lit":"[{\"type\":\"text\",\"text\":"},{"id":%s,"form":"js"},{"lit":"}]"}]}]}}`, n, n, sha, quotedID)
}

// originalOf is the line forgedLine(n, ...) restores to when the artifact
// holds text.
func originalOf(n int, text string) string {
	quoted, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"message","id":"h%d","parentId":null,"timestamp":"2025-01-01T00:10:00.000Z","message":{"role":"toolResult","toolCallId":"call_h%d","toolName":"read","content":[{"type":"text","text":%s}],"isError":false}}`, n, n, quoted)
}

// hostileTranscript is a pi session whose entries name the hostile ids,
// and the sentinel's named artifact with a marker that would restore from
// it exactly: a store that followed a link would serve it.
func hostileTranscript(s *sentinel) []byte {
	var b strings.Builder
	b.WriteString(testsession.Header("hostile") + "\n")
	zeros := strings.Repeat("0", 64)
	for i, id := range hostileIDs(s.named, filepath.Join(s.root, "secret")) {
		b.WriteString(forgedLine(i, id, zeros) + "\n")
	}
	sum := sha256.Sum256([]byte(originalOf(99, s.namedText)))
	b.WriteString(forgedLine(99, s.named.String(), hex.EncodeToString(sum[:])) + "\n")
	return []byte(b.String())
}

// hostileRecords are registry lines whose hashes are hostile ids, and one
// for the sentinel's named artifact, all under tool call id call_evil.
func hostileRecords(s *sentinel) []byte {
	var b strings.Builder
	ids := append(hostileIDs(s.named, filepath.Join(s.root, "secret")), s.named.String())
	for _, id := range ids {
		rec, _ := json.Marshal(registry.Record{Hash: id, Size: 10, Media: "text/plain; charset=utf-8", Site: "/message/content",
			ToolCallID: "call_evil", Source: filepath.Join(s.root, "transcript.jsonl"), CreatedAt: "2025-01-01T00:00:00Z"})
		b.Write(append(rec, '\n'))
	}
	return []byte(b.String())
}

// requireForgeryRestores checks that the last line of the hostile
// transcript restores from the sentinel's named artifact when a store
// really holds it: a command that followed a link to it would print its
// bytes.
func requireForgeryRestores(t *testing.T, s *sentinel) {
	t.Helper()
	dir := t.TempDir()
	_, _, err := registry.New(local.New(filepath.Join(dir, "artifacts"))).Put(context.Background(), []byte(s.namedText))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(hostileTranscript(s)), "\n"), "\n")
	path := filepath.Join(dir, "forged.jsonl")
	writeFile(t, path, []byte(lines[0]+"\n"+lines[len(lines)-1]+"\n"))
	r := runCLI(t, "rehydrate", path)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, lines[0]+"\n"+originalOf(99, s.namedText)+"\n", r.stdout)
	require.Contains(t, r.stdout, sentinelMark)
}

// storeLayout plants links in store that point into the sentinel tree.
type storeLayout struct {
	name  string
	plant func(t *testing.T, store string, s *sentinel)
}

var storeLayouts = []storeLayout{
	{"artifacts are links", func(t *testing.T, store string, s *sentinel) {
		for _, d := range []storepkg.Digest{s.named, s.hidden} {
			link := filepath.Join(store, local.ObjectPath(d))
			require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
			require.NoError(t, os.Symlink(filepath.Join(s.root, local.ObjectPath(d)), link))
		}
	}},
	{"shards are links", func(t *testing.T, store string, s *sentinel) {
		for _, d := range []storepkg.Digest{s.named, s.hidden} {
			shard := filepath.Dir(local.ObjectPath(d))
			require.NoError(t, os.Symlink(filepath.Join(s.root, shard), filepath.Join(store, shard)))
		}
	}},
	{"objects is a link", func(t *testing.T, store string, s *sentinel) {
		objects := filepath.Join(store, storepkg.ObjectsDir)
		require.NoError(t, os.Rename(objects, objects+".real"))
		require.NoError(t, os.Symlink(filepath.Join(s.root, storepkg.ObjectsDir), objects))
	}},
	{"registry is a link", func(t *testing.T, store string, s *sentinel) {
		// The single-file registry of earlier versions, which is still
		// read.
		require.NoError(t, os.Symlink(filepath.Join(s.root, storepkg.RegistryFile), filepath.Join(store, storepkg.RegistryFile)))
	}},
	{"segments are a link", func(t *testing.T, store string, s *sentinel) {
		segs := filepath.Join(store, storepkg.SegmentsDir)
		require.NoError(t, os.Rename(segs, segs+".real"))
		require.NoError(t, os.Symlink(filepath.Join(s.root, storepkg.SegmentsDir), segs))
	}},
	{"a segment is a link", func(t *testing.T, store string, s *sentinel) {
		seg := filepath.Join(store, storepkg.SegmentsDir, "20250101T000000.000000000Z_link_1_1.jsonl")
		require.NoError(t, os.Symlink(filepath.Join(s.root, storepkg.RegistryFile), seg))
	}},
	{"no link", func(t *testing.T, store string, s *sentinel) {}},
}

// registryProblem is what a command that stops at a planted registry line
// or link says: the file, a segment or the single-file registry.
const registryProblem = `registry(\.jsonl|/[^:\s]+\.jsonl)|registry is a symbolic link`

// onlySegment returns the one segment of the registry of store.
func onlySegment(t *testing.T, store string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(store, storepkg.SegmentsDir, "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	return segs[0]
}

// confinedCase is one command run against a store with planted links.
type confinedCase struct {
	args []string
	// codes are the exit statuses allowed; the layout decides which
	// one (a linked registry or objects directory stops more commands).
	codes []int
	// says are regular expressions the output (stdout and stderr) must
	// match when the status is not 0: the file, line and byte offset of
	// the problem.
	says []string
	// bug, when set, skips the case: a known bug outside this package.
	bug func(layout string) string
}

// TestConfinedCommands runs every command that reads a store against
// stores whose artifacts, shard directories, objects directory or registry
// are links into a sentinel tree, with transcripts and registry records
// naming hostile ids, a linked transcript and a linked directory: the
// sentinel tree (every name, mode, size, time and byte) is unchanged after
// each command, no byte of it is printed, and no command panics.
func TestConfinedCommands(t *testing.T) {
	for _, layout := range storeLayouts {
		t.Run(layout.name, func(t *testing.T) {
			work := t.TempDir()
			s1 := testsession.Text(1, 5000)
			s2 := testsession.Text(2, 5000)
			s := newSentinel(t, storepkg.Sum([]byte(s1)), storepkg.Sum([]byte(s2)))
			store := filepath.Join(work, "artifacts")
			session := filepath.Join(work, "s.jsonl")
			original := testsession.Pi("s", 2, 5000)
			writeFile(t, session, original)
			require.Equal(t, exitOK, runCLI(t, "migrate", session).code)

			hostile := filepath.Join(work, "hostile.jsonl")
			writeFile(t, hostile, hostileTranscript(s))
			requireForgeryRestores(t, s)
			f, err := os.OpenFile(onlySegment(t, store), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write(hostileRecords(s))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			link := filepath.Join(work, "link.jsonl")
			require.NoError(t, os.Symlink(filepath.Join(s.root, "transcript.jsonl"), link))
			require.NoError(t, os.Symlink(s.root, filepath.Join(work, "linkdir")))
			layout.plant(t, store, s)
			before := treeHash(t, s.root)

			named, hidden := s.named.String(), s.hidden.String()
			const (
				hostileLine = `hostile\.jsonl:2: byte 112: .*invalid artifact id "\.\./\.\./x"`
				forgedLine  = `hostile\.jsonl:13: byte \d+: `
			)
			ok, problems, usage := []int{exitOK}, []int{exitProblems}, []int{exitUsage}
			problemsOrUsage := []int{exitProblems, exitUsage}
			cases := []confinedCase{
				{args: []string{"verify", "--store", store}, codes: problemsOrUsage, says: []string{registryProblem + `|objects is a symbolic link`}},
				{args: []string{"verify", work}, codes: problemsOrUsage, says: []string{registryProblem + `|objects is a symbolic link`}},
				{args: []string{"verify", "--json", hostile}, codes: problemsOrUsage, says: []string{`"line": 2,\s+"offset": 112,|symbolic link`}},
				{args: []string{"ls", "--store", store}, codes: problemsOrUsage, says: []string{registryProblem}},
				{args: []string{"ls", "--json", "--store", store}, codes: problemsOrUsage, says: []string{registryProblem}},
				{args: []string{"cat", "--store", store, named}, codes: usage},
				{args: []string{"cat", "--raw", "--store", store, named}, codes: usage},
				{args: []string{"cat", "--store", store, named[:8]}, codes: usage},
				{args: []string{"cat", "--store", store, hidden}, codes: usage},
				{args: []string{"cat", "--store", store, hidden[:8]}, codes: usage},
				{args: []string{"cat", "--store", store, "call_evil"}, codes: usage},
				{args: []string{"cat", "--store", store, "call_sentinel"}, codes: usage},
				{args: []string{"show", hostile}, codes: ok},
				{args: []string{"show", "--rehydrate", hostile}, codes: problems, says: []string{hostileLine, forgedLine}},
				{args: []string{"show", "--rehydrate", "--full", "--store", store, session}, codes: []int{exitOK, exitProblems}, says: []string{`s\.jsonl:4: byte 534: `}},
				{args: []string{"show", "--rehydrate", link}, codes: usage, says: []string{`link\.jsonl is inside the artifact store`}},
				{args: []string{"recall", hostile}, codes: []int{exitOK, exitUsage}, says: []string{registryProblem}},
				{args: []string{"recall", "--format", "json", session}, codes: []int{exitOK, exitUsage}, says: []string{registryProblem}},
				{args: []string{"check", "--store", store, work}, codes: problems, says: []string{`hostile\.jsonl:2: reference does not restore: .*"\.\./\.\./x"`, `hostile\.jsonl:13: reference does not restore`}},
				{args: []string{"stats", "--store", store, work}, codes: ok},
				{args: []string{"rehydrate", hostile}, codes: problems, says: []string{hostileLine}},
				{args: []string{"rehydrate", session}, codes: []int{exitOK, exitProblems}, says: []string{`s\.jsonl:4: byte 534: `}},
				{args: []string{"rehydrate", link}, codes: usage, says: []string{`link\.jsonl is inside the artifact store`}},
				{args: []string{"rehydrate", "--out", filepath.Join(work, "out"), work}, codes: problems, says: []string{hostileLine}},
				{args: []string{"gc", work}, codes: usage, says: []string{hostileLine + `|objects is a symbolic link`, `nothing was deleted`}},
				{args: []string{"gc", "--force", "--grace", "0s", session}, codes: []int{exitOK, exitUsage}, says: []string{`symbolic link`}},
				{args: []string{"gc", "--yes", "--force", "--grace", "0s", session}, codes: []int{exitOK, exitUsage}, says: []string{`symbolic link`}},
				{args: []string{"gc", "--yes", "--force", "--grace", "0s", "--prune-missing", session}, codes: []int{exitOK, exitUsage}, says: []string{`symbolic link`}},
				{args: []string{"rehydrate", "--in-place", work}, codes: problems, says: []string{hostileLine}},
				{args: []string{"migrate", work}, codes: problems, says: []string{forgedLine}},
				{args: []string{"migrate", link}, codes: usage, says: []string{`link\.jsonl is inside the artifact store`}},
			}
			for _, c := range cases {
				var name []string
				for _, a := range c.args {
					name = append(name, strings.ReplaceAll(a, work, "WORK"))
				}
				t.Run(strings.Join(name, " "), func(t *testing.T) {
					if c.bug != nil {
						if why := c.bug(layout.name); why != "" {
							t.Skip(why)
						}
					}
					r := runCLI(t, c.args...)
					out := r.stdout + r.stderr
					assert.Contains(t, c.codes, r.code, "exit status of %v\n%s", c.args, out)
					if r.code != exitOK {
						for _, re := range c.says {
							assert.Regexp(t, re, out, "%v", c.args)
						}
					}
					assert.NotContains(t, out, sentinelMark, "%v printed bytes from outside the store", c.args)
					assert.NotContains(t, out, "transcript.jsonl:", "%v read the linked transcript", c.args)
					assert.NotContains(t, out, "linkdir", "%v walked into a linked directory", c.args)
					assert.NotRegexp(t, `\b3333 bytes|"size": 3333\b|\b3\.3 KB`, out, "%v stat'ed a file outside the store", c.args)
					asked := strings.Contains(strings.Join(c.args, " "), hidden[:12])
					if (layout.name == "shards are links" || layout.name == "objects is a link") && !asked {
						assert.NotContains(t, out, hidden[:12], "%v listed a directory outside the store", c.args)
					}
					require.Equal(t, before, treeHash(t, s.root), "%v changed the tree outside the store", c.args)
				})
			}
			assert.Equal(t, before, treeHash(t, s.root))
			if layout.name != "objects is a link" {
				r := runCLI(t, "rehydrate", session)
				assert.Equal(t, exitOK, r.code, r.stderr)
				assert.Equal(t, string(original), r.stdout, "the session still round-trips")
			}
		})
	}
}

// TestCatHostileIDs: ids on cat's command line that are paths, absolute or
// relative, into the store or out of it, upper-case or wrong-length hex,
// or hold a NUL, name no artifact: cat exits 2 naming the id, prints
// nothing, and reads nothing outside the store. Tool call ids are
// registry keys, never paths: one that looks like a path prints the
// artifact of its record.
func TestCatHostileIDs(t *testing.T) {
	work := t.TempDir()
	s := newSentinel(t)
	session := filepath.Join(work, "s.jsonl")
	writeFile(t, session, testsession.Pi("s", 1, 5000))
	require.Equal(t, exitOK, runCLI(t, "migrate", session).code)
	store := filepath.Join(work, "artifacts")
	text := testsession.Text(1, 5000)
	d := storepkg.Sum([]byte(text)).String()
	id := d
	f, err := os.OpenFile(onlySegment(t, store), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	rec, err := json.Marshal(registry.Record{Hash: d, Size: 5000, Media: "text/plain; charset=utf-8", Site: "/message/content",
		ToolCallID: "../../etc/passwd", CreatedAt: "2025-01-01T00:00:00Z"})
	require.NoError(t, err)
	_, err = f.Write(append(rec, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before := treeHash(t, s.root)
	missing := s.named.String()

	for _, bad := range []string{
		"../x",
		"../../../../../../../../etc/passwd/",
		"/etc/passwd",
		filepath.Join(s.root, "secret"),
		filepath.Join(s.root, local.ObjectPath(s.named)),
		"../" + filepath.Base(s.root) + "/secret",
		"objects/" + id[:2] + "/" + id,
		filepath.Join(store, local.ObjectPath(storepkg.Sum([]byte(text)))),
		id[:4] + "/../..",
		strings.ToUpper(id),
		strings.ToUpper(id[:8]),
		missing[:63],
		id + "0",
		strings.Repeat("a", 65),
		id[:32] + "\x00" + id[33:],
		id[:8] + "\x00",
		"\x00",
		"",
		" " + id,
		id + "\n",
	} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			for _, raw := range []string{"--raw=false", "--raw"} {
				r := runCLI(t, "cat", raw, "--store", store, bad)
				assert.Equal(t, exitUsage, r.code)
				assert.Empty(t, r.stdout)
				names := strings.Contains(r.stderr, fmt.Sprintf("transcript-tool: error: %q ", bad)) ||
					strings.Contains(r.stderr, "transcript-tool: error: "+bad+": ")
				assert.True(t, names, "the error names the id: %s", r.stderr)
				assert.Regexp(t, `is neither an artifact id|artifact not found`, r.stderr)
				assert.NotContains(t, r.stderr, sentinelMark)
				assert.Equal(t, before, treeHash(t, s.root))
			}
		})
	}

	// A tool call id that looks like a path is looked up in the registry.
	r := runCLI(t, "cat", "--store", store, "../../etc/passwd")
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, text, r.stdout)
	// So is a 63-character prefix: it names the artifact it starts.
	r = runCLI(t, "cat", "--store", store, id[:63])
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, text, r.stdout)
}
