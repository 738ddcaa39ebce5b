package show

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// ref is a value of a migrated entry that a placeholder stands in for, as
// its marker records it.
type ref struct {
	at     string // JSON pointer of the placeholder
	start  int    // offset of the placeholder in the line
	pieces []externalizer.Ref
	shown  bool
}

// readRefs returns the references that the marker of a migrated entry
// records: one per replaced value, in the marker's order. An entry without
// a readable marker has none: Render shows the entry, not the marker's
// faults. (A member that looks like a marker in every way is told apart
// from one by restoring the line, which Render does when it has a store.)
func readRefs(root transcript.Value) []ref {
	reps, err := externalizer.Replacements(root)
	if err != nil {
		return nil
	}
	refs := make([]ref, 0, len(reps))
	for _, r := range reps {
		if len(r.Parts) > 0 {
			refs = append(refs, ref{at: r.At, start: r.Value.Start, pieces: r.Parts})
		}
	}
	return refs
}

// kind names what an artifact in form f holds; a form this version does
// not know, by its name.
func kind(f externalizer.Form) string {
	if k := f.Kind(); k != "" {
		return k
	}
	return flatString(string(f), 20)
}

// describe returns the one line that stands for a reference: the short id
// of its largest artifact, the total size and kind of its artifacts, and
// where the largest one lives in store (nil: no size and no path). An
// artifact missing from the store is said to be so; its expected path is
// still shown.
func describe(r *ref, store *registry.Store) string {
	var (
		size, bestSize int64 = 0, -1
		best           int
		missing        bool
		kinds          []string
	)
	for i, pc := range r.pieces {
		n := artifactSize(store, pc.Digest)
		if n < 0 {
			missing = true
		}
		size += max(n, 0)
		if n > bestSize {
			best, bestSize = i, n
		}
		if k := kind(pc.Form); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	main := r.pieces[best].Digest
	var b strings.Builder
	b.WriteString("⧉ artifact " + display.ID(main.String()))
	if n := len(r.pieces); n > 1 {
		b.WriteString(" (+" + strconv.Itoa(n-1) + " more)")
	}
	b.WriteString(" · ")
	switch {
	case store == nil:
	case missing:
		b.WriteString("not in store ")
	default:
		b.WriteString(display.Plural(int(size), "byte") + " ")
	}
	b.WriteString(strings.Join(kinds, "+"))
	if store != nil {
		b.WriteString(" · " + cleanLine([]byte(store.Path(main)), 0))
	}
	return b.String()
}

// artifactSize returns the size of artifact d in store, or -1 when store
// is nil or does not hold it. It does not read the artifact, and never
// follows a link out of the store (Store.Size).
func artifactSize(store *registry.Store, d store.Digest) int64 {
	if store == nil {
		return -1
	}
	n, err := store.Size(context.Background(), d)
	if err != nil {
		return -1
	}
	return n
}
