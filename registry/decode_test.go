package registry

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeSeeds are registry lines of every shape: as Append writes them,
// and each way off the fast path.
var decodeSeeds = []string{
	`{"hash":"5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9","size":5000,"media":"text/plain; charset=utf-8","site":"/message/content","tool":"bash","toolCallId":"toolu_1","session":"s0","source":"/p/s0.jsonl","entry":"e0","line":1,"createdAt":"2026-11-21T10:08:54Z","summary":"$ ls -la \u2014 exit 0 (0 lines)"}`,
	`{"hash":"ab","size":1,"media":"image/png","createdAt":"x","refs":[{"site":"/a","entry":"e1","line":2},{"site":"/b","tool":"t2","summary":"s2"}]}`,
	`{"hash":"ab","size":-0,"media":"","createdAt":""}`,
	`{"hash":"ab","size":01,"media":""}`,
	`{"hash":"ab","size":1.5}`,
	`{"hash":"ab","size":1e3}`,
	`{"hash":"ab","size":123456789012345678901234}`,
	`{"hash":"ab","line":-7}`,
	`{"hash":"ab", "size":1}`,
	`{"Hash":"ab","SIZE":2}`,
	`{"hash":"ab","hash":"cd"}`,
	`{"hash":null,"tool":null}`,
	`{"hash":"ab","extra":{"x":1}}`,
	`{"hash":"a\"b\\c\/d\b\f\n\r\t\u00e9\u0000\uABCD"}`,
	`{"hash":"\ud83d\ude00 and \ud800 alone"}`,
	`{"hash":"a pair \ud83d\uDE00 only"}`,
	`{"hash":"\udc00\ud83d reversed"}`,
	"{\"hash\":\"caf\xc3\xa9 \xff\xfe bad\"}",
	"{\"hash\":\"tab\there\"}",
	`{"hash":"ab","summary":"x\q"}`,
	`{"hash":"ab","summary":"\u12"}`,
	`{"hash":"ab"}x`,
	`{"hash":"ab",}`,
	`{}`,
	`{"compacts":[{"file":"registry.jsonl","size":10,"sha256":"00"}]}`,
	`not json`,
	`[1,2]`,
	`{"hash":"ab","size":"12"}`,
	`{"hash":"ab","line":9223372036854775807}`,
	// Places (refs), as Append writes them and each way off the fast path.
	`{"hash":"ab","size":2,"media":"text/plain","tool":"Bash","session":"s","source":"/t.jsonl","createdAt":"2026","summary":"x","refs":[{"site":"/message/content/0/content","entry":"e1","line":3,"toolCallId":"toolu_1"},{"site":"/toolUseResult/stdout","entry":"e1","line":3,"toolCallId":"toolu_1","tool":"read","summary":"caf\u00e9 \"q\""}]}`,
	`{"hash":"ab","refs":[{}]}`,
	`{"hash":"ab","refs":[{},{"site":"/a"}]}`,
	`{"hash":"ab","refs":[]}`,
	`{"hash":"ab","refs":null}`,
	`{"hash":"ab","refs":[{"site":"/a","site":"/b","entry":"e1","entry":"e2"}]}`,
	`{"hash":"ab","refs":[{"site":"/a"}],"refs":[{"site":"/b"}]}`,
	`{"hash":"ab","refs":[{"Site":"/a"}]}`,
	`{"hash":"ab","refs":[{"site":"/a","other":1}]}`,
	`{"hash":"ab","refs":[{"line":1.5}]}`,
	`{"hash":"ab","refs":[{"line":-2}]}`,
	`{"hash":"ab","refs":[{"line":2}],"size":3}`,
	`{"hash":"ab","refs":[{"site":"/a"} ]}`,
	`{"hash":"ab","refs":[{"site":"/a"},]}`,
	`{"hash":"ab","refs":[{"site":"/a"}`,
	`{"hash":"ab","refs":[{"site":"/a"},`,
	`{"hash":"ab","refs":[{"site":"/a",}]}`,
	`{"hash":"ab","refs":[{"site":null}]}`,
	`{"hash":"ab","refs":[1]}`,
	`{"hash":"ab","refs":{"site":"/a"}}`,
	`{"hash":"ab","refs":[{"summary":"\ud800 alone"}]}`,
	"{\"hash\":\"ab\",\"refs\":[{\"entry\":\"\xff\"}]}",
	`{"hash":"ab","size":1}}`,
}

// TestDecodeAsSonic checks that the decoder gives what sonic gives, fast
// path or not.
func TestDecodeAsSonic(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s+"\n"))
	}
}

// TestDecodeFast checks that lines as Append writes them take the fast
// path: the point of the decoder.
func TestDecodeFast(t *testing.T) {
	var d decoder
	b, err := api.Marshal(Record{Hash: "ab", Size: 3, Media: "text/plain", Site: "/x", Tool: "bash", ToolCallID: "c",
		Session: "s", Source: "/t.jsonl", Entry: "e", Line: 4, CreatedAt: "2026", Summary: "é — \u2028 <&> \"q\""})
	require.NoError(t, err)
	var r Record
	assert.True(t, d.fast(append(b, '\n'), &r), "%s", b)
	checkDecode(t, append(b, '\n'))
	// A record of several places, as group writes it.
	b, err = api.Marshal(Record{Hash: "ab", Size: 3, Media: "text/plain", Tool: "Bash", Session: "s", Source: "/t.jsonl",
		CreatedAt: "2026", Summary: "s", Refs: []Ref{{Site: "/a", Entry: "e", Line: 4, ToolCallID: "c"},
			{Site: "/b", Entry: "e", Line: 4, ToolCallID: "c", Tool: "Read", Summary: "é <&>"}}})
	require.NoError(t, err)
	r = Record{}
	assert.True(t, d.fast(append(b, '\n'), &r), "%s", b)
	checkDecode(t, append(b, '\n'))
}

func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var want Record
	werr := api.Unmarshal(line, &want)
	var d decoder
	var got Record
	gerr := d.decode(line, &got)
	if werr != nil {
		assert.Error(t, gerr, "%q", line)
		return
	}
	require.NoError(t, gerr, "%q", line)
	assert.Equal(t, want, got, "%q", line)
	// Decoded again, through the table of shared values.
	var again Record
	require.NoError(t, d.decode(line, &again))
	assert.Equal(t, want, again, "%q", line)
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s + "\n"))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecode(t, line)
	})
}

// TestPlainRun checks the run of plain bytes found eight at a time
// against a byte at a time, around every byte that ends one.
func TestPlainRun(t *testing.T) {
	for _, c := range []byte{0, 0x1f, ' ', '"', '\\', 0x7f, 0x80, 0xc3, 0xff} {
		for n := range 20 {
			for at := 0; at <= n; at++ {
				b := bytes.Repeat([]byte("a~ !#[]"), 3)[:n]
				if at < n {
					b[at] = c
				}
				want := 0
				for want < len(b) && plain(b[want]) {
					want++
				}
				assert.Equal(t, want, plainRun(b), "%q", b)
			}
		}
	}
}

// BenchmarkDecode decodes a record of one place and one of two, as
// Append writes them.
func BenchmarkDecode(b *testing.B) {
	one, err := api.Marshal(Record{Hash: reggenHash, Size: 31890, Media: "text/plain; charset=utf-8", Site: "/message/content/0/content",
		Tool: "Read", ToolCallID: "toolu_01QEwppgdyuNXExS2sguP6h1", Session: "74189da9-2788-4059-ba9d-74c4e8cff094",
		Source: "/home/u/.claude/projects/p/74189da9-2788-4059-ba9d-74c4e8cff094.jsonl", Entry: "e63cc337-2a7f-40f1-9b70-e257f112c6de",
		Line: 11, CreatedAt: "2026-11-27T09:01:51Z", Summary: "read /src/docs/specs/module-alpha.md (747 lines): # Module Alpha"})
	require.NoError(b, err)
	r := Record{Hash: reggenHash, Size: 4425, Media: "text/plain; charset=utf-8", Tool: "Bash", Session: "74189da9-2788-4059-ba9d-74c4e8cff094",
		Source: "/home/u/.claude/projects/p/74189da9-2788-4059-ba9d-74c4e8cff094.jsonl", CreatedAt: "2026-11-27T09:01:51Z",
		Summary: "$ npm run build 2>&1 | tail -50 (95 lines)", Refs: []Ref{
			{Site: "/message/content/0/content", Entry: "e63cc337-2a7f-40f1-9b70-e257f112c6de", Line: 12, ToolCallID: "toolu_01QEwppgdyuNXExS2sguP6h2"},
			{Site: "/toolUseResult/stdout", Entry: "e63cc337-2a7f-40f1-9b70-e257f112c6de", Line: 12, ToolCallID: "toolu_01QEwppgdyuNXExS2sguP6h2"}}}
	two, err := api.Marshal(r)
	require.NoError(b, err)
	for _, c := range []struct {
		name string
		line []byte
	}{{"one-place", append(one, '\n')}, {"two-places", append(two, '\n')}} {
		b.Run(c.name, func(b *testing.B) {
			var d decoder
			b.SetBytes(int64(len(c.line)))
			for b.Loop() {
				var r Record
				if err := d.decode(c.line, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const reggenHash = "5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9"
