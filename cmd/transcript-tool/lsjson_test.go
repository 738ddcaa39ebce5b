package main

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// TestAppendJSONString checks appendJSONString against encoding/json on
// the strings that escape differently and on random bytes, valid UTF-8
// or not.
func TestAppendJSONString(t *testing.T) {
	cases := []string{"", "plain", `"quoted" \back\slash`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<a href='x'>&amp;</a>",
		"line\u2028sep\u2029", "é 日本 🎉", "\xff\xfe bad", "trunc\xe6\x97", "\xed\xa0\x80 surrogate", "\U0010ffff"}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', '"', '\\', '\n', 0, 0x1f, '<', '&', 0x7f, 'é', 0x2028, 0x2029, 0xfffd, 0x1f389}
	for range 5000 {
		b := make([]byte, 0, 32)
		for range r.IntN(24) {
			if r.IntN(4) == 0 {
				b = append(b, byte(r.IntN(256))) // any byte, UTF-8 or not
			} else {
				b = append(b, string(alphabet[r.IntN(len(alphabet))])...)
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
}

// TestAppendRowJSON checks that a row is written as json.MarshalIndent
// writes it, its object's path included.
func TestAppendRowJSON(t *testing.T) {
	st := registry.New(local.New("/store"))
	paths := newObjectPaths(st)
	row := lsRow{ID: "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9", Size: -12, Media: "text/plain; charset=utf-8",
		Tool: "bash", Session: "s<1>", Source: "/home/u/s\u2028.jsonl", Entry: "e&1", Site: "/message/content", CreatedAt: "2026-11-21T10:08:00Z",
		Refs: 3, Summary: "$ ls \"-la\" \x01 é"}
	other := row
	other.ID = "5f" + strings.Repeat("0", 62) // same shard: its folder made once
	for _, r := range []lsRow{row, {ID: "not a digest"}, other, {ID: strings.ToUpper(row.ID)}} {
		want := r
		if d, err := storepkg.ParseDigest(r.ID); err == nil {
			want.Path = st.Path(d)
			require.Equal(t, "/store/objects/5f/"+r.ID, want.Path)
		} else {
			require.Empty(t, want.Path)
		}
		b, err := json.MarshalIndent(want, "  ", "  ")
		require.NoError(t, err)
		assert.Equal(t, string(b), string(appendRowJSON(nil, r, paths)))
	}
}
