package registry

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// decoder decodes registry lines into Records. Lines as this package
// writes them (sonic's compact output of a Record, with its places in
// Refs or not) take a fast path that allocates little: one string for
// the fields unique to a record (hash, tool call id, entry, summary, and
// those of its places), the Refs, and the values that repeat from record
// to record (media type, site, tool, session, source, creation time)
// shared through a table of those seen. Anything else — white space,
// another key, a key in another case, a null, an empty array of places,
// a number that is not a plain integer, a string with an escape other
// than the simple ones or with bytes that are not valid UTF-8 — goes to
// sonic, so that what a line decodes to never depends on the path it
// took.
//
// A decoder is one reader's: it is not safe for concurrent use.
type decoder struct {
	shared map[string]string
	// own is the scratch of the unique fields of the line being decoded:
	// their bytes, and where each one starts and ends in them.
	own  []byte
	ends [4][2]int
	// last holds each shared field's last value: records in a row mostly
	// share them, and a comparison is cheaper than a lookup.
	last [nShared]string
	// refs and refOwn are the scratch of the line's places: the places,
	// and where each unique field of one is in own.
	refs   []Ref
	refOwn []refField
}

// The shared fields, by their index in decoder.last: a record's, then
// those of its places.
const (
	sMedia = iota
	sSite
	sTool
	sSession
	sSource
	sCreatedAt
	sRefSite
	sRefTool
	nShared
)

// refField is where the text of a unique field of a place is in
// decoder.own: the place, the field (uToolCallID, uEntry or uSummary),
// and its start and end.
type refField struct {
	ref, field, start, end int
}

// maxShared bounds the table of shared values: a registry with more
// distinct values than that (summaries are not shared, so this takes an
// unusual registry) decodes them as fresh strings.
const maxShared = 1 << 16

// decode decodes line, a whole registry line with its newline, into r.
// Its error is that of the JSON decoder; a line that decodes to a record
// without a hash is the caller's to refuse.
func (d *decoder) decode(line []byte, r *Record) error {
	*r = Record{}
	if d.fast(line, r) {
		return nil
	}
	*r = Record{}
	return api.Unmarshal(line, r)
}

// unique fields, in d.ends.
const (
	uHash = iota
	uToolCallID
	uEntry
	uSummary
)

// fast decodes line into r if it takes the fast path, and reports
// whether it did.
func (d *decoder) fast(line []byte, r *Record) bool {
	n := len(line)
	if n < 3 || line[0] != '{' || line[n-1] != '\n' || line[n-2] != '}' {
		return false
	}
	body := line[1 : n-2]
	d.own, d.refs, d.refOwn = d.own[:0], d.refs[:0], d.refOwn[:0]
	d.ends = [4][2]int{}
	var set [4]bool
	refs := false
	for i := 0; i < len(body); {
		if i > 0 {
			if body[i] != ',' {
				return false
			}
			i++
		}
		key, k, ok := plainString(body, i)
		if !ok || k >= len(body) || body[k] != ':' {
			return false
		}
		i = k + 1
		switch string(key) {
		case "size", "line":
			v, k, ok := plainInt(body, i)
			if !ok {
				return false
			}
			if key[0] == 's' {
				r.Size = v
			} else if v != int64(int(v)) {
				return false
			} else {
				r.Line = int(v)
			}
			i = k
			continue
		}
		u, f := unique(string(key)), 0
		var dst *string
		switch string(key) {
		case "toolCallId", "entry", "summary":
		case "hash":
			u = uHash
		case "media":
			f, dst = sMedia, &r.Media
		case "site":
			f, dst = sSite, &r.Site
		case "tool":
			f, dst = sTool, &r.Tool
		case "session":
			f, dst = sSession, &r.Session
		case "source":
			f, dst = sSource, &r.Source
		case "createdAt":
			f, dst = sCreatedAt, &r.CreatedAt
		case "refs":
			if refs {
				return false // sonic's: the last array, whole
			}
			k, ok := d.places(body, i)
			if !ok {
				return false
			}
			i, refs = k, true
			continue
		default:
			return false // a key sonic matches in another case
		}
		start := len(d.own)
		var k2 int
		d.own, k2, ok = appendString(d.own, body, i)
		if !ok {
			return false
		}
		i = k2
		if u >= 0 {
			d.ends[u], set[u] = [2]int{start, len(d.own)}, true
			continue
		}
		*dst = d.share(f, d.own[start:])
		d.own = d.own[:start]
	}
	if refs {
		r.Refs = append([]Ref(nil), d.refs...)
	}
	if len(d.own) > 0 {
		own := string(d.own)
		for u, dst := range [4]*string{&r.Hash, &r.ToolCallID, &r.Entry, &r.Summary} {
			if set[u] {
				*dst = own[d.ends[u][0]:d.ends[u][1]]
			}
		}
		for _, f := range d.refOwn {
			p := &r.Refs[f.ref]
			*[4]*string{uToolCallID: &p.ToolCallID, uEntry: &p.Entry, uSummary: &p.Summary}[f.field] = own[f.start:f.end]
		}
	}
	return true
}

// unique returns the index in decoder.ends of key, a field unique to a
// record or a place (tool call id, entry, summary), or -1.
func unique(key string) int {
	switch key {
	case "toolCallId":
		return uToolCallID
	case "entry":
		return uEntry
	case "summary":
		return uSummary
	}
	return -1
}

// places decodes the array of places (Refs) at b[i:] into d.refs, the
// text of their unique fields appended to d.own, and returns the index
// past it, if it takes the fast path.
func (d *decoder) places(b []byte, i int) (int, bool) {
	if i+1 >= len(b) || b[i] != '[' || b[i+1] == ']' {
		return 0, false // not an array, or an empty one (sonic's: not nil)
	}
	for i++; ; i++ { // past the bracket, then past each comma
		var ok bool
		d.refs = append(d.refs, Ref{})
		if i, ok = d.place(b, i, len(d.refs)-1); !ok || i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ']':
			return i + 1, true
		case ',':
		default:
			return 0, false
		}
	}
}

// place decodes the place at b[i:], an object, into d.refs[ref] and
// returns the index past it, if it takes the fast path.
func (d *decoder) place(b []byte, i, ref int) (int, bool) {
	if i+1 >= len(b) || b[i] != '{' {
		return 0, false
	}
	if i++; b[i] == '}' {
		return i + 1, true
	}
	for {
		key, k, ok := plainString(b, i)
		if !ok || k >= len(b) || b[k] != ':' {
			return 0, false
		}
		i = k + 1
		switch key := string(key); key {
		case "line":
			v, k, ok := plainInt(b, i)
			if !ok || v != int64(int(v)) {
				return 0, false
			}
			d.refs[ref].Line, i = int(v), k
		case "toolCallId", "entry", "summary", "site", "tool":
			start := len(d.own)
			if d.own, i, ok = appendString(d.own, b, i); !ok {
				return 0, false
			}
			switch u := unique(key); {
			case u >= 0:
				d.refOwn = append(d.refOwn, refField{ref: ref, field: u, start: start, end: len(d.own)})
			case key == "site":
				d.refs[ref].Site = d.share(sRefSite, d.own[start:])
				d.own = d.own[:start]
			default:
				d.refs[ref].Tool = d.share(sRefTool, d.own[start:])
				d.own = d.own[:start]
			}
		default:
			return 0, false
		}
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '}':
			return i + 1, true
		case ',':
			i++
		default:
			return 0, false
		}
	}
}

// share returns b, the value of shared field f, as a string: the one it
// returned before for the same bytes when it has one.
func (d *decoder) share(f int, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if string(b) == d.last[f] {
		return d.last[f]
	}
	if s, ok := d.shared[unsafe.String(unsafe.SliceData(b), len(b))]; ok {
		d.last[f] = s
		return s
	}
	s := string(b)
	if d.shared == nil {
		d.shared = map[string]string{}
	}
	if len(d.shared) < maxShared {
		d.shared[s] = s
	}
	d.last[f] = s
	return s
}

// plainString returns the bytes of the JSON string at b[i:] when it has
// no escape and is printable ASCII, as keys are, and the index past it.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < ' ' || c == '\\' || c >= utf8.RuneSelf:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// appendString appends the text of the JSON string at b[i:] to dst and
// returns the index past it, for strings whose decoding is the same
// whatever the decoder: valid UTF-8, no control character, and no
// escape but those transcript.Unescape reads to a character (not an
// unpaired surrogate).
func appendString(dst, b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return dst, 0, false
	}
	j := i + 1
	for j < len(b) {
		// The run of bytes that need no decoding.
		k := j + plainRun(b[j:])
		dst = append(dst, b[j:k]...)
		j = k
		if j >= len(b) {
			return dst, 0, false
		}
		c := b[j]
		switch {
		case c == '"':
			return dst, j + 1, true
		case c < ' ':
			return dst, 0, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return dst, 0, false
			}
			dst = append(dst, b[j:j+size]...)
			j += size
			continue
		}
		// An escape, read as every decoder of the tool reads one.
		r, n := transcript.Unescape(b[j:])
		if n == 0 || utf16.IsSurrogate(r) { // an unpaired surrogate is sonic's business
			return dst, 0, false
		}
		dst = utf8.AppendRune(dst, r)
		j += n
	}
	return dst, 0, false
}

// plain reports whether c needs no decoding in a JSON string: printable
// ASCII but the quote and the backslash.
func plain(c byte) bool { return c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf }

// plainRun returns the length of the run of plain bytes that b starts
// with, looking at eight at a time: a registry line is mostly such runs.
func plainRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, bs := w^('"'*ones), w^('\\'*ones)
		// The high bit of each byte that is a control character, a
		// quote, a backslash or not ASCII; a borrow may set it in bytes
		// above one that is, never below, so the lowest is exact.
		m := ((w-' '*ones)&^w | (q-ones)&^q | (bs-ones)&^bs | w) & highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && plain(b[i]) {
		i++
	}
	return i
}

// plainInt returns the JSON integer at b[i:] when it is plain (an
// optional minus, no leading zero, no fraction or exponent, at most 18
// digits, then the end, a comma or a closing brace) and the index past
// it.
func plainInt(b []byte, i int) (int64, int, bool) {
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	var v int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && b[start] == '0') {
		return 0, 0, false
	}
	if i < len(b) && b[i] != ',' && b[i] != '}' {
		return 0, 0, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}
