package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	storepkg "github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/transcript"
)

func catCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print one artifact, checked against its hash",
		ArgsUsage: "ID",
		Description: "ID is an artifact's full SHA-256, a unique prefix of at least 4 hex characters, or the\n" +
			"tool call id or entry id that produced it, looked up in the registry. An id that is a\n" +
			"prefix of a stored artifact is taken as one. When a tool call or entry has several\n" +
			"artifacts, the one of the tool result's content (what the agent saw) is printed if\n" +
			"there is exactly one; otherwise they are listed and the status is 2.\n\n" +
			"--offset and --limit select a part, so that an agent can page through a large\n" +
			"artifact: in characters (Unicode code points) for text (text/plain artifacts, and\n" +
			"JSON strings printed as their text), in bytes otherwise and with --raw. The whole\n" +
			"artifact is checked against its hash before any of it is printed.",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.Int64Flag{Name: "offset", Usage: "start at character (text) or byte `N`"},
			&cli.Int64Flag{Name: "limit", Usage: "print at most `N` characters (text) or bytes; 0: all", DefaultText: "all"},
			&cli.BoolFlag{Name: "raw", Usage: "print the stored bytes as they are; --offset and --limit count bytes"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{code: exitUsage, err: errors.New("cat: want exactly one artifact ID"), hint: "usage: transcript-tool cat [--store DIR] ID"}
			}
			offset, limit := c.Int64("offset"), c.Int64("limit")
			if offset < 0 || limit < 0 {
				return usageErr("--offset and --limit must not be negative")
			}
			store, err := openStore(storeHere(c.String("store")))
			if err != nil {
				return err
			}
			d, rec, err := resolveArtifact(c.Context, st, store, c.Args().First())
			if err != nil {
				return err
			}
			if binary(rec.Media) && isTerminal(st.stdout) {
				return &exitError{code: exitUsage, err: fmt.Errorf("%s is %s, not text: it is not written to a terminal", d, rec.Media),
					hint: "redirect it to a file: transcript-tool cat " + c.Args().First() + " > FILE"}
			}
			return printArtifact(c.Context, st.stdout, store, d, rec, c.Bool("raw"), offset, limit)
		},
	}
}

// binary reports whether an artifact of media type media is not text: an
// image, an archive, bytes of no known type.
func binary(media string) bool {
	m, _, _ := strings.Cut(media, ";")
	return m != "" && !strings.HasPrefix(m, "text/") && m != externalizer.MediaJSON
}

// resolveArtifact finds the artifact id names: by hash or hash prefix,
// else by the tool call id or entry id of its registry records. It returns
// the artifact's first registry record, if any.
func resolveArtifact(ctx context.Context, st streams, store *registry.Store, id string) (storepkg.Digest, registry.Record, error) {
	d, err := store.Resolve(ctx, id)
	var amb *storepkg.AmbiguousError
	switch {
	case err == nil:
		rec, _ := firstRecord(ctx, st, store, d)
		return d, rec, nil
	case errors.As(err, &amb):
		return d, registry.Record{}, &exitError{code: exitUsage, err: err, hint: "candidates: " + fmt.Sprint(amb.Candidates)}
	case errors.Is(err, storepkg.ErrCorrupt):
		// The object is there, but damaged (a link, not a file): say so,
		// rather than look for the id among tool call ids.
		return d, registry.Record{}, fatal(err, "")
	}
	const hint = "is --store the store the transcript was migrated into?"
	recs, rerr := producedBy(ctx, st, store, id)
	if rerr != nil {
		return d, registry.Record{}, fatal(rerr, "")
	}
	switch len(recs) {
	case 0:
		if !errors.Is(err, storepkg.ErrNotFound) {
			err = fmt.Errorf("%q is neither an artifact id (a full SHA-256 or a prefix of at least %d hex characters) nor a tool call id or entry id in the registry of %s",
				id, storepkg.MinPrefix, store.Dir())
		}
		return d, registry.Record{}, fatal(err, hint)
	case 1:
		d, _ := storepkg.ParseDigest(recs[0].Hash) // producedBy checked it
		return d, recs[0], nil
	}
	var content []registry.Record
	for _, r := range recs {
		if format.ContentSite(r.Site) {
			content = append(content, r)
		}
	}
	if len(content) == 1 {
		d, _ := storepkg.ParseDigest(content[0].Hash)
		return d, content[0], nil
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "\n  %s  %s  %s  %s  %s:%d", display.Line(r.Hash, 64), human(r.Size), display.Line(r.Media, 40),
			display.Line(r.Site, 80), display.Line(r.Source, 200), r.Line)
	}
	return d, registry.Record{}, &exitError{code: exitUsage,
		err:  fmt.Errorf("%q names %d artifacts:%s", id, len(recs), b.String()),
		hint: "print one of them by its id"}
}

// producedBy returns the registry records of the distinct artifacts whose
// tool call id or entry id is id, in registry order: for each, its first
// record at a content site, else its first record. Records whose hash is
// not an artifact id are skipped. The empty id names nothing: records
// without a tool call id or entry id would all match it.
func producedBy(ctx context.Context, st streams, store *registry.Store, id string) ([]registry.Record, error) {
	if id == "" {
		return nil, nil
	}
	var recs []registry.Record
	index := map[string]int{}
	err := store.RecordsMatching(ctx, []registry.Key{{Field: registry.FieldID, Value: id}}, func(r registry.Record, _ registry.Pos) error {
		if r.ToolCallID != id && r.Entry != id {
			return nil
		}
		if _, err := storepkg.ParseDigest(r.Hash); err != nil {
			return nil
		}
		i, seen := index[r.Hash]
		switch {
		case !seen:
			index[r.Hash] = len(recs)
			recs = append(recs, r)
		case !format.ContentSite(recs[i].Site) && format.ContentSite(r.Site):
			recs[i] = r // the record that says it is the content wins
		}
		return nil
	}, func(e *registry.BadLineError) { st.warnf("%v", e) })
	return recs, err
}

// firstRecord returns the first registry record of artifact d.
func firstRecord(ctx context.Context, st streams, store *registry.Store, d storepkg.Digest) (registry.Record, bool) {
	var rec registry.Record
	found := false
	_ = store.RecordsMatching(ctx, []registry.Key{{Field: registry.FieldHash, Value: d.String()}}, func(r registry.Record, _ registry.Pos) error {
		if r.Hash == d.String() {
			rec, found = r, true
			return errStop
		}
		return nil
	}, func(e *registry.BadLineError) { st.warnf("%v", e) })
	return rec, found
}

var errStop = errors.New("stop")

// printArtifact writes artifact d, or the part of it that offset and limit
// select, to w: the text of an artifact stored as a raw JSON string, other
// artifacts as they are stored. Nothing is written unless the whole
// artifact hashes to d.
func printArtifact(ctx context.Context, w io.Writer, store *registry.Store, d storepkg.Digest, rec registry.Record, raw bool, offset, limit int64) error {
	if err := store.Verify(ctx, d); err != nil {
		return fatal(err, "")
	}
	r, err := store.Open(ctx, d)
	if err != nil {
		return fatal(err, "")
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	if first, _ := br.Peek(1); !raw && rec.Media == externalizer.MediaJSON && len(first) == 1 && first[0] == '"' {
		// Decoding needs the whole string; such artifacts are rare: text
		// that no escaping style restores exactly.
		data, err := io.ReadAll(br)
		if err != nil {
			return fatal(err, "")
		}
		if text, ok := decodeStoredString(data); ok {
			return slice(w, bytes.NewReader(text), true, offset, limit)
		}
		return slice(w, bytes.NewReader(data), false, offset, limit)
	}
	if err := slice(w, br, !raw && strings.HasPrefix(rec.Media, "text/"), offset, limit); err != nil {
		return fatal(err, "")
	}
	return nil
}

// slice copies from r to w the part that starts at offset and is at most
// limit long (0: to the end), counted in characters when text is set (an
// invalid UTF-8 byte counts as one and is copied as it is) and in bytes
// otherwise.
func slice(w io.Writer, r io.Reader, text bool, offset, limit int64) error {
	if !text {
		if _, err := io.CopyN(io.Discard, r, offset); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if limit > 0 {
			r = io.LimitReader(r, limit)
		}
		_, err := io.Copy(w, r)
		return err
	}
	buf := make([]byte, 64<<10)
	var pos int64 // characters read
	carry := 0    // bytes of a character cut at the end of the last read
	for {
		n, err := io.ReadFull(r, buf[carry:])
		n += carry
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		start, i := -1, 0
		for i < n && (limit == 0 || pos < offset+limit) {
			if !eof && !utf8.FullRune(buf[i:n]) {
				break
			}
			if start < 0 && pos >= offset {
				start = i
			}
			_, size := utf8.DecodeRune(buf[i:n])
			i += size
			pos++
		}
		if start >= 0 {
			if _, err := w.Write(buf[start:i]); err != nil {
				return err
			}
		}
		if eof || (limit > 0 && pos >= offset+limit) {
			return nil
		}
		carry = copy(buf, buf[i:n])
	}
}

// decodeStoredString returns the text of an artifact kept as a raw JSON
// string literal. A text artifact that happens to look like a JSON string
// is not one: only artifacts the registry records as JSON are decoded.
func decodeStoredString(data []byte) ([]byte, bool) {
	if len(data) < 2 || data[0] != '"' {
		return nil, false
	}
	v, err := transcript.Parse(data, 0)
	if err != nil || v.Kind() != transcript.String {
		return nil, false
	}
	text, err := transcript.Decode(data)
	if err != nil {
		return nil, false
	}
	return text, true
}
