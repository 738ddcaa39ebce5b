package migrate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// payload is a tool result size well over the default threshold.
const payload = 5000

// omitted begins the text that replaces a migrated tool result.
const omitted = "[Tool result omitted: stored as artifact]"

// forgedLine is an entry that looks migrated but whose artifact is in no
// store: migrating its file must fail, not wrap it again.
const forgedLine = `{"type":"message","id":"x0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"transcriptTool":{"v":1,"sha256":"0000000000000000000000000000000000000000000000000000000000000000","edits":[{"at":"/message/content","parts":[{"id":"1111111111111111111111111111111111111111111111111111111111111111","form":"js"}]}]}}`

func writeFile(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, perm))
	require.NoError(t, os.Chmod(path, perm)) // past the umask
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

func sha(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, path))
	return hex.EncodeToString(sum[:])
}

// migrateRun collects paths and migrates them.
func migrateRun(t *testing.T, opts migrate.Options, paths ...string) migrate.Summary {
	t.Helper()
	inputs, err := session.Collect(paths)
	require.NoError(t, err)
	if opts.OpenStore == nil {
		opts.OpenStore = local.Open
	}
	return migrate.Run(context.Background(), inputs, opts)
}

// result returns the result for path.
func result(t *testing.T, sum migrate.Summary, path string) migrate.FileResult {
	t.Helper()
	for _, r := range sum.Results {
		if r.Path == path {
			return r
		}
	}
	require.Failf(t, "no result", "for %s in %+v", path, sum.Results)
	return migrate.FileResult{}
}

func rehydrate(t *testing.T, path, store string) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, migrate.RehydrateTo(context.Background(), &buf, session.Input{Path: path}, store, local.Open, nil))
	return buf.Bytes()
}

// objects lists the object files under store, relative to it.
func objects(t *testing.T, store string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(filepath.Join(store, storepkg.ObjectsDir), func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(store, path)
		names = append(names, rel)
		return err
	})
	require.NoError(t, err)
	return names
}

// unroot returns b with every occurrence of root replaced by "$ROOT", so
// that outputs migrated under two roots compare equal: placeholders hold
// the absolute paths of their objects.
func unroot(root string, b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(root), []byte("$ROOT"))
}

// snapshot describes every entry under root: kind, mode and content hash,
// the content unrooted.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			sum := sha256.Sum256(unroot(root, readFile(t, path)))
			desc += " " + hex.EncodeToString(sum[:])
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		m[path] = desc
		return nil
	})
	require.NoError(t, err)
	return m
}

// TestMigratePathsAgentsCanOpen: a placeholder's path is the object's
// absolute path however the transcript and the store were named, because
// an agent resolves it against its own working directory; with StoreAs,
// it is the object's path under the store's location as the agent sees it.
func TestMigratePathsAgentsCanOpen(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		name string
		opts migrate.Options
		base string // the placeholders' store, as written
	}{
		{"default store", migrate.Options{}, filepath.Join(dir, "a", session.StoreDirName)},
		{"relative store", migrate.Options{Store: "store"}, filepath.Join(dir, "store")},
		{"store as", migrate.Options{Store: "store2", StoreAs: "/mnt/agent/store/"}, "/mnt/agent/store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("a", tc.name+".jsonl")
			writeFile(t, path, testsession.Pi(tc.name, 1, payload), 0o600)
			migrateRun(t, tc.opts, path)
			got := readFile(t, path)
			paths := regexp.MustCompile(`path: ([^\\"]+)`).FindAllSubmatch(got, -1)
			require.Len(t, paths, 1, "%s", got)
			p := string(paths[0][1])
			assert.True(t, strings.HasPrefix(p, tc.base+"/objects/"), "%s is not under %s", p, tc.base)
			if tc.opts.StoreAs == "" {
				data, err := os.ReadFile(p) // from anywhere: the path is absolute
				require.NoError(t, err)
				assert.Equal(t, testsession.Text(1, payload), string(data))
			}
		})
	}
}

func TestMigrateInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 3, payload)
	writeFile(t, path, orig, 0o640)

	sum := migrateRun(t, migrate.Options{}, path)

	r := result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusMigrated, r.Status)
	assert.Equal(t, "pi", r.Format)
	got := readFile(t, path)
	assert.Less(t, len(got), len(orig)-3*payload/2, "three payloads should have left the file")
	assert.Equal(t, int64(len(orig)), r.BytesBefore)
	assert.Equal(t, int64(len(got)), r.BytesAfter)
	assert.Equal(t, 3, bytes.Count(got, []byte(omitted)))
	assert.Equal(t, 1, sum.Migrated)
	assert.Equal(t, 3, sum.Artifacts)
	assert.Equal(t, 3, sum.Written)

	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the transcript keeps its mode")

	store := filepath.Join(dir, session.StoreDirName)
	names := objects(t, store)
	assert.Len(t, names, 3)
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(store, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "artifacts are private")
	}
	fi, err = os.Stat(store)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the store is private")

	assert.Equal(t, orig, rehydrate(t, path, ""))
	assert.Equal(t, orig, rehydrate(t, path, store), "an explicit store is the same store")
}

func TestMigrateTwiceChangesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 4, payload)
	writeFile(t, path, orig, 0o644)
	first := migrateRun(t, migrate.Options{}, path)
	require.Equal(t, 1, first.Migrated)
	require.Equal(t, 4, first.Written)
	store := filepath.Join(dir, session.StoreDirName)
	migrated, objs, reg := sha(t, path), objects(t, store), registryState(t, store)
	require.Len(t, reg, 1, "one segment")

	second := migrateRun(t, migrate.Options{}, path)

	assert.Equal(t, 0, second.Migrated)
	assert.Equal(t, 1, second.Unchanged)
	assert.Equal(t, 0, second.Written)
	assert.Equal(t, 0, second.Failed)
	assert.Equal(t, second.BytesBefore, second.BytesAfter)
	assert.Equal(t, migrated, sha(t, path), "a second migration changed the transcript")
	assert.Equal(t, objs, objects(t, store), "a second migration wrote artifacts")
	assert.Equal(t, reg, registryState(t, store), "a second migration appended to the registry")
	assert.Equal(t, orig, rehydrate(t, path, ""))
}

// registryState returns the SHA-256 of each registry file of store, by
// name: the single-file registry of earlier versions and the segments.
func registryState(t *testing.T, store string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for path := range snapshot(t, store) {
		if rel, err := filepath.Rel(store, path); err == nil {
			if _, ok := registryOf(rel); ok {
				m[rel] = sha(t, path)
			}
		}
	}
	return m
}

func TestMigrateOutMirrorsTree(t *testing.T) {
	root := t.TempDir()
	src, out := filepath.Join(root, "src"), filepath.Join(root, "out")
	files := map[string][]byte{
		"a.jsonl":             testsession.Pi("a", 2, payload),
		"sub/b.jsonl":         testsession.Pi("b", 3, payload),
		"sub/deeper/c.jsonl":  testsession.Pi("c", 2, 100), // nothing to externalize
		"sub/deeper/d.jsonl":  testsession.Pi("d", 1, payload),
		"other/z/small.jsonl": testsession.Pi("z", 1, 10),
	}
	for rel, data := range files {
		writeFile(t, filepath.Join(src, rel), data, 0o644)
	}
	before := snapshot(t, src)

	sum := migrateRun(t, migrate.Options{Out: out}, src)

	assert.Equal(t, before, snapshot(t, src), "--out changed the sources")
	assert.Equal(t, 5, sum.Files)
	assert.Equal(t, 3, sum.Migrated)
	assert.Equal(t, 0, sum.Failed)
	for rel, data := range files {
		dest := filepath.Join(out, rel)
		r := result(t, sum, filepath.Join(src, rel))
		assert.Equal(t, dest, r.Dest)
		got := readFile(t, dest)
		assert.Equal(t, int64(len(got)), r.BytesAfter, rel)
		if r.Status == migrate.StatusUnchanged {
			assert.Equal(t, data, got, "%s: an unchanged file is copied to --out as it is", rel)
			continue
		}
		assert.Equal(t, migrate.StatusMigrated, r.Status, rel)
		assert.Less(t, len(got), len(data), rel)
		assert.Equal(t, data, rehydrate(t, dest, ""), rel)
	}
	assert.NoDirExists(t, filepath.Join(src, session.StoreDirName), "--out wrote a store beside a source")
	assert.Len(t, objects(t, filepath.Join(out, session.StoreDirName)), 2)
	assert.Len(t, objects(t, filepath.Join(out, "sub", session.StoreDirName)), 3)
	assert.Len(t, objects(t, filepath.Join(out, "sub", "deeper", session.StoreDirName)), 1)
}

func TestMigrateDryRunWritesNothing(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	writeFile(t, filepath.Join(src, "a.jsonl"), testsession.Pi("a", 3, payload), 0o644)
	writeFile(t, filepath.Join(src, "sub", "b.jsonl"), testsession.Pi("b", 2, payload), 0o600)
	before := snapshot(t, root)

	for _, out := range []string{"", filepath.Join(root, "out")} {
		sum := migrateRun(t, migrate.Options{DryRun: true, Out: out}, src)

		assert.Equal(t, before, snapshot(t, root), "--dry-run wrote something (--out %q)", out)
		assert.True(t, sum.DryRun)
		assert.Equal(t, 2, sum.Migrated)
		assert.Equal(t, 5, sum.Artifacts)
		assert.Equal(t, 5, sum.Written, "what a real run would write")
		assert.Less(t, sum.BytesAfter, sum.BytesBefore-5*payload/2)
	}
}

func TestMigrateDryRunMatchesRealRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	writeFile(t, path, testsession.Pi("s1", 3, payload), 0o644)

	dry := migrateRun(t, migrate.Options{DryRun: true}, path)
	done := migrateRun(t, migrate.Options{}, path)

	assert.Equal(t, done.BytesAfter, dry.BytesAfter)
	assert.Equal(t, done.Written, dry.Written)
}

func TestMigrateBackup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 2, payload)
	writeFile(t, path, orig, 0o640)

	sum := migrateRun(t, migrate.Options{Backup: true}, path)

	require.Equal(t, migrate.StatusMigrated, result(t, sum, path).Status)
	assert.Equal(t, orig, readFile(t, path+".bak"))
	assert.Less(t, len(readFile(t, path)), len(orig))
	assert.Equal(t, orig, rehydrate(t, path, ""))
}

func TestMigrateBackupRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 2, payload)
	old := []byte("an older backup\n")
	writeFile(t, path, orig, 0o644)
	writeFile(t, path+".bak", old, 0o644)
	other := filepath.Join(dir, "t.jsonl")
	writeFile(t, other, testsession.Pi("t1", 2, payload), 0o644)

	sum := migrateRun(t, migrate.Options{Backup: true}, path, other)

	r := result(t, sum, path)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	require.Error(t, r.Err)
	assert.Contains(t, r.Err.Error(), path+".bak")
	assert.Equal(t, r.Err.Error(), r.Message)
	assert.Equal(t, orig, readFile(t, path), "the original was touched")
	assert.Equal(t, old, readFile(t, path+".bak"), "the existing backup was touched")
	assert.Equal(t, migrate.StatusMigrated, result(t, sum, other).Status, "the other file was not migrated")
	assert.FileExists(t, other+".bak")
}

func TestMigrateUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	other := []byte(`{"hello":"world","text":"` + strings.Repeat("x", 2*payload) + `"}` + "\n")
	path := filepath.Join(dir, "other.jsonl")
	writeFile(t, path, other, 0o644)

	t.Run("found while walking", func(t *testing.T) {
		sum := migrateRun(t, migrate.Options{}, dir)
		r := result(t, sum, path)
		assert.Equal(t, migrate.StatusSkipped, r.Status)
		assert.ErrorIs(t, r.Err, session.ErrUnknownFormat)
		assert.Equal(t, 1, sum.Skipped)
		assert.Equal(t, 0, sum.Failed)
		assert.Equal(t, int64(len(other)), sum.BytesAfter, "a skipped file saves nothing")
		assert.Equal(t, other, readFile(t, path))
	})
	t.Run("named", func(t *testing.T) {
		sum := migrateRun(t, migrate.Options{}, path)
		r := result(t, sum, path)
		assert.Equal(t, migrate.StatusFailed, r.Status)
		assert.ErrorIs(t, r.Err, session.ErrUnknownFormat)
		assert.Contains(t, r.Message, path)
		assert.Equal(t, r.BytesBefore, r.BytesAfter, "a failed file saves nothing")
		assert.Equal(t, other, readFile(t, path))
	})
	t.Run("forced", func(t *testing.T) {
		sum := migrateRun(t, migrate.Options{Format: "nope"}, path)
		assert.ErrorIs(t, result(t, sum, path).Err, session.ErrUnknownFormat)
		assert.Equal(t, other, readFile(t, path))
	})
	assert.NoDirExists(t, filepath.Join(dir, session.StoreDirName))
}

func TestMigrateFailureDoesNotStopOthers(t *testing.T) {
	t.Run("forged marker", func(t *testing.T) {
		dir := t.TempDir()
		good1, bad, good2 := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl"), filepath.Join(dir, "3.jsonl")
		// The forged line comes after a line that migration shrinks, so
		// that its offset in the file differs from the one in the output.
		head := testsession.Header("bad") + "\n" + testsession.ToolCall(1) + "\n" + testsession.ToolResult(1, payload) + "\n"
		badData := []byte(head + forgedLine + "\n" + testsession.ToolResult(2, payload) + "\n")
		writeFile(t, good1, testsession.Pi("g1", 2, payload), 0o644)
		writeFile(t, bad, badData, 0o644)
		writeFile(t, good2, testsession.Pi("g2", 2, payload), 0o644)

		sum := migrateRun(t, migrate.Options{Jobs: 1}, dir)

		r := result(t, sum, bad)
		assert.Equal(t, migrate.StatusFailed, r.Status)
		assert.ErrorIs(t, r.Err, storepkg.ErrNotFound)
		var ie *transcript.InputError
		require.ErrorAs(t, r.Err, &ie)
		assert.Equal(t, 4, ie.Line)
		assert.Equal(t, int64(len(head)), ie.Offset, "the offset is not the line's in the file")
		assert.Contains(t, r.Message, fmt.Sprintf("%s:4: byte %d: ", bad, len(head)))
		assert.Equal(t, badData, readFile(t, bad), "the failed file was touched")
		assert.Equal(t, int64(len(badData)), r.BytesAfter, "a failed file saves nothing")
		assert.Equal(t, 1, sum.Failed)
		assert.Equal(t, 2, sum.Migrated)
		for _, good := range []string{good1, good2} {
			assert.Equal(t, migrate.StatusMigrated, result(t, sum, good).Status)
			assert.Contains(t, string(readFile(t, good)), omitted)
		}
		assertNoTempFiles(t, dir)
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any file")
		}
		dir := t.TempDir()
		locked, good := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl")
		writeFile(t, locked, testsession.Pi("l", 1, payload), 0o000)
		writeFile(t, good, testsession.Pi("g", 1, payload), 0o644)

		sum := migrateRun(t, migrate.Options{}, dir)

		assert.Equal(t, migrate.StatusFailed, result(t, sum, locked).Status)
		assert.ErrorIs(t, result(t, sum, locked).Err, fs.ErrPermission)
		assert.Equal(t, migrate.StatusMigrated, result(t, sum, good).Status)
	})
}

// assertNoTempFiles checks that no temporary file was left in dir.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "a temporary file was left behind")
	}
}

// appender is a Progress that appends a line to a transcript the first
// time it is called, as an agent still writing to it would.
type appender struct {
	path string
	line []byte
	once sync.Once
	err  error
}

func (a *appender) Add(int64) {
	a.once.Do(func() {
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			a.err = err
			return
		}
		_, a.err = f.Write(a.line)
		if err := f.Close(); a.err == nil {
			a.err = err
		}
	})
}

func TestMigrateSourceChanged(t *testing.T) {
	for _, opts := range []migrate.Options{{}, {Backup: true}, {Out: "out"}} {
		t.Run(fmt.Sprintf("backup=%v out=%q", opts.Backup, opts.Out), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			orig := testsession.Pi("s1", 3, payload)
			writeFile(t, path, orig, 0o644)
			more := []byte(testsession.ToolResult(4, payload) + "\n")
			progress := &appender{path: path, line: more}
			if opts.Out != "" {
				opts.Out = filepath.Join(dir, opts.Out)
			}
			opts.Progress = progress

			sum := migrateRun(t, opts, path)

			require.NoError(t, progress.err)
			r := result(t, sum, path)
			assert.Equal(t, migrate.StatusFailed, r.Status)
			assert.ErrorIs(t, r.Err, session.ErrSourceChanged)
			assert.Equal(t, append(orig, more...), readFile(t, path), "the agent's bytes were not kept")
			assert.Equal(t, r.BytesBefore, r.BytesAfter, "a failed file saves nothing")
			assert.NoFileExists(t, path+".bak")
			assertNoTempFiles(t, dir)
			if opts.Out != "" {
				assert.NoFileExists(t, filepath.Join(opts.Out, "s.jsonl"))
				assertNoTempFiles(t, opts.Out)
			}
		})
	}
}

// normalized returns the records of the store at dir with what differs
// between runs (creation time, absolute source path) taken out, sorted.
func normalized(t *testing.T, dir, root string) []registry.Record {
	t.Helper()
	var recs []registry.Record
	err := registry.New(local.New(dir)).Records(context.Background(), func(r registry.Record) error {
		rel, err := filepath.Rel(root, r.Source)
		r.Source, r.CreatedAt = rel, ""
		recs = append(recs, r)
		return err
	}, func(e *registry.BadLineError) { t.Error(e) })
	require.NoError(t, err)
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Site < b.Site
	})
	return recs
}

func TestMigrateJobsGiveSameOutput(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	for i := 0; i < 12; i++ {
		rel := fmt.Sprintf("d%d/s%02d.jsonl", i%3, i)
		// Sessions share their first payloads, so workers race to store them.
		writeFile(t, filepath.Join(src, rel), testsession.Pi(fmt.Sprint(i), 1+i%4, payload+i%2), 0o644)
	}
	outs := map[int]string{}
	sums := map[int]migrate.Summary{}
	for _, jobs := range []int{1, 4} {
		outs[jobs] = filepath.Join(root, fmt.Sprintf("out%d", jobs))
		sums[jobs] = migrateRun(t, migrate.Options{Out: outs[jobs], Jobs: jobs}, src)
		require.Equal(t, 0, sums[jobs].Failed)
	}

	assert.Equal(t, sums[1].BytesAfter, sums[4].BytesAfter)
	assert.Equal(t, sums[1].Migrated, sums[4].Migrated)
	assert.Equal(t, sums[1].Artifacts, sums[4].Artifacts)
	for i := range sums[1].Results {
		assert.Equal(t, sums[1].Results[i].Path, sums[4].Results[i].Path, "results are in input order")
	}
	files := func(out string) map[string]string {
		m := map[string]string{}
		for path, desc := range snapshot(t, out) {
			rel, err := filepath.Rel(out, path)
			require.NoError(t, err)
			if _, ok := registryOf(rel); !ok {
				m[rel] = desc
			}
		}
		return m
	}
	one, four := files(outs[1]), files(outs[4])
	assert.NotEmpty(t, one)
	assert.Equal(t, one, four)
	for d := 0; d < 3; d++ {
		store := fmt.Sprintf("d%d/%s", d, session.StoreDirName)
		recs := normalized(t, filepath.Join(outs[1], store), outs[1])
		assert.NotEmpty(t, recs)
		assert.Equal(t, recs, normalized(t, filepath.Join(outs[4], store), outs[4]), store)
	}
}

func TestMigrateHugeLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	// One line far longer than any read buffer.
	orig := testsession.Pi("s1", 1, 8<<20)
	writeFile(t, path, orig, 0o644)

	sum := migrateRun(t, migrate.Options{}, path)

	require.Equal(t, migrate.StatusMigrated, result(t, sum, path).Status)
	assert.Less(t, len(readFile(t, path)), 4096)
	assert.Equal(t, orig, rehydrate(t, path, ""))
}

// TestMigrateLongLines: lines longer than session.LongLine are rewritten
// from their skeletons, exactly as shorter ones are, whatever comes around
// them; one whose skeleton is too large is copied as it is and counted;
// a long line already migrated is left alone.
func TestMigrateLongLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	long := testsession.Pi("s1", 1, session.LongLine+1000)
	lines := bytes.SplitAfter(long, []byte("\n"))
	numbers := `{"type":"message","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}`
	var orig []byte
	orig = append(orig, lines[0]...) // the session header
	for _, l := range lines[1:] {
		orig = append(orig, bytes.TrimSuffix(l, []byte("\n"))...)
		orig = append(orig, "\r\n"...)
	}
	orig = append(orig, numbers...)
	orig = append(orig, '\n')
	orig = append(orig, lines[len(lines)-1]...) // once more, without a final newline
	orig = bytes.TrimSuffix(orig, []byte("\n"))
	writeFile(t, path, orig, 0o644)

	sum := migrateRun(t, migrate.Options{}, path)

	r := result(t, sum, path)
	require.Equal(t, migrate.StatusMigrated, r.Status, r.Message)
	assert.Equal(t, 1, r.LongKept, "the line of numbers")
	assert.Less(t, len(readFile(t, path)), 20<<20)
	assert.Equal(t, orig, rehydrate(t, path, ""))
	migrated := readFile(t, path)
	again := migrateRun(t, migrate.Options{}, path)
	assert.Equal(t, migrate.StatusUnchanged, result(t, again, path).Status)
	assert.Equal(t, migrated, readFile(t, path), "a second run changes nothing")
}

func TestRehydrateInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 2, payload)
	writeFile(t, path, orig, 0o640)
	require.Equal(t, 1, migrateRun(t, migrate.Options{}, path).Migrated)
	inputs, err := session.Collect([]string{path})
	require.NoError(t, err)

	sum := migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, InPlace: true})

	r := result(t, sum, path)
	require.NoError(t, r.Err)
	assert.Equal(t, migrate.StatusRestored, r.Status)
	assert.Equal(t, orig, readFile(t, path))
	assert.Equal(t, int64(len(orig)), r.BytesAfter)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

func TestRehydrateMissingArtifact(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 2, payload)
	writeFile(t, path, orig, 0o644)
	require.Equal(t, 1, migrateRun(t, migrate.Options{}, path).Migrated)
	store := filepath.Join(dir, session.StoreDirName)
	names := objects(t, store)
	require.Len(t, names, 2)
	require.NoError(t, os.Remove(filepath.Join(store, names[0])))

	var buf bytes.Buffer
	err := migrate.RehydrateTo(context.Background(), &buf, session.Input{Path: path}, "", local.Open, nil)

	assert.ErrorIs(t, err, storepkg.ErrNotFound)
	var ie *transcript.InputError
	require.ErrorAs(t, err, &ie)
	assert.True(t, bytes.HasPrefix(orig, buf.Bytes()), "a wrong byte was written")
	assert.Less(t, buf.Len(), len(orig))
}

// corpus returns the real pi transcripts, or skips the test.
func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../shared/corpus/pi/*.jsonl")
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("no ../../shared/corpus/pi")
	}
	return files
}

func TestMigrateCorpus(t *testing.T) {
	dir := t.TempDir()
	originals := map[string]string{} // copy → sha256 of the original
	var before int64
	for _, name := range corpus(t) {
		data := readFile(t, name)
		path := filepath.Join(dir, filepath.Base(name))
		writeFile(t, path, data, 0o644)
		originals[path] = sha(t, path)
		before += int64(len(data))
	}

	sum := migrateRun(t, migrate.Options{}, dir)

	require.Equal(t, 0, sum.Failed, "%+v", sum.Results)
	assert.Equal(t, len(originals), sum.Migrated)
	var after int64
	for path := range originals {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		after += fi.Size()
	}
	assert.Equal(t, before, sum.BytesBefore)
	assert.Equal(t, after, sum.BytesAfter)
	t.Logf("%d -> %d bytes (%.1f%%), %d artifacts, %d written", before, after, 100*float64(after)/float64(before), sum.Artifacts, sum.Written)
	assert.LessOrEqual(t, after, before*3/4, "migration should save at least a quarter")

	store := filepath.Join(dir, session.StoreDirName)
	objs := objects(t, store)
	assert.Len(t, objs, sum.Written)
	for _, name := range objs {
		assert.Equal(t, filepath.Base(name), sha(t, filepath.Join(store, name)), "an artifact's name is its SHA-256")
		assert.Equal(t, filepath.Base(name)[:2], filepath.Base(filepath.Dir(name)), "shard of %s", name)
	}
	for path, want := range originals {
		got := sha256.Sum256(rehydrate(t, path, ""))
		assert.Equal(t, want, hex.EncodeToString(got[:]), "rehydrated %s", path)
	}

	migrated := map[string]string{}
	for path := range originals {
		migrated[path] = sha(t, path)
	}
	again := migrateRun(t, migrate.Options{}, dir)
	assert.Equal(t, len(originals), again.Unchanged)
	assert.Equal(t, 0, again.Written)
	assert.Equal(t, objs, objects(t, store))
	for path, want := range migrated {
		assert.Equal(t, want, sha(t, path), "migrating %s again changed it", path)
	}
}

// TestMigrateRefusesLockedTranscript: while another run holds a
// transcript, a second run is refused with ErrBusy and changes nothing.
func TestMigrateRefusesLockedTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := testsession.Pi("s", 2, payload)
	writeFile(t, path, data, 0o644)

	other, err := os.Open(path)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(other.Fd()), syscall.LOCK_EX))

	sum := migrateRun(t, migrate.Options{}, path)
	r := result(t, sum, path)
	assert.Equal(t, migrate.StatusFailed, r.Status)
	assert.ErrorIs(t, r.Err, session.ErrBusy)
	assert.Contains(t, r.Message, path)
	assert.Equal(t, data, readFile(t, path))
	assert.NoDirExists(t, filepath.Join(dir, session.StoreDirName), "refused before anything is written")

	require.NoError(t, other.Close()) // releases the lock
	sum = migrateRun(t, migrate.Options{}, path)
	assert.Equal(t, migrate.StatusMigrated, result(t, sum, path).Status)
}

func TestLargestFirst(t *testing.T) {
	inputs := []session.Input{
		{Path: "a", Size: 10}, {Path: "b", Size: 300}, {Path: "c", Size: 10},
		{Path: "d", Size: 0}, {Path: "e", Size: 2000}, {Path: "f", Size: 300},
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, migrate.LargestFirst(inputs, 1), "one worker takes them as given")
	assert.Equal(t, []int{4, 1, 5, 0, 2, 3}, migrate.LargestFirst(inputs, 2), "largest first, ties in input order")
	assert.Empty(t, migrate.LargestFirst(nil, 2))
}

// TestRehydrateLongLines: a long line without a marker is copied from
// the file as it is, one whose payload only mentions the marker's key is
// read whole and still kept as it is, and a long migrated line (megabytes
// of short strings are left on it) is restored; to stdout and into --out.
func TestRehydrateLongLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	mentions := `{"type":"message","id":"q","message":{"role":"user","content":"` +
		strings.Repeat("x", session.LongLine) + ` \"transcriptTool\": {} "}}`
	numbers := `{"type":"message","id":"n","message":{"role":"toolResult","toolCallId":"n","toolName":"x","content":[` +
		strings.Repeat("1,", 9<<20) + `1]}}`
	shorts := `{"type":"message","id":"m","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"` +
		strings.Repeat("y", 9000) + `"}]},"names":[` + strings.Repeat(`"abcdef",`, 600_000) + `"z"]}`
	orig := append(testsession.Pi("s1", 1, payload), (mentions + "\n" + numbers + "\r\n" + shorts)...)
	writeFile(t, path, orig, 0o644)

	sum := migrateRun(t, migrate.Options{}, path)

	require.Equal(t, migrate.StatusMigrated, result(t, sum, path).Status)
	migrated := readFile(t, path)
	last := migrated[bytes.LastIndexByte(migrated, '\n')+1:]
	require.Greater(t, len(last), session.LongLine, "the migrated line is not long")
	require.True(t, bytes.Contains(last, []byte(`"transcriptTool":{`)), "the long line was not migrated")
	assert.Equal(t, orig, rehydrate(t, path, ""))
	out := filepath.Join(dir, "out")
	back := migrate.Rehydrate(context.Background(), []session.Input{{Path: path, Rel: "s.jsonl"}}, migrate.RehydrateOptions{OpenStore: local.Open, Out: out})
	require.Equal(t, 0, back.Failed, back.Results)
	assert.Equal(t, orig, readFile(t, filepath.Join(out, "s.jsonl")))
}

// TestRehydrateToWritesNothingOfABrokenFile: a transcript whose last
// artifact is missing gives an error naming its line and no byte at all,
// so that a caller that ignores the status is not left a truncated
// original; with the artifact back, the whole original.
func TestRehydrateToWritesNothingOfABrokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := testsession.Pi("s1", 3, payload)
	writeFile(t, path, orig, 0o600)
	migrateRun(t, migrate.Options{}, path)
	last := storepkg.Sum([]byte(testsession.Text(3, payload)))
	object := filepath.Join(dir, session.StoreDirName, local.ObjectPath(last))
	saved := readFile(t, object)
	require.NoError(t, os.Remove(object))

	var out bytes.Buffer
	err := migrate.RehydrateTo(context.Background(), &out, session.Input{Path: path}, "", local.Open, nil)
	require.ErrorIs(t, err, storepkg.ErrNotFound)
	assert.Contains(t, err.Error(), "s.jsonl:8:")
	assert.Zero(t, out.Len(), "bytes were written before the error")

	writeFile(t, object, saved, 0o600)
	assert.Equal(t, orig, rehydrate(t, path, ""))
}

// TestFailedFileCountsNothing: a file that fails after some of its
// artifacts were stored reports none in the summary: they were not
// committed, or are orphans for gc.
func TestFailedFileCountsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	forged := `{"type":"message","id":"f","message":{"role":"toolResult","toolCallId":"c9","content":"x"},"transcriptTool":{"v":1,"sha256":"` +
		strings.Repeat("1", 64) + `","edits":[{"at":"/message/content","parts":[{"id":"` + storepkg.Sum([]byte("nowhere")).String() + `","form":"js"}]}]}}` + "\n"
	writeFile(t, path, append(testsession.Pi("s1", 2, payload), forged...), 0o600)

	sum := migrateRun(t, migrate.Options{}, path)
	require.Equal(t, 1, sum.Failed)
	r := result(t, sum, path)
	assert.Contains(t, r.Message, "already migrated, but")
	assert.Zero(t, sum.Artifacts+sum.Written+sum.Deduplicated, "%+v", sum)
}
