package externalizer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/summary"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// collide makes every key of a Payloads hash alike, so that only the
// comparison of bytes and flags tells entries apart.
func collide(maphash.Seed, payloadKey) uint64 { return 42 }

// rewriteEach rewrites lines with one Externalizer of format f sharing
// payloads (nil: none), as one file of a run, and returns the rewritten
// lines and how many artifacts were put without their bytes: those whose
// payload the cache served.
func rewriteEach(t testing.TB, f Format, lines []string, payloads *Payloads, put func(Artifact) error) ([]string, int) {
	t.Helper()
	out, served, err := rewriteLines(f, lines, payloads, put)
	require.NoError(t, err)
	return out, served
}

// rewriteLines is rewriteEach for a goroutine other than the test's.
func rewriteLines(f Format, lines []string, payloads *Payloads, put func(Artifact) error) ([]string, int, error) {
	served := 0
	x := &Externalizer{Format: f, Threshold: 4096, PathFor: testPath, Summaries: &summary.Cache{}, Payloads: payloads,
		Put: func(a Artifact) error {
			if a.Data == nil {
				served++
			}
			return put(a)
		}}
	var out []string
	for i, line := range lines {
		res, err := x.Rewrite([]byte(line), 0)
		if err != nil {
			return nil, 0, fmt.Errorf("line %d: %w", i, err)
		}
		got := line
		if res.Line != nil {
			got = string(res.Line)
		}
		out = append(out, got)
	}
	return out, served, nil
}

// restores checks that every migrated line restores to its original from
// store.
func restores(t testing.TB, orig, migrated []string, store memStore) {
	t.Helper()
	for i := range orig {
		back, _, err := Restore([]byte(migrated[i]), 0, store.open)
		require.NoError(t, err, "line %d", i)
		if back == nil {
			back = []byte(migrated[i])
		}
		require.Equal(t, orig[i], string(back), "line %d", i)
	}
}

// TestPayloadsServeNoWrongArtifact: lines whose payloads are alike but
// not equal (one byte apart at the same length, one text in two JSON
// spellings, the same base64 as an image and as text) are rewritten
// through one shared Payloads exactly as without it, artifacts and forms
// included, also when every key hashes alike; a payload met again is
// served from the cache; everything restores.
func TestPayloadsServeNoWrongArtifact(t *testing.T) {
	base := strings.Repeat("package main // é line of a file read again and again\n", 100)
	twin := base[:len(base)-2] + "?\n" // same length, same prefix
	escaped := strings.ReplaceAll(jsonString(t, base), "é", `\u00e9`)
	slashed := strings.ReplaceAll(jsonString(t, base), "/", `\/`)
	b64 := jsonString(t, base64.StdEncoding.EncodeToString(pngBytes))
	image := `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":` + b64 + `}}]`
	lines := []string{
		string(claudeLine(jsonString(t, base), `{"stdout":`+jsonString(t, base)+`,"stderr":""}`)),
		string(claudeLine(jsonString(t, twin), `{"stdout":`+jsonString(t, twin)+`,"stderr":""}`)),
		string(claudeLine(escaped, `{"stdout":`+escaped+`,"stderr":""}`)),
		string(claudeLine(slashed, `{"stdout":`+slashed+`,"stderr":""}`)),
		string(claudeLine(image, `{"type":"image","file":{"base64":`+b64+`,"type":"image/png"}}`)),
		string(claudeLine(b64, `{"stdout":`+b64+`,"stderr":""}`)), // the same bytes as text
		string(claudeLine(jsonString(t, base), `{"stdout":`+jsonString(t, twin)+`,"stderr":""}`)),
	}
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	plain := memStore{}
	want, served := rewriteEach(t, claudeCodeFormat, lines, nil, plain.put)
	require.Zero(t, served)
	restores(t, lines, want, plain)

	for _, tt := range []struct {
		name string
		hash func(maphash.Seed, payloadKey) uint64
	}{
		{"maphash", nil},
		{"every key hashes alike", collide},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Payloads{hash: tt.hash}
			store := memStore{}
			got, served := rewriteEach(t, claudeCodeFormat, lines, c, store.put)
			for i := range lines {
				assert.Equal(t, want[i], got[i], "line %d differs from its rewrite without a cache", i)
			}
			assert.Equal(t, plain, store, "other artifacts than without a cache")
			restores(t, lines, got, store)
			// Met again: the second copy on each line (the image block's
			// data and toolUseResult.file.base64 alike), and both copies
			// on the last, met on the first two lines.
			assert.Equal(t, len(lines)-1+2, served, "payloads served from the cache")
			again, served := rewriteEach(t, claudeCodeFormat, lines, c, store.put)
			assert.Equal(t, want, again)
			assert.Equal(t, 2*len(lines), served, "every payload met again")
		})
	}
}

// TestPayloadsAcrossFilesAndWorkers: Externalizers of several files,
// rewritten at once as migrate's workers do, share one Payloads; each
// file comes out as it does alone, its artifacts restore it, and a
// store that lacks an artifact the cache knows gets its bytes (the
// second store of a run).
func TestPayloadsAcrossFilesAndWorkers(t *testing.T) {
	var texts []string
	for i := range 8 {
		texts = append(texts, strings.Repeat(fmt.Sprintf("line %d of output %d\n", i, i), 300))
	}
	file := func(k int) []string {
		var lines []string
		for i := range 16 {
			text := jsonString(t, texts[(i*k+i)%len(texts)])
			lines = append(lines, strings.TrimSuffix(string(claudeLine(text, `{"stdout":`+text+`}`)), "\n"))
		}
		return lines
	}
	const files = 6
	var (
		c      Payloads
		wg     sync.WaitGroup
		inputs [files][]string
		got    [files][]string
		stores [files]memStore
		errs   [files]error
	)
	for k := range files {
		inputs[k], stores[k] = file(k), memStore{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each file its own store, as files of different session
			// roots have: the cache must not stand in for the store.
			got[k], _, errs[k] = rewriteLines(claudeCodeFormat, inputs[k], &c, stores[k].put)
		}()
	}
	wg.Wait()
	for k := range files {
		require.NoError(t, errs[k], "file %d", k)
		alone := memStore{}
		want, _ := rewriteEach(t, claudeCodeFormat, inputs[k], nil, alone.put)
		assert.Equal(t, want, got[k], "file %d", k)
		assert.Equal(t, alone, stores[k], "file %d", k)
		restores(t, inputs[k], got[k], stores[k])
	}
}

// TestPayloadsBudget: a Payloads holds at most its budget, keeps no
// payload over a quarter of it, and evicts first what was not met again.
func TestPayloadsBudget(t *testing.T) {
	const budget = 64 << 10
	c := &Payloads{Budget: budget}
	holeOf := func(s string) hole {
		raw := []byte(jsonString(t, s))
		v, err := transcript.Parse(raw, 0)
		require.NoError(t, err)
		return hole{v: v}
	}
	add := func(h hole) {
		e, sum := c.find(h)
		if e == nil {
			p := encodePiece(nil, h)
			c.add(h, sum, store.Sum(p.data), p)
		}
	}
	hot := holeOf(strings.Repeat("a file read in every session\n", 100))
	add(hot)
	for i := range 200 {
		add(holeOf(strings.Repeat(fmt.Sprintf("output %d\n", i), 400)))
		e, _ := c.find(hot)
		require.NotNil(t, e, "the payload met every time was evicted after %d others", i)
		assert.LessOrEqual(t, c.used, budget)
	}
	held := 0
	for _, e := range c.clock {
		held += e.cost()
	}
	assert.Equal(t, c.used, held)
	assert.Less(t, len(c.clock), 40, "entries held")

	big := holeOf(strings.Repeat("x", budget/4))
	add(big)
	e, _ := c.find(big)
	assert.Nil(t, e, "a payload of a quarter of the budget is kept")
	assert.LessOrEqual(t, c.used, budget)

	var none *Payloads
	e, _ = none.find(hot)
	assert.Nil(t, e)
	none.add(hot, 0, store.Digest{}, piece{})
}

// BenchmarkRewriteMetAgain rewrites Claude Code lines whose payloads
// (16 KB, each twice on its line) were met before in the run, with and
// without a Payloads: what a real project folder's repeated file reads
// cost.
func BenchmarkRewriteMetAgain(b *testing.B) {
	text := jsonString(b, strings.Repeat("     1\tfunc (s *Store) Put(data []byte) (Digest, error) { // é\n", 260))
	line := claudeLine(text, `{"stdout":`+text+`,"stderr":""}`)
	line = line[:len(line)-1]
	for _, tt := range []struct {
		name     string
		payloads *Payloads
	}{{"uncached", nil}, {"cached", &Payloads{}}} {
		b.Run(tt.name, func(b *testing.B) {
			x := &Externalizer{Format: claudeCodeFormat, Threshold: 4096, PathFor: testPath, Summaries: &summary.Cache{}, Payloads: tt.payloads,
				Put: func(Artifact) error { return nil }}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Rewrite(line, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPayloadsKeyCoversHole: a key tells apart holes of the same bytes
// that encodePiece reads differently, and only those.
func TestPayloadsKeyCoversHole(t *testing.T) {
	raw := []byte(`"abc"`)
	v, err := transcript.Parse(raw, 0)
	require.NoError(t, err)
	k := keyOf(hole{v: v})
	for _, other := range []hole{{v: v, body: true}, {v: v, bare: true}, {v: v, image: true}, {v: v, mime: "image/png"}} {
		assert.False(t, k.equal(keyOf(other)), "%+v", other)
	}
	assert.True(t, k.equal(keyOf(hole{v: transcript.Value{Buf: bytes.Clone(raw), Start: 0, End: len(raw)}})))
}
