package show

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// ref is a value of a migrated entry that a placeholder stands in for, as
// its marker records it.
type ref struct {
	at     string // JSON pointer of the placeholder
	start  int    // offset of the placeholder in the line
	pieces []piece
	shown  bool
}

// piece is one artifact a reference is rebuilt from.
type piece struct {
	digest registry.Digest
	form   string
}

// readRefs returns the references that the marker of a migrated entry
// records: one per edit that replaced a value, in the marker's order. Edits
// that only added members (pi's details.artifactRef) are not references,
// and edits that point at nothing are skipped: Render shows the entry, not
// the marker's faults. An entry without a marker has no references, and
// neither has one whose last member only looks like a marker: of another
// version or without a SHA-256. (A member that looks like a marker in every
// way is taken for one; only restoring the line, as Options.Rehydrate
// does, tells them apart.)
func readRefs(root transcript.Value) []ref {
	if !externalizer.HasMarker(root.Raw()) {
		return nil
	}
	var last transcript.Member
	root.Members(func(m transcript.Member) bool {
		last = m
		return true
	})
	mk := last.Value
	if !last.Key.IsString(externalizer.MarkerKey) || mk.Kind() != transcript.Object {
		return nil
	}
	if v, _ := mk.Get("v"); string(v.Raw()) != strconv.Itoa(externalizer.MarkerVersion) {
		return nil
	}
	if sum, err := hex.DecodeString(get(mk, "sha256").Text()); err != nil || len(sum) != sha256.Size {
		return nil
	}
	edits, _ := mk.Get("edits")
	var refs []ref
	edits.Elems(func(_ int, e transcript.Value) bool {
		var pieces []piece
		parts, _ := e.Get("parts")
		parts.Elems(func(_ int, p transcript.Value) bool {
			id, _ := p.Get("id")
			d, err := registry.ParseDigest(id.Text())
			if err == nil {
				form, _ := p.Get("form")
				pieces = append(pieces, piece{digest: d, form: form.Text()})
			}
			return true
		})
		at, _ := e.Get("at")
		ptr, ok := externalizer.ParsePointer(at.Text())
		if len(pieces) == 0 || !ok {
			return true
		}
		if v, ok := ptr.Resolve(root); ok {
			refs = append(refs, ref{at: at.Text(), start: v.Start, pieces: pieces})
		}
		return true
	})
	return refs
}

// kind names what an artifact in form f holds.
func kind(f string) string {
	switch externalizer.Form(f) {
	case externalizer.FormJS, externalizer.FormASCII:
		return "text"
	case externalizer.FormBase64:
		return "image"
	case externalizer.FormRaw:
		return "JSON"
	}
	return flatString(f, 20)
}

// describe returns the one line that stands for a reference: the short id
// of its largest artifact, the total size and kind of its artifacts, and
// where the largest one lives in store (nil: no size and no path). An
// artifact missing from the store is said to be so; its expected path is
// still shown.
func describe(r *ref, store *registry.Store) string {
	const shortID = 12
	var (
		size, bestSize int64 = 0, -1
		best           int
		missing        bool
		kinds          []string
	)
	for i, pc := range r.pieces {
		n := artifactSize(store, pc.digest)
		if n < 0 {
			missing = true
		}
		size += max(n, 0)
		if n > bestSize {
			best, bestSize = i, n
		}
		if k := kind(pc.form); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	main := r.pieces[best].digest
	var b strings.Builder
	b.WriteString("⧉ artifact " + main.String()[:shortID])
	if n := len(r.pieces); n > 1 {
		b.WriteString(" (+" + strconv.Itoa(n-1) + " more)")
	}
	b.WriteString(" · ")
	switch {
	case store == nil:
	case missing:
		b.WriteString("not in store ")
	default:
		b.WriteString(plural(int(size), "byte") + " ")
	}
	b.WriteString(strings.Join(kinds, "+"))
	if store != nil {
		b.WriteString(" · " + cleanLine([]byte(store.Path(main)), 0))
	}
	return b.String()
}

// artifactSize returns the size of artifact d in store, or -1 when store
// is nil or does not hold it. It does not read the artifact.
func artifactSize(store *registry.Store, d registry.Digest) int64 {
	if store == nil {
		return -1
	}
	fi, err := os.Lstat(store.Path(d))
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}
