package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/transcript"
)

func catCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print one artifact, checked against its hash",
		ArgsUsage: "ID",
		Description: "ID is an artifact's full SHA-256 or a unique prefix of at least 4 hex characters.\n" +
			"--offset and --limit select a byte range, so that an agent can page through a large artifact.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Value: "artifacts", Usage: "artifact store `DIR`"},
			&cli.Int64Flag{Name: "offset", Usage: "start at byte `N`"},
			&cli.Int64Flag{Name: "limit", Usage: "print at most `N` bytes (0: all)"},
			&cli.BoolFlag{Name: "raw", Usage: "print the stored bytes as they are"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{code: exitUsage, err: errors.New("cat: want exactly one artifact ID"), hint: "usage: transcript-tool cat [--store DIR] ID"}
			}
			offset, limit := c.Int64("offset"), c.Int64("limit")
			if offset < 0 || limit < 0 {
				return usageErr("--offset and --limit must not be negative")
			}
			store := registry.Open(c.String("store"))
			d, err := store.Resolve(c.Args().First())
			if err != nil {
				var amb *registry.AmbiguousError
				if errors.As(err, &amb) {
					return &exitError{code: exitUsage, err: err, hint: "candidates: " + fmt.Sprint(amb.Candidates)}
				}
				return fatal(err, "is --store the store the transcript was migrated into?")
			}
			data, err := store.Get(d)
			if err == nil && !c.Bool("raw") && storedAsJSON(store, d) {
				data = decodeStoredString(data)
			}
			if err != nil {
				return fatal(err, "")
			}
			if offset > int64(len(data)) {
				offset = int64(len(data))
			}
			data = data[offset:]
			if limit > 0 && limit < int64(len(data)) {
				data = data[:limit]
			}
			_, err = st.stdout.Write(data)
			return err
		},
	}
}

// storedAsJSON reports whether the registry records artifact d as raw JSON,
// the form of payloads that no escaping style restores exactly. A text
// artifact that happens to look like a JSON string is printed as it is.
func storedAsJSON(store *registry.Store, d registry.Digest) bool {
	found := false
	_ = store.Records(func(r registry.Record) error {
		if r.Hash == d.String() {
			found = r.Media == externalizer.MediaJSON
			return errStop
		}
		return nil
	}, nil)
	return found
}

var errStop = errors.New("stop")

// decodeStoredString returns the text of an artifact kept as a raw JSON
// string literal, and any other artifact unchanged.
func decodeStoredString(data []byte) []byte {
	if len(data) < 2 || data[0] != '"' {
		return data
	}
	v, err := transcript.Parse(data, 0)
	if err != nil || v.Kind() != transcript.String {
		return data
	}
	text, err := transcript.Decode(data)
	if err != nil {
		return data
	}
	return text
}
