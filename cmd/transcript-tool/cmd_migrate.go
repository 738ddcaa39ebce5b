package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/bucket"
	"github.com/transcript-tool/transcript-tool/format"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/location"
)

type migrateOptions struct {
	migrate.Options
	json bool
}

func migrateCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "migrate",
		Usage:     "move large inline payloads of transcripts into the artifact store",
		ArgsUsage: "PATH...",
		Flags: []cli.Flag{
			newStoreFlag(),
			storeAsFlag(),
			thresholdFlag("externalize payloads of at least `SIZE` JSON bytes, each only if that shortens its line"),
			&cli.StringFlag{Name: "out", Usage: "write migrated transcripts under `DIR`, mirroring relative paths, instead of in place"},
			&cli.BoolFlag{Name: "dry-run", Usage: "report what would be saved; write nothing"},
			&cli.BoolFlag{Name: "backup", Usage: "keep each original as FILE.bak"},
			inputFormatFlag(),
			formatAliasFlag(),
			jobsFlag("`N` files processed in parallel"),
			shardFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		},
		Action: func(c *cli.Context) error {
			paths, err := requirePaths(c)
			if err != nil {
				return err
			}
			opts := migrateOptions{json: c.Bool("json")}
			opts.Store = c.String("store")
			opts.StoreAs = c.String("store-as")
			opts.Threshold = int(sizeOf(c, "threshold"))
			opts.Out = c.String("out")
			opts.DryRun = c.Bool("dry-run")
			opts.Backup = c.Bool("backup")
			opts.Format = c.String("input-format")
			opts.Jobs = c.Int("jobs")
			opts.Shard = shardOf(c)
			return runMigrate(c, st, paths, opts)
		},
	}
}

func runMigrate(c *cli.Context, st streams, paths []string, opts migrateOptions) error {
	inputs, err := collect(c.Context, st, paths, &opts.Out, opts.Shard)
	if err != nil {
		return err
	}
	bar, err := newProgress(c, st, totalSize(inputs), "migrate")
	if err != nil {
		return err
	}
	opts.Progress = bar
	opts.OpenStore = location.Open
	if !opts.DryRun {
		opts.Done = func(res *migrate.FileResult) error { return st.remote.upload(c.Context, res) }
	}
	sum := migrate.Run(c.Context, inputs, opts.Options)
	bar.finish()
	reportFiles(st, sum)
	if opts.json {
		if err := writeJSON(st.stdout, sum); err != nil {
			return err
		}
	} else {
		printMigrateSummary(st.stdout, sum)
	}
	if sum.Failed > 0 {
		return problems
	}
	return nil
}

func totalSize(inputs []session.Input) int64 {
	var n int64
	for _, in := range inputs {
		n += in.Size
	}
	return n
}

// reportFiles writes per-file failures and skips to stderr, and what was
// copied or carried as it was.
func reportFiles(st streams, sum migrate.Summary) {
	for _, r := range sum.Results {
		switch r.Status {
		case migrate.StatusFailed:
			st.errorf("%v", r.Err)
		case migrate.StatusSkipped:
			st.warnf("skipped %v", r.Err)
		}
		if r.LongKept > 0 && r.Status != migrate.StatusFailed {
			st.warnf("%s: %s too large to migrate in bounded memory (mostly numbers or short strings) copied as they are", r.Path, display.Plural(r.LongKept, "line"))
		}
		if r.Carried > 0 && r.Status != migrate.StatusFailed {
			st.warnf("%s: %s an agent wrote to it as it was replaced carried into it", r.Path, display.Plural(r.Carried, "byte"))
		}
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printMigrateSummary(w io.Writer, s migrate.Summary) {
	verb, save := "migrated", "saved"
	if s.DryRun {
		verb, save = "would migrate", "would save"
	}
	fmt.Fprintf(w, "%s %d of %s (%d unchanged, %d skipped, %d failed)\n", verb, s.Migrated, display.Plural(s.Files, "file"), s.Unchanged, s.Skipped, s.Failed)
	fmt.Fprintf(w, "bytes: %s -> %s, %s %s\n", human(s.BytesBefore), human(s.BytesAfter), save, saved(s.BytesBefore-s.BytesAfter, s.BytesBefore))
	fmt.Fprintf(w, "artifacts: %d referenced, %d written, %d deduplicated\n", s.Artifacts, s.Written, s.Deduplicated)
}

// saved says how much of before a migration saves, in the one
// vocabulary of every command: "8.4 MB (70.6%)".
func saved(n, before int64) string {
	if before == 0 {
		return human(n)
	}
	return human(n) + " (" + share(n, before) + ")"
}

// human formats a byte count with decimal units, a saving that is a loss
// with a minus sign.
func human(n int64) string { return string(appendHuman(nil, n)) }

// appendHuman appends human(n) to dst.
func appendHuman(dst []byte, n int64) []byte {
	if n < 0 {
		return display.AppendBytes(append(dst, '-'), -n)
	}
	return display.AppendBytes(dst, n)
}

// collect finds the transcripts under paths, those of s3:// PATHs and
// the sessions of agents' databases as inputs with a Remote (see remote). For a command that writes no
// transcript (out nil), it fetches those in the shard to local copies
// before it returns: one that cannot be fetched is reported and left out,
// and the run then ends with exitProblems at least (see run), unless none
// could be fetched, which is fatal. migrate and rehydrate fetch each as a
// worker takes it. It checks that no two of them would be written to the
// same file under *out; an --out prefix in S3 becomes the local folder
// uploaded to it.
func collect(ctx context.Context, st streams, paths []string, out *string, shard registry.Shard) ([]session.Input, error) {
	var local []string
	var inputs []session.Input
	for _, p := range paths {
		if !bucket.IsURL(p) {
			local = append(local, p)
			continue
		}
		in, err := st.remote.inputs(ctx, p)
		if err != nil {
			return nil, fatal(err, "")
		}
		inputs = append(inputs, in...)
	}
	if len(local) > 0 {
		in, err := session.Collect(local)
		if err != nil {
			return nil, collectErr(err)
		}
		if err := session.Place(in, st.remote.copiesDir); err != nil {
			return nil, fatal(err, "")
		}
		inputs = append(in, inputs...)
	}
	if len(inputs) == 0 {
		read := []string{"files *.jsonl and *.jsonl.zst"}
		for _, a := range format.Agents() {
			if a.Database != "" {
				read = append(read, a.Name+"'s "+a.Database)
			}
		}
		st.warnf("no transcript in %s (%s; stores, hidden and temporary files are skipped)", strings.Join(paths, ", "), strings.Join(read, ", "))
	}
	inputs = session.TakeShard(inputs, shard)
	if out == nil {
		n := len(inputs)
		inputs, failed := st.remote.fetch(ctx, inputs)
		if len(failed) == n && n > 0 {
			return nil, fatal(errors.Join(failed...), "")
		}
		for _, err := range failed {
			st.errorf("%v", err)
		}
		return inputs, nil
	}
	if *out != "" {
		dir, err := st.remote.outDir(ctx, *out)
		if err != nil {
			return nil, fatal(err, "")
		}
		*out = dir
	}
	if err := migrate.CheckDests(inputs, *out); err != nil {
		return nil, fatal(err, "name the directory that holds both, so that --out mirrors their relative paths")
	}
	return inputs, nil
}
