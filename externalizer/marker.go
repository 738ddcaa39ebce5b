package externalizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

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
	At string `json:"at"`
	// Dup, when not 0, names instead the Dup-th member before the last of
	// those called as At's last token: a duplicate key (Site.Dup).
	Dup   int      `json:"dup,omitempty"`
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

// HasMarker reports cheaply whether a line may carry a marker: whether it
// holds the marker's quoted key. A false answer is certain.
//
// It looks for the key's capital T, rare in transcripts, where
// bytes.Contains would look for its quote, which JSON is full of: it runs
// on every line a migration reads, and is about three times as fast.
func HasMarker(line []byte) bool {
	k := markerKeyQuoted
	for i := markerRare; i < len(line); i++ {
		j := bytes.IndexByte(line[i:], k[markerRare])
		if j < 0 {
			return false
		}
		i += j
		if from := i - markerRare; from+len(k) <= len(line) && string(line[from:from+len(k)]) == string(k) {
			return true
		}
	}
	return false
}

// HasMarkerIn is HasMarker for a line read from r, in pieces, for a line
// too long to hold.
func HasMarkerIn(r io.Reader) (bool, error) {
	keep := len(markerKeyQuoted) - 1 // what a key cut by a piece's end can have before it
	buf := make([]byte, keep+256<<10)
	n := 0 // bytes of buf in use
	for {
		m, err := io.ReadFull(r, buf[n:])
		n += m
		if HasMarker(buf[:n]) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		n = copy(buf, buf[n-keep:n])
	}
}

// markerRare is the index in markerKeyQuoted of the byte HasMarker looks
// for first.
var markerRare = bytes.IndexByte(markerKeyQuoted, 'T')

// markerAt is where a marker sits in its entry.
type markerAt struct {
	mem transcript.Member
	// prevEnd is the end of the member before the marker, or the offset
	// just past the entry's "{" when there is none.
	prevEnd int
	// end is the end of the entry's last member: the marker's own end,
	// unless the agent that owns the transcript added members after it
	// (pi adds id and parentId to every entry when it upgrades a v1
	// session).
	end int
}

// locate finds the value edit e of the marker at replaced, among the
// entry's members before the marker: those after it were added by
// someone else, even one named like a member the migration edited.
func (at markerAt) locate(root transcript.Value, e edit) (undo, error) {
	return locate(root, e, at.mem.Key.Start)
}

// findMarker returns where the last member of root called MarkerKey is.
// ok is false when root has no such member.
func findMarker(root transcript.Value) (at markerAt, ok bool) {
	at.prevEnd = root.Start + 1
	var lastEnd int
	root.Members(func(mem transcript.Member) bool {
		if mem.Key.IsString(MarkerKey) {
			at.mem, ok, at.prevEnd = mem, true, lastEnd
			if lastEnd == 0 {
				at.prevEnd = root.Start + 1
			}
		}
		lastEnd = mem.Value.End
		return true
	})
	at.end = lastEnd
	return at, ok
}

// errNoMarker is readMarker's answer for an entry without a member called
// MarkerKey.
var errNoMarker = errors.New("no " + MarkerKey + " member")

// errForeignMarker is readMarker's answer for an entry whose last member
// called MarkerKey is not shaped like this tool's marker (not an object
// of v, sha256 and edits, or no SHA-256 in it): the entry's own content,
// which a transcript never migrated may hold. It wraps ErrBadMarker.
var errForeignMarker = fmt.Errorf("%w: not this tool's", ErrBadMarker)

// readMarker decodes the last marker of root and returns it with where it
// is. An entry with no member called MarkerKey gives errNoMarker; one whose
// last such member is not shaped like a marker gives errForeignMarker,
// and one of another version an ErrBadMarker error.
func readMarker(root transcript.Value) (marker, markerAt, error) {
	at, ok := findMarker(root)
	if !ok {
		return marker{}, at, errNoMarker
	}
	var mk marker
	if err := markerAPI.Unmarshal(at.mem.Value.Raw(), &mk); err != nil {
		return marker{}, at, fmt.Errorf("%w: %v", errForeignMarker, err)
	}
	if sum, err := hex.DecodeString(mk.SHA256); err != nil || len(sum) != sha256.Size || mk.V <= 0 {
		return marker{}, at, fmt.Errorf("%w: bad sha256 %q or version %d", errForeignMarker, mk.SHA256, mk.V)
	}
	if mk.V != MarkerVersion {
		return marker{}, at, fmt.Errorf("%w: version %d, this tool reads %d", ErrBadMarker, mk.V, MarkerVersion)
	}
	return mk, at, nil
}
