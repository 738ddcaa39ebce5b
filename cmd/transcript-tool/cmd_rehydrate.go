package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/store/location"
)

// rehydrateReport is rehydrate's summary as JSON: what it restored, not
// what migrate would count.
type rehydrateReport struct {
	Files       int               `json:"files"`
	Restored    int               `json:"restored"`
	Failed      int               `json:"failed"`
	BytesBefore int64             `json:"bytesBefore"`
	BytesAfter  int64             `json:"bytesAfter"`
	Results     []rehydrateResult `json:"results"`
}

// rehydrateResult is one file of a rehydrateReport.
type rehydrateResult struct {
	Path        string `json:"path"`
	Dest        string `json:"dest,omitempty"`
	Status      string `json:"status"`
	BytesBefore int64  `json:"bytesBefore"`
	BytesAfter  int64  `json:"bytesAfter"`
	Error       string `json:"error,omitempty"`
}

func rehydrateReportOf(sum migrate.Summary) rehydrateReport {
	r := rehydrateReport{Files: sum.Files, Restored: sum.Migrated, Failed: sum.Failed,
		BytesBefore: sum.BytesBefore, BytesAfter: sum.BytesAfter, Results: []rehydrateResult{}}
	for _, f := range sum.Results {
		r.Results = append(r.Results, rehydrateResult{Path: f.Path, Dest: f.Dest, Status: string(f.Status),
			BytesBefore: f.BytesBefore, BytesAfter: f.BytesAfter, Error: f.Message})
	}
	return r
}

func rehydrateCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "rehydrate",
		Usage:     "restore the exact original bytes of migrated transcripts",
		ArgsUsage: "PATH...",
		Description: "With one file and neither --out nor --in-place, the original is written to stdout.\n" +
			"Every line is checked against the SHA-256 recorded when it was migrated; a missing\n" +
			"or corrupt artifact stops the file with an error and no wrong byte is written.",
		Flags: []cli.Flag{
			shardFlag(),
			storeFlag(),
			&cli.StringFlag{Name: "out", Usage: "write restored transcripts under `DIR`, mirroring relative paths"},
			&cli.BoolFlag{Name: "in-place", Usage: "replace each migrated transcript by its original"},
			jobsFlag("`N` files processed in parallel"),
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON (with --out or --in-place)"},
		},
		Action: func(c *cli.Context) error {
			paths, err := requireArgs(c, "path")
			if err != nil {
				return err
			}
			opts := migrate.RehydrateOptions{Store: c.String("store"), OpenStore: location.Open, Out: c.String("out"), InPlace: c.Bool("in-place"), Jobs: c.Int("jobs")}
			if opts.InPlace && opts.Out != "" {
				return usageErr("--in-place and --out exclude each other")
			}
			inputs, err := collect(c.Context, st, paths, &opts.Out, shardOf(c))
			if err != nil {
				return err
			}
			if opts.Out == "" && !opts.InPlace {
				if len(inputs) != 1 || !inputs[0].Explicit {
					return &exitError{code: exitUsage, err: fmt.Errorf("rehydrate to stdout takes exactly one file, got %d", len(inputs)),
						hint: "use --out DIR or --in-place for several files"}
				}
				err := migrate.RehydrateTo(c.Context, st.stdout, inputs[0], opts.Store, opts.OpenStore, nil)
				var same *migrate.OutputIsInputError
				if errors.As(err, &same) {
					hint := "write to another file (rehydrate FILE > FILE.orig), or restore it where it is with --in-place"
					if same.Emptied {
						hint = "its migrated text is gone (the artifacts are still in the store): restore it from a backup, then " + hint
					}
					return &exitError{code: exitUsage, err: err, hint: hint}
				}
				if err != nil {
					st.errorf("%v", err)
					return problems
				}
				return nil
			}
			bar, err := newProgress(c, st, totalSize(inputs), "rehydrate")
			if err != nil {
				return err
			}
			opts.Progress = bar
			opts.Done = func(res *migrate.FileResult) error { return st.remote.upload(c.Context, res) }
			sum := migrate.Rehydrate(c.Context, inputs, opts)
			bar.finish()
			reportFiles(st, sum)
			if c.Bool("json") {
				if err := writeJSON(st.stdout, rehydrateReportOf(sum)); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(st.stdout, "restored %d of %s (%d failed)\n", sum.Migrated, display.Plural(sum.Files, "file"), sum.Failed)
				fmt.Fprintf(st.stdout, "bytes: %s -> %s\n", human(sum.BytesBefore), human(sum.BytesAfter))
			}
			if sum.Failed > 0 {
				return problems
			}
			return nil
		},
	}
}
