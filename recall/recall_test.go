package recall

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// fixture is a session of each kind of artifact: text, JSON, an image,
// one missing from the store and one corrupt.
type fixture struct {
	store                             *registry.Store
	session                           *Session
	text, json, img, missing, corrupt storepkg.Digest
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	store := registry.New(local.New(filepath.Join(t.TempDir(), "artifacts")))
	var f fixture
	f.store = store
	f.text = putObject(t, store, []byte("go test ./...\n--- FAIL: TestX (0.00s)\nok\n"))
	f.json = putObject(t, store, []byte(`{"output":"total 8\n","metadata":{"exit_code":0}}`))
	var pngBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, image.NewGray(image.Rect(0, 0, 3, 2))))
	f.img = putObject(t, store, pngBuf.Bytes())
	f.missing = storepkg.Sum([]byte("never stored"))
	f.corrupt = putObject(t, store, []byte("original bytes"))
	require.NoError(t, os.WriteFile(store.Path(f.corrupt), []byte("tampered bytes"), 0o600))

	source := "/sessions/s.jsonl"
	writeRegistry(t, store, []registry.Record{
		{Hash: f.text.String(), Size: 40, Media: externalizer.MediaText, Tool: "from-elsewhere", Source: "/other.jsonl", CreatedAt: "t", Summary: "said elsewhere"},
		{Hash: f.text.String(), Size: 40, Media: externalizer.MediaText, Tool: "bash", Source: source, CreatedAt: "t",
			Summary: `$ go test ./... — exit 1: "--- FAIL: TestX (0.00s)" (3 lines)`},
		{Hash: f.json.String(), Size: 51, Media: externalizer.MediaText, ToolCallID: "call_9", Source: source, Entry: "e9", CreatedAt: "t"},
		{Hash: f.img.String(), Size: 75, Source: source, Entry: "e9", CreatedAt: "t"},
		{Hash: f.missing.String(), Size: 1234, Media: externalizer.MediaText, Tool: "read", Source: source, CreatedAt: "t"},
	})
	l := lines{format: "pi"}
	l.header("sess-1")
	l.user("fix the test", 3)
	l.call("bash", "call_1")
	l.result("call_1", f.text)
	l.call("view", "call_9")
	l.result("call_9", f.json, f.img)
	l.result("call_2", f.missing)
	l.result("call_3", f.corrupt)
	s, err := Scan(strings.NewReader(l.b.String()), "pi", nil)
	require.NoError(t, err)
	s.ID, s.Source = "sess-1", source
	f.session = s
	return f
}

func TestBuild(t *testing.T) {
	f := newFixture(t)
	sec, err := Build(context.Background(), f.session, f.store, DefaultOptions, func(e *registry.BadLineError) { t.Errorf("bad line %v", e) })
	require.NoError(t, err)
	require.Len(t, sec.Items, 5)
	byID := map[string]Item{}
	for _, it := range sec.Items {
		byID[it.ID] = it
	}
	assert.Equal(t, []string{f.corrupt.String(), f.missing.String(), f.img.String(), f.json.String(), f.text.String()},
		[]string{sec.Items[0].ID, sec.Items[1].ID, sec.Items[2].ID, sec.Items[3].ID, sec.Items[4].ID}, "most recent first")

	text := byID[f.text.String()]
	assert.Equal(t, "bash", text.Tool, "the record of this transcript wins")
	assert.Equal(t, `$ go test ./... — exit 1: "--- FAIL: TestX (0.00s)" (3 lines)`, text.Summary, "the summary migrate recorded for this transcript")
	assert.Equal(t, externalizer.MediaText, text.Media)
	assert.Equal(t, int64(41), text.Size, "the file's size, not the registry's")
	assert.Equal(t, f.store.Path(f.text), text.Path)

	js := byID[f.json.String()]
	assert.Equal(t, "view", js.Tool, "named by the call the record names")
	assert.True(t, strings.HasPrefix(js.Summary, `read (1 line): {"output":"total 8`), "no summary recorded: described from its bytes, as view's: %s", js.Summary)

	img := byID[f.img.String()]
	assert.Equal(t, "view", img.Tool, "the tool of another artifact of its entry")
	assert.Equal(t, "image/png", img.Media, "guessed from the bytes")
	assert.True(t, strings.HasPrefix(img.Summary, "PNG image 3×2, "), img.Summary)

	missing := byID[f.missing.String()]
	assert.Equal(t, "unreadable: not in the store", missing.Summary)
	assert.Equal(t, int64(1234), missing.Size, "the registry's size")
	assert.Equal(t, "read", missing.Tool)

	corrupt := byID[f.corrupt.String()]
	assert.Equal(t, "unreadable: corrupt, its bytes do not match its hash", corrupt.Summary)

	assert.Equal(t, 0, sec.Omitted)
	assert.Equal(t, display.Len(sec.Text), sec.Length)
	assert.Contains(t, sec.Text, "\n- `"+display.ID(f.text.String())+"` bash, 41 B: $ go test ./... — exit 1")
	assert.Contains(t, sec.Narrative, "Session sess-1 (pi): 8 entries, 2025-01-01T00:00:00Z to 2025-01-01T00:00:03Z (3s). Tool calls: bash ×1, view ×1. Artifacts: 5, 1.4 KB.")
	assert.Contains(t, sec.Narrative, `Last user request: "fix the test"`)
	assert.True(t, strings.HasPrefix(sec.Text, title+"\n"+sec.Header[len(title)+1:]+"\n\n"+sec.Narrative+"\n\n"+itemsHeading+"\n"), sec.Text)
	assert.Contains(t, sec.Header, "`transcript-tool cat --store "+f.store.Dir()+" ID`")

	again, err := Build(context.Background(), f.session, f.store, DefaultOptions, nil)
	require.NoError(t, err)
	assert.Equal(t, sec, again, "deterministic")
}

func TestBuildGolden(t *testing.T) {
	t.Chdir(t.TempDir())
	store := registry.New(local.New("artifacts"))
	a := putObject(t, store, []byte("hello\nworld\n"))
	writeRegistry(t, store, []registry.Record{{Hash: a.String(), Size: 12, Media: externalizer.MediaText, ToolCallID: "c1"}})
	l := lines{format: "chat"}
	l.user("say hello", 0)
	l.call("echo", "c1")
	l.result("c1", a)
	s, err := Scan(strings.NewReader(l.b.String()), "chat", nil)
	require.NoError(t, err)
	sec, err := Build(context.Background(), s, store, DefaultOptions, nil)
	require.NoError(t, err)
	want := "## Artifact recall\n" +
		"Large tool outputs of this session are stored as artifacts. Print one with `transcript-tool cat --store artifacts ID`, or part of it with --offset N --limit N (characters of text, bytes otherwise).\n" +
		"\n" +
		"Session (no id) (chat): 3 entries. Tool calls: echo ×1. Artifacts: 1, 12 B. Last user request: \"say hello\"\n" +
		"\n" +
		"Most recent artifacts, newest first:\n" +
		"- `" + a.String()[:12] + "` echo, 12 B: hello (2 lines) — " + store.Path(a) + "\n"
	assert.Equal(t, want, sec.Text)
}

func TestBuildNoArtifacts(t *testing.T) {
	s := scan(t, "chat", `{"role":"user","content":"hi"}`+"\n")
	sec, err := Build(context.Background(), s, registry.New(local.New(filepath.Join(t.TempDir(), "none"))), DefaultOptions, nil)
	require.NoError(t, err)
	assert.Empty(t, sec.Items)
	assert.True(t, strings.HasSuffix(sec.Text, "\n\n"+noArtifacts+"\n"), sec.Text)
}

func TestBuildBadRegistryLines(t *testing.T) {
	f := newFixture(t)
	data, err := os.ReadFile(f.store.RegistryPath())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.store.RegistryPath(), append([]byte("{not json\n"), data...), 0o600))
	var bad []*registry.BadLineError
	sec, err := Build(context.Background(), f.session, f.store, DefaultOptions, func(e *registry.BadLineError) { bad = append(bad, e) })
	require.NoError(t, err)
	require.Len(t, bad, 1)
	assert.Equal(t, 1, bad[0].Line)
	assert.Len(t, sec.Items, 5, "the other records are still read")
}

func TestNarrative(t *testing.T) {
	s := &Session{
		ID: "s\x1b[31m1\n", Format: "pi", Entries: 1,
		First: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Last: time.Date(2025, 1, 1, 1, 2, 3, 0, time.UTC),
		Tools:       []ToolCount{{"read", 3}, {"b\tash", 1}},
		LastRequest: "please\n\tfix   it",
		Refs:        make([]Ref, 2),
	}
	full := Narrative(s, 4200, 600)
	assert.Equal(t, `Session s1 (pi): 1 entry, 2025-01-01T00:00:00Z to 2025-01-01T01:02:03Z (1h2m3s). Tool calls: read ×3, b ash ×1. Artifacts: 2, 4.2 KB. Last user request: "please fix it"`, full)

	s.Last = s.First
	assert.Contains(t, Narrative(s, 0, 600), "1 entry, at 2025-01-01T00:00:00Z. ")

	facts := strings.TrimSuffix(Narrative(s, 0, 600), ` Last user request: "please fix it"`)
	assert.Equal(t, facts, Narrative(s, 0, display.Len(facts)+display.Len(` Last user request: ""`)+minSummary-1), "no room for the request: left out")
	s.LastRequest = strings.Repeat("word ", 100)
	cut := Narrative(s, 0, display.Len(facts)+40)
	assert.Equal(t, display.Len(facts)+40, display.Len(cut))
	assert.True(t, strings.HasSuffix(cut, `…"`), cut)
	assert.Equal(t, display.Cut(facts, 30), Narrative(s, 0, 30), "facts cut")
	assert.Equal(t, "", Narrative(s, 0, 0))
	assert.Equal(t, "", Narrative(s, 0, -5))

	s.Tools = nil
	for i := range 12 {
		s.Tools = append(s.Tools, ToolCount{fmt.Sprint("t", i), 12 - i})
	}
	assert.Contains(t, Narrative(s, 0, 600), "t9 ×3, …. Artifacts")
	s.Tools, s.ID = nil, ""
	assert.Contains(t, Narrative(s, 0, 600), "Session (no id) (pi): 1 entry, at 2025-01-01T00:00:00Z. Tool calls: none. ")
}

func item(i int, summary string) Item {
	id := storepkg.Sum([]byte(fmt.Sprint(i))).String()
	return Item{ID: id, Size: int64(100 * i), Tool: "read", Summary: summary, Path: "artifacts/objects/" + id[:2] + "/" + id}
}

func TestCompose(t *testing.T) {
	header := []string{title, "how to read one"}
	items := []Item{item(1, "first summary"), item(2, "second summary, long enough to be shortened"), item(3, "third summary")}
	get := func(i int) Item { return items[i] }
	lineLen := func(i int) int { return display.Len(itemLine(items[i])) + 1 }
	base := display.Len(title) + 1 + display.Len("how to read one") + 1 + 1 + display.Len(itemsHeading) + 1

	t.Run("all fit", func(t *testing.T) {
		sec := Compose(header, "the narrative", 3, get, Options{MaxItems: 8, MaxChars: 10000, NarrativeMaxChars: 600})
		assert.Equal(t, items, sec.Items)
		assert.Equal(t, 0, sec.Omitted)
		assert.Equal(t, "the narrative", sec.Narrative)
		assert.NotContains(t, sec.Text, "not listed")
	})
	t.Run("max items", func(t *testing.T) {
		sec := Compose(header, "", 3, get, Options{MaxItems: 2, MaxChars: 10000})
		assert.Equal(t, items[:2], sec.Items)
		assert.Equal(t, 1, sec.Omitted)
		assert.True(t, strings.HasSuffix(sec.Text, "\n(1 older artifact not listed)\n"), sec.Text)
		assert.Equal(t, "", sec.Narrative, "a narrative budget of 0")
	})
	t.Run("no items allowed", func(t *testing.T) {
		sec := Compose(header, "", 3, get, Options{MaxItems: 0, MaxChars: 10000})
		assert.Empty(t, sec.Items)
		assert.Equal(t, 3, sec.Omitted)
		assert.True(t, strings.HasSuffix(sec.Text, "how to read one\n\n(3 artifacts not listed)\n"), sec.Text)
		assert.NotContains(t, sec.Text, itemsHeading)
	})
	t.Run("room is kept for the omitted line", func(t *testing.T) {
		max := base + lineLen(0) + lineLen(1) + 4 // the third does not fit, nor does the second whole beside the omitted line
		sec := Compose(header, "", 3, get, Options{MaxItems: 8, MaxChars: max})
		require.Len(t, sec.Items, 2)
		assert.Equal(t, items[0], sec.Items[0])
		assert.Less(t, display.Len(sec.Items[1].Summary), display.Len(items[1].Summary), "the second is shortened")
		assert.True(t, strings.HasSuffix(sec.Items[1].Summary, "…"))
		assert.True(t, strings.HasSuffix(sec.Text, "\n(1 older artifact not listed)\n"), sec.Text)
		assert.LessOrEqual(t, sec.Length, max)
	})
	t.Run("shortened summary", func(t *testing.T) {
		long := []Item{item(1, strings.Repeat("日本語 ", 40))}
		max := base + display.Len(itemLine(Item{ID: long[0].ID, Size: long[0].Size, Tool: "read", Path: long[0].Path})) + 2 + minSummary + 1
		sec := Compose(header, "", 1, func(i int) Item { return long[i] }, Options{MaxItems: 8, MaxChars: max})
		require.Len(t, sec.Items, 1)
		assert.Equal(t, minSummary, display.Len(sec.Items[0].Summary))
		assert.Equal(t, max, sec.Length)
		sec = Compose(header, "", 1, func(i int) Item { return long[i] }, Options{MaxItems: 8, MaxChars: max - 1})
		assert.Empty(t, sec.Items, "less than minSummary characters of summary: left out")
		assert.Equal(t, 1, sec.Omitted)
	})
	t.Run("narrative bounded by its budget and the rest", func(t *testing.T) {
		sec := Compose(header, strings.Repeat("n", 100), 0, get, Options{MaxChars: 10000, NarrativeMaxChars: 10})
		assert.Equal(t, "nnnnnnnnn…", sec.Narrative)
		sec = Compose(header, strings.Repeat("n", 100), 0, get, Options{MaxChars: display.Len(title) + 1 + 16 + 1 + 1 + 6, NarrativeMaxChars: 600})
		assert.Equal(t, "nnnnn…", sec.Narrative)
		assert.NotContains(t, sec.Text, noArtifacts)
	})
	t.Run("header cut", func(t *testing.T) {
		sec := Compose(header, "n", 3, get, Options{MaxItems: 8, MaxChars: 6})
		assert.Equal(t, "## A…\n", sec.Text)
		assert.Equal(t, "## A…", sec.Header)
		assert.Empty(t, sec.Items)
		assert.Equal(t, 3, sec.Omitted)
		assert.Equal(t, "", Compose(header, "n", 3, get, Options{MaxChars: 1}).Text)
		assert.Equal(t, "", Compose(header, "n", 3, get, Options{MaxChars: -1}).Text)
	})
	t.Run("items are asked for lazily", func(t *testing.T) {
		var asked []int
		Compose(header, "", 1000, func(i int) Item { asked = append(asked, i); return item(i, "s") }, Options{MaxItems: 3, MaxChars: 100000})
		assert.Equal(t, []int{0, 1, 2}, asked)
	})
}

// checkSection checks what every section must be.
func checkSection(t *testing.T, sec Section, refs []Ref, opts Options) {
	t.Helper()
	assert.LessOrEqual(t, display.Len(sec.Text), max(opts.MaxChars, 0), "text over budget")
	assert.Equal(t, display.Len(sec.Text), sec.Length)
	assert.LessOrEqual(t, len(sec.Items), max(opts.MaxItems, 0), "too many items")
	assert.LessOrEqual(t, display.Len(sec.Narrative), max(opts.NarrativeMaxChars, 0), "narrative over budget")
	assert.Equal(t, len(refs), len(sec.Items)+sec.Omitted)
	for i, it := range sec.Items {
		assert.Equal(t, refs[i].ID.String(), it.ID, "items are the most recent artifacts, in order")
		assert.Contains(t, sec.Text, itemLine(it)+"\n")
	}
	if sec.Text != "" {
		assert.True(t, strings.HasSuffix(sec.Text, "\n"))
	}
	for _, r := range sec.Text {
		if r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u202e') {
			t.Errorf("control character %U in %q", r, sec.Text)
			break
		}
	}
	if sec.Narrative != "" {
		assert.Contains(t, sec.Text, "\n"+sec.Narrative+"\n")
	}
}

// randomStore makes a store of random artifacts, some missing, some
// corrupt, and a session of a random format referencing them.
func randomStore(t *testing.T, rng *rand.Rand) (*registry.Store, *Session) {
	store := registry.New(local.New(filepath.Join(t.TempDir(), "artifacts")))
	format := formats[rng.IntN(len(formats))]
	l := lines{format: format}
	l.header(randomText(rng, 1))
	var ids []storepkg.Digest
	var recs []registry.Record
	for i := range rng.IntN(25) {
		data, media := randomArtifact(rng)
		var d storepkg.Digest
		switch rng.IntN(10) {
		case 0:
			d = storepkg.Sum(data) // missing
		case 1:
			d = putObject(t, store, data)
			require.NoError(t, os.WriteFile(store.Path(d), append(data, 'x'), 0o600)) // corrupt
		default:
			d = putObject(t, store, data)
		}
		ids = append(ids, d)
		if rng.IntN(4) > 0 {
			recs = append(recs, registry.Record{Hash: d.String(), Size: int64(len(data)), Media: media,
				Tool: randomText(rng, rng.IntN(3)), ToolCallID: fmt.Sprint("c", i), CreatedAt: "t"})
		}
	}
	writeRegistry(t, store, recs)
	for i := range 1 + rng.IntN(30) {
		switch rng.IntN(4) {
		case 0:
			l.user(randomText(rng, rng.IntN(200)), i)
		case 1:
			l.call(randomText(rng, 1+rng.IntN(2)), fmt.Sprint("c", i))
		default:
			if len(ids) > 0 {
				var refs []storepkg.Digest
				for range 1 + rng.IntN(3) {
					refs = append(refs, ids[rng.IntN(len(ids))])
				}
				l.result(fmt.Sprint("c", i), refs...)
			}
		}
	}
	s, err := Scan(strings.NewReader(l.b.String()), format, nil)
	require.NoError(t, err)
	s.ID = randomText(rng, 1+rng.IntN(3))
	return store, s
}

// randomOptions returns budgets around the interesting sizes: from none
// to more than any section needs.
func randomOptions(rng *rand.Rand) Options {
	chars := rng.IntN(3000)
	if rng.IntN(4) == 0 {
		chars = rng.IntN(300)
	}
	return Options{MaxItems: rng.IntN(12) - 1, MaxChars: chars, NarrativeMaxChars: rng.IntN(800) - 10}
}

// TestRecallProperties builds sections of random sessions and stores with
// random budgets: never over any budget, always the most recent
// artifacts, the same bytes twice.
func TestRecallProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 15))
	const stores, perStore = 40, 50 // 2000 cases
	for range stores {
		store, s := randomStore(t, rng)
		for range perStore {
			opts := randomOptions(rng)
			sec, err := Build(context.Background(), s, store, opts, nil)
			require.NoError(t, err)
			checkSection(t, sec, s.Refs, opts)
			again, err := Build(context.Background(), s, store, opts, nil)
			require.NoError(t, err)
			require.Equal(t, sec, again, "not deterministic")
		}
	}
}

// TestComposeProperties runs the budget logic on random items: summaries
// of random lengths (none to hundreds of code points, multi-byte, some
// far longer than a line).
func TestComposeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 26))
	for range 2000 {
		n := rng.IntN(20)
		items := make([]Item, n)
		refs := make([]Ref, n)
		for i := range items {
			items[i] = item(i, display.Line(randomText(rng, rng.IntN(80)), 1+rng.IntN(300)))
			refs[i] = Ref{ID: storepkg.Sum([]byte(fmt.Sprint(i)))}
		}
		header := []string{title, display.Line(randomText(rng, rng.IntN(40)), 500)}
		narr := display.Line(randomText(rng, rng.IntN(200)), 2000)
		opts := randomOptions(rng)
		sec := Compose(header, narr, n, func(i int) Item { return items[i] }, opts)
		checkSection(t, sec, refs, opts)
		assert.Equal(t, sec, Compose(header, narr, n, func(i int) Item { return items[i] }, opts))
	}
}

// FuzzRecall builds the section of any transcript bytes, in any format,
// with any budgets, over a store holding the artifacts the seeds name.
func FuzzRecall(f *testing.F) {
	store := registry.New(local.New(filepath.Join(f.TempDir(), "artifacts")))
	rng := rand.New(rand.NewPCG(1, 1))
	var ids []storepkg.Digest
	var recs []registry.Record
	for i := range 6 {
		data, media := randomArtifact(rng)
		d := putObject(f, store, data)
		ids = append(ids, d)
		recs = append(recs, registry.Record{Hash: d.String(), Size: int64(len(data)), Media: media, Tool: fmt.Sprint("tool", i), CreatedAt: "t"})
	}
	writeRegistry(f, store, recs)
	for i, format := range formats {
		l := lines{format: format}
		l.header("s")
		l.user(randomText(rng, 30), 1)
		l.call("read", "c1")
		l.result("c1", ids[i], ids[i+1])
		l.result("c2", ids[i+2])
		l.add("torn {")
		f.Add([]byte(l.b.String()), uint8(i), 8, 2000, 600)
		f.Add([]byte(l.b.String()), uint8(i), 1, 120, 40)
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8, maxItems, maxChars, narrative int) {
		opts := Options{MaxItems: maxItems % 50, MaxChars: maxChars % 10000, NarrativeMaxChars: narrative % 2000}
		s, err := Scan(bytes.NewReader(data), formats[int(format)%len(formats)], nil)
		require.NoError(t, err)
		sec, err := Build(context.Background(), s, store, opts, nil)
		require.NoError(t, err)
		checkSection(t, sec, s.Refs, opts)
		again, err := Build(context.Background(), s, store, opts, nil)
		require.NoError(t, err)
		assert.Equal(t, sec, again)
	})
}
