package benchgen

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/migrate"
	sess "github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// smallProject is a project folder that takes a fraction of a second to
// write and migrate, with subagents.
var smallProject = Project{Seed: 3, Sessions: 12, Calls: 6, Distinct: 8, PayloadSize: 8000, Subagents: true}

// smallProjectDigest is treeDigest of the transcripts of smallProject.
// When a change to the generator, or to a library it uses, changes it,
// bump ProjectVersion and update it.
const smallProjectDigest = "4d96865189b1939003fff643f64b07236e42cff101d9105fac3ceefd598d2818"

func generateProject(t *testing.T, p Project) (string, ProjectStats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "project")
	st, err := GenerateProject(dir, p)
	require.NoError(t, err)
	return dir, st
}

func TestGenerateProject(t *testing.T) {
	t.Parallel()
	dir, st := generateProject(t, smallProject)
	files := readTree(t, dir)
	b, _ := generateProject(t, smallProject)
	assert.Equal(t, files, readTree(t, b))
	assert.Equal(t, smallProjectDigest, treeDigest(files), "the folder changed: bump ProjectVersion and update smallProjectDigest")

	var sessions, subagents int
	var total int64
	folder := filepath.Join("sessions", ProjectFolder) + string(filepath.Separator)
	for name, data := range files {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		require.True(t, strings.HasPrefix(name, folder), name)
		if strings.Contains(name, string(filepath.Separator)+"subagents"+string(filepath.Separator)+"agent-") {
			subagents++
		} else {
			sessions++
		}
		total += int64(len(data))
	}
	assert.Equal(t, smallProject.Sessions, sessions)
	assert.Equal(t, smallProject.Sessions/4, subagents)
	assert.Equal(t, st.Sessions, sessions)
	assert.Equal(t, st.Subagents, subagents)
	assert.Equal(t, st.Bytes, total)
	assert.Equal(t, ProjectStamp(smallProject)+"\n", string(files["stamp"]))
	assert.Equal(t, st.String()+"\n", string(files["description"]))

	_, err := GenerateProject(dir, smallProject)
	assert.ErrorContains(t, err, "exists", "an existing directory is refused")
}

// Every line is JSON; each tool result is on its line twice, a Read's
// line-numbered in tool_result and plain in toolUseResult, a Bash
// command's the same; few distinct outputs stand behind many results.
func TestProjectContent(t *testing.T) {
	t.Parallel()
	dir, st := generateProject(t, smallProject)
	outputs := map[string]int{}
	var reads, commands int
	for name, data := range readTree(t, filepath.Join(dir, "sessions")) {
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			require.True(t, json.Valid(line), "%s:%d is not JSON", name, i+1)
			var e struct {
				SessionID   string `json:"sessionId"`
				IsSidechain bool   `json:"isSidechain"`
				Message     struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
				Result *struct {
					Stdout *string `json:"stdout"`
					File   *struct {
						Content string `json:"content"`
					} `json:"file"`
				} `json:"toolUseResult"`
			}
			require.NoError(t, json.Unmarshal(line, &e))
			if e.SessionID != "" {
				assert.Contains(t, name, e.SessionID, "%s:%d: the session's id names its file or folder", name, i+1)
				assert.Equal(t, strings.Contains(name, "subagents"), e.IsSidechain, "%s:%d", name, i+1)
			}
			if e.Result == nil {
				continue
			}
			var blocks []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			}
			require.NoError(t, json.Unmarshal(e.Message.Content, &blocks))
			require.Len(t, blocks, 1)
			require.Equal(t, "tool_result", blocks[0].Type)
			switch got := blocks[0].Content; {
			case e.Result.File != nil:
				plain := e.Result.File.Content
				var numbered strings.Builder
				for n, l := range strings.SplitAfter(plain, "\n") {
					if l != "" {
						numbered.WriteString(string(appendLineNumber(nil, n+1, transcript.StyleJS)) + l)
					}
				}
				require.True(t, strings.HasPrefix(got, numbered.String()), "%s:%d: the Read result numbers the file's lines", name, i+1)
				assert.Contains(t, got[numbered.Len():], "<system-reminder>")
				outputs[plain]++
				reads++
			case e.Result.Stdout != nil:
				assert.Equal(t, *e.Result.Stdout, got, "%s:%d", name, i+1)
				if len(got) >= 4096 {
					outputs[got]++
					commands++
				}
			}
		}
	}
	assert.Positive(t, reads)
	assert.Positive(t, commands)
	assert.LessOrEqual(t, len(outputs), smallProject.Distinct)
	assert.Greater(t, reads+commands, 3*len(outputs), "many results per distinct output")
	assert.Greater(t, st.Repeated, st.Results/2)
}

func TestProjectMigrates(t *testing.T) {
	t.Parallel()
	dir, _ := generateProject(t, smallProject)
	src := filepath.Join(dir, "sessions")
	work := t.TempDir()
	out, restored := filepath.Join(work, "migrated"), filepath.Join(work, "restored")
	inputs, err := sess.Collect([]string{src})
	require.NoError(t, err)
	sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Out: out, Jobs: 2})
	require.Len(t, sum.Results, len(inputs))
	migrated := 0
	for _, r := range sum.Results {
		require.Contains(t, []migrate.Status{migrate.StatusMigrated, migrate.StatusUnchanged}, r.Status, "%s: %v", r.Path, r.Err)
		if r.Status == migrate.StatusMigrated {
			assert.Equal(t, "claude-code", r.Format, r.Path)
			migrated++
		}
	}
	assert.Greater(t, migrated, len(inputs)/2)
	inputs, err = sess.Collect([]string{out})
	require.NoError(t, err)
	rs := migrate.Rehydrate(context.Background(), inputs, migrate.RehydrateOptions{OpenStore: local.Open, Out: restored, Jobs: 2})
	require.Zero(t, rs.Failed, "%+v", rs.Results)
	assert.Equal(t, readTree(t, src), readTree(t, restored))
}

func TestProjectStamp(t *testing.T) {
	seen := map[string]bool{ProjectStamp(smallProject): true}
	for _, change := range []func(*Project){
		func(p *Project) { p.Seed++ }, func(p *Project) { p.Sessions++ }, func(p *Project) { p.Calls++ },
		func(p *Project) { p.Distinct++ }, func(p *Project) { p.PayloadSize++ }, func(p *Project) { p.Subagents = !p.Subagents },
	} {
		p := smallProject
		change(&p)
		s := ProjectStamp(p)
		assert.False(t, seen[s], "stamp %q repeats", s)
		seen[s] = true
	}
}

func TestProjectValidate(t *testing.T) {
	for _, p := range []Project{{Sessions: 0, Calls: 1, Distinct: 4, PayloadSize: 1000}, {Sessions: 1, Calls: 0, Distinct: 4, PayloadSize: 1000},
		{Sessions: 1, Calls: 1, Distinct: 3, PayloadSize: 1000}, {Sessions: 1, Calls: 1, Distinct: 4, PayloadSize: 10}} {
		_, err := GenerateProject(filepath.Join(t.TempDir(), "p"), p)
		assert.Error(t, err, "%+v", p)
	}
}

func TestLog2Fix(t *testing.T) {
	for _, n := range []int{300, 1024, 6000, 16000, 250_000} {
		v := (fix + log2Fix(n)%fix) << (log2Fix(n) / fix) / fix
		assert.InDelta(t, n, v, 1, "n=%d", n)
	}
}
