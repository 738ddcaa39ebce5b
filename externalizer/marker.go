package externalizer

import (
	"bytes"

	"github.com/bytedance/sonic"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// MarkerKey is the member every migrated entry gains last.
const MarkerKey = "transcriptTool"

var markerKeyQuoted = []byte(`"` + MarkerKey + `"`)

// MarkerVersion is the version of the marker format written.
const MarkerVersion = 1

// marker records how to rebuild an entry's original line.
type marker struct {
	V      int    `json:"v"`
	SHA256 string `json:"sha256"`
	Edits  []edit `json:"edits"`
}

// edit is one change to the entry: the value at At was replaced by a
// placeholder and is rebuilt from Parts, or the object at At gained the
// members named in Added, which are its last members.
type edit struct {
	At    string   `json:"at"`
	Parts []part   `json:"parts,omitempty"`
	Added []string `json:"added,omitempty"`
}

// part is literal JSON text or an artifact in a Form.
type part struct {
	Lit  string `json:"lit,omitempty"`
	ID   string `json:"id,omitempty"`
	Form Form   `json:"form,omitempty"`
}

var markerAPI = sonic.Config{EscapeHTML: false, CompactMarshaler: true}.Froze()

// HasMarker reports cheaply whether a line may carry a marker; a false
// answer is certain.
func HasMarker(line []byte) bool { return bytes.Contains(line, markerKeyQuoted) }

// findMarker returns the marker member of root, which must be its last
// member. ok is false when root has no member called MarkerKey.
func findMarker(root transcript.Value) (m transcript.Member, prevEnd int, last bool, ok bool) {
	prevEnd = root.Start + 1
	var lastEnd int
	root.Members(func(mem transcript.Member) bool {
		if mem.Key.IsString(MarkerKey) {
			m, ok, prevEnd = mem, true, lastEnd
			if lastEnd == 0 {
				prevEnd = root.Start + 1
			}
		}
		lastEnd = mem.Value.End
		return true
	})
	last = ok && m.Value.End == lastEnd
	return m, prevEnd, last, ok
}
