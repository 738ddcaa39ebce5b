package show

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the actual output")

// goldenThreshold is low, so that the payloads of the hand-written
// sessions are migrated: each is larger than the placeholder and marker
// edit that stand for it, so that moving it shortens its line.
const goldenThreshold = 100

// goldenCases are the hand-written sessions in testdata and their formats.
var goldenCases = []struct{ name, format string }{
	{"pi", "pi"},
	{"claude-code", "claude-code"},
	{"codex", "codex"},
	{"codex-legacy", "codex"},
	{"chat", "chat"},
	{"notes", "pi"},
}

// TestGolden renders each session in testdata as it is and migrated (into
// a store whose absolute path the golden files spell $STORE, so that they
// are the same on every machine), and checks that the migrated session rehydrated
// shows exactly as the original.
func TestGolden(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	store := registry.New(local.New("artifacts"))
	storeAbs, err := filepath.Abs(store.Dir())
	require.NoError(t, err)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(dir, tc.name+".jsonl"))
			require.NoError(t, err)
			plain := render(t, input, Options{Format: tc.format, Store: store})
			checkGolden(t, filepath.Join(dir, tc.name+".golden"), plain)

			migrated := migrateAll(t, tc.format, input, goldenThreshold, store)
			require.NotEqual(t, string(input), string(migrated), "nothing was migrated")
			refs := strings.ReplaceAll(render(t, migrated, Options{Format: tc.format, Store: store}), storeAbs, "$STORE")
			checkGolden(t, filepath.Join(dir, tc.name+".migrated.golden"), refs)

			rehydrated := render(t, migrated, Options{Format: tc.format, Store: store, Rehydrate: true})
			assert.Equal(t, plain, rehydrated, "rehydrated, the migrated session shows as the original")
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./show -update to create it")
	assert.Equal(t, string(want), got, "differs from %s; go test ./show -update rewrites it", path)
}

// render renders input with opts and returns the output.
func render(t testing.TB, input []byte, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, Render(&out, bytes.NewReader(input), opts))
	return out.String()
}

// migrateAll migrates every line of input as migrate would, storing the
// artifacts in store.
func migrateAll(t testing.TB, name string, input []byte, threshold int, store *registry.Store) []byte {
	t.Helper()
	f, ok := format.Lookup(name)
	require.True(t, ok, name)
	x := &externalizer.Externalizer{
		Format:    f,
		Threshold: threshold,
		PathFor:   store.Path,
		Put: func(a externalizer.Artifact) error {
			_, _, err := store.Put(context.Background(), a.Data)
			return err
		},
		Open: store.Opener(context.Background()),
	}
	var out bytes.Buffer
	r := transcript.NewReader(bytes.NewReader(input))
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		res, err := x.Rewrite(l.Text, transcript.JSONStart(l))
		require.NoError(t, err, "line %d", l.Num)
		if res.Line != nil {
			out.Write(res.Line)
		} else {
			out.Write(l.Text)
		}
		out.Write(l.EOL)
	}
	return out.Bytes()
}

// TestCorpus shows the real transcripts of ../../shared/corpus: every
// entry is known to its format, and each file migrated and rehydrated
// shows as the original.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../shared/corpus/*/*.jsonl")
	if len(files) == 0 {
		t.Skip("no corpus at ../../shared/corpus")
	}
	store := registry.New(local.New(t.TempDir()))
	for _, path := range files {
		format := filepath.Base(filepath.Dir(path))
		t.Run(filepath.Base(path), func(t *testing.T) {
			input, err := os.ReadFile(path)
			require.NoError(t, err)
			plain := render(t, input, Options{Format: format, Store: store})
			assert.NotContains(t, plain, "\nline ", "an entry the renderer does not know")
			assert.NotContains(t, plain, "\x1b", "no escape without colour")

			migrated := migrateAll(t, format, input, 4096, store)
			refs := render(t, migrated, Options{Format: format, Store: store})
			if !bytes.Equal(migrated, input) {
				assert.Contains(t, refs, "⧉ artifact ")
			}
			assert.NotContains(t, refs, "not in store")
			assert.Equal(t, plain, render(t, migrated, Options{Format: format, Store: store, Rehydrate: true}))
			assert.False(t, strings.Contains(refs, "Tool result omitted"), "placeholders are shown as references")
		})
	}
}
