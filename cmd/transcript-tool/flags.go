package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/externalizer"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
)

// The flags more than one command takes are made here, once, so that a
// flag means the same and defaults the same way wherever it is given.

// storeFlag returns the --store flag of a command that reads a store.
// Its default is one rule for every command: the store of the session
// root of each transcript (session.StoreFor), and for a command given no
// transcript, that of the current folder (storeHere). A folder is given
// its one name as it is parsed (package canon), so that a store is named
// alike however it is spelled, and one that does not exist is a usage
// error: a mistyped --store must not read as a store with nothing in it.
func storeFlag() *cli.StringFlag {
	f := newStoreFlag()
	canonical := f.Action
	f.Action = func(c *cli.Context, dir string) error {
		if err := canonical(c, dir); err != nil {
			return err
		}
		if err := storeMissing(c.String("store")); errors.Is(err, fs.ErrNotExist) {
			return &exitError{code: exitUsage, err: fmt.Errorf("no artifact store at %s", c.String("store")),
				hint: "is it the folder migrate wrote to? without --store, each transcript's own store is read"}
		}
		return nil
	}
	return f
}

// newStoreFlag is storeFlag for the commands that may name a store that
// does not exist yet: migrate makes it, stats predicts what migrate would
// write into it.
func newStoreFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:  "store",
		Usage: "artifact store `DIR` (default: artifacts/ in the session root of each transcript, or of the current folder: see README)",
		Action: func(c *cli.Context, dir string) error {
			name, err := canon.Path(dir)
			if err != nil {
				return fatal(fmt.Errorf("--store %s: %w", dir, err), "")
			}
			return c.Set("store", name)
		},
	}
}

// storeHere returns the store of a command that is given no transcript:
// opt when it is given, otherwise the one a transcript in the current
// folder would use, so that cat and ls inside an agent's tree read the
// store that migrate wrote there, and elsewhere ./artifacts.
func storeHere(opt string) string {
	// StoreFor reads only the transcript's folder, never the file.
	return session.StoreFor(opt, "session.jsonl")
}

// shardFlag returns --shard K/N, checked as it is parsed: the command
// takes only its share of the inputs (session.TakeShard).
func shardFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:  "shard",
		Usage: "take only share `K/N` of the transcripts (K from 0 to N-1, a fixed hash of each one's path below its PATH): N processes, on any machines, cover the PATHs once",
		Action: func(_ *cli.Context, s string) error {
			if _, err := session.ParseShard(s); err != nil {
				return usageErr("%v", err)
			}
			return nil
		},
	}
}

// shardOf returns the command's --shard, the zero Shard (all inputs)
// when it is not given.
func shardOf(c *cli.Context) registry.Shard {
	sh, _ := session.ParseShard(c.String("shard")) // checked by the flag's Action
	return sh
}

// storeAsFlag returns --store-as, the store's location as agents will see
// it, for the paths migrate writes into placeholders. A new flag for each
// command line: parsing writes into the flag.
func storeAsFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "store-as", Usage: "the store's location `DIR` as the agents that read the transcripts will see it (a container mount, another machine), written into placeholders' paths", DefaultText: "the store's absolute path"}
}

// inputFormatFlag returns --input-format, the transcripts' format where
// detection would not find it, checked as it is parsed.
func inputFormatFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:   "input-format",
		Usage:  "transcript `FORMAT` instead of detecting it per file: " + formatNames(),
		Action: func(_ *cli.Context, name string) error { return knownFormat("--input-format", name) },
	}
}

// formatAliasFlag returns --format as a hidden alias of --input-format,
// for migrate, stats and show, where --format named the transcripts'
// format before --format became the output's on check and recall: old
// command lines still work. It sets --input-format, so that a command
// reads only that; the two naming different formats is a usage error.
func formatAliasFlag() *cli.StringFlag {
	return &cli.StringFlag{
		Name:   "format",
		Hidden: true,
		Action: func(c *cli.Context, name string) error {
			if err := knownFormat("--format", name); err != nil {
				return err
			}
			if c.IsSet("input-format") && c.String("input-format") != name {
				return usageErr("--format %s and --input-format %s name different formats", name, c.String("input-format"))
			}
			return c.Set("input-format", name)
		},
	}
}

// knownFormat checks the value of a flag that names a transcript format.
func knownFormat(flag, name string) error {
	if name == "" {
		return nil
	}
	if _, ok := format.Lookup(name); !ok {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: unknown format %q", flag, name), hint: "formats: " + formatNames()}
	}
	return nil
}

// formatNames lists the transcript formats, for help and hints.
func formatNames() string {
	var names []string
	for _, f := range format.Formats() {
		names = append(names, f.Name())
	}
	return strings.Join(names, ", ")
}

// sizeFlag returns a flag that takes a size in bytes (display.ParseSize:
// 4096, 4k, 4KB, 4KiB, 1.5MB), the same parser for every size flag,
// checked as it is parsed: at least least bytes. Read it with sizeOf.
func sizeFlag(name, value string, least int64, usage string) *cli.StringFlag {
	return &cli.StringFlag{
		Name:  name,
		Value: value,
		Usage: usage,
		Action: func(_ *cli.Context, s string) error {
			n, err := display.ParseSize(s)
			if err != nil {
				return usageErr("--%s: %v", name, err)
			}
			if n < least {
				return usageErr("--%s must be at least %d", name, least)
			}
			return nil
		},
	}
}

// sizeOf returns the value of a flag made by sizeFlag, checked when it was
// parsed; a default that does not parse is 0.
func sizeOf(c *cli.Context, name string) int64 {
	n, _ := display.ParseSize(c.String(name))
	return n
}

// jobsFlag returns --jobs, checked as it is parsed: 0, the default, is
// every core.
func jobsFlag(usage string) *cli.IntFlag {
	return &cli.IntFlag{
		Name:        "jobs",
		Aliases:     []string{"j"},
		Usage:       usage,
		DefaultText: "all cores",
		Action: func(_ *cli.Context, n int) error {
			if n < 0 {
				return usageErr("--jobs must not be negative")
			}
			return nil
		},
	}
}

// thresholdFlag returns --threshold, the size from which a payload is
// moved, as migrate and stats read it.
func thresholdFlag(usage string) *cli.StringFlag {
	return sizeFlag("threshold", strconv.Itoa(externalizer.DefaultThreshold), 1, usage)
}
