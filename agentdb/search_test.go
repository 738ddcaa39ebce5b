package agentdb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/openclawgen"
)

// imagesMigrated returns session C's lines with each image replaced as
// migrate replaces a user's image: by a text block naming the artifact,
// the entry gaining the marker member.
func imagesMigrated(lines []string) []string {
	image := `{"type":"image","data":"` + pixel + `","mimeType":"image/png"}`
	text := `{"type":"text","text":"[Image omitted: stored as artifact]\npath: /artifacts/objects/f0/f0"}`
	out := append([]string(nil), lines...)
	for i, l := range out {
		if strings.Contains(l, image) {
			l = strings.ReplaceAll(l, image, text)
			out[i] = l[:len(l)-1] + `,"transcriptTool":{"v":1}}`
		}
	}
	return out
}

// readSearch returns the search projection of session in the database
// at path.
func readSearch(t *testing.T, path, session string) openclawgen.Projection {
	t.Helper()
	p, err := openclawgen.ReadProjection(path, session)
	require.NoError(t, err)
	return p
}

// rebuiltByOpenClaw returns the search projection of session that
// OpenClaw's own rebuild makes of the rows of the database at path, in a
// copy of it.
func rebuiltByOpenClaw(t *testing.T, path, session string) openclawgen.Projection {
	t.Helper()
	bin, pathEnv := openclawEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node := filepath.Join(strings.Split(pathEnv, ":")[0], "node")
	p, err := openclawgen.Rebuilt(ctx, node, filepath.Join(filepath.Dir(filepath.Dir(bin)), "openclaw"), path, session, t.TempDir())
	require.NoError(t, err)
	return p
}

// TestSearchAsOpenClawRebuilds checks that after a replace the search
// projection holds what OpenClaw's own rebuild of it makes, without a
// rebuild: a user's image that became text is searched, and no longer
// once restored; tool results, which are not searched, leave it as it is.
func TestSearchAsOpenClawRebuilds(t *testing.T) {
	d := fixtureDB(t)
	ctx := context.Background()
	step := func(session string, lines []string) {
		t.Helper()
		snap, _, _ := fetchFile(t, d, session)
		_, err := d.Replace(ctx, snap, writeLines(t, lines))
		require.NoError(t, err)
		got := readSearch(t, d.Path, session)
		assert.Equal(t, rebuiltByOpenClaw(t, d.Path, session), got)
		assert.Equal(t, "0", strings.Split(got.State, "|")[2], "not left for OpenClaw to rebuild")
	}
	origC := fixtureLines()[sessionC]
	before := readSearch(t, d.Path, sessionC)
	require.Len(t, before.FTS, 3, "fixture: two texts and the user's text beside the image")

	step(sessionC, imagesMigrated(origC))
	fts := fmt.Sprint(readSearch(t, d.Path, sessionC).FTS)
	assert.Contains(t, fts, "c1|user|1795132801000.0|look at this\n[Image omitted")
	assert.Contains(t, fts, "c3|user|1795132803000.0|[Image omitted")

	step(sessionC, origC)
	assert.Equal(t, before.FTS, readSearch(t, d.Path, sessionC).FTS)

	step(sessionA, migrated(fixtureLines()[sessionA]))
}
