package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/inspect"
	"github.com/transcript-tool/transcript-tool/internal/canon"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/store/location"
)

type checkOptions struct {
	inspect.CheckOptions
	output string // text, json or github
}

func checkCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "fail when transcripts carry large inline payloads, long lines or large files (a CI gate)",
		ArgsUsage: "PATH...",
		Description: "A violation is an inline payload of at least --max-inline JSON bytes (a payload site of the\n" +
			"file's format, one migrate --threshold would move: not one it keeps because its placeholder\n" +
			"would make the line longer; the placeholders of migrated entries are not payloads), a line\n" +
			"longer than --max-line bytes, a file larger than --max-file bytes on disk, and, with --store, a\n" +
			"migrated entry that does not restore from the store (an artifact missing or not matching its\n" +
			"hash). Of a file of no known format only the sizes of lines and of the file are checked, with a\n" +
			"note. Sizes take units: 4096, 5MB (5,000,000), 512KiB (524,288); 0 turns a limit off. Nothing is\n" +
			"modified.\n\n" +
			"--format text prints FILE:LINE: MESSAGE per violation and a summary; json one document;\n" +
			"github workflow commands (::error file=...,line=...::...) that GitHub Actions shows on the\n" +
			"pull request. Exit status: 0 no violations, 1 violations, 2 usage error or unreadable input.",
		Flags: []cli.Flag{
			shardFlag(),
			sizeFlag("max-inline", strconv.Itoa(inspect.DefaultMaxInline), 0, "report payloads still inline of at least `SIZE` JSON bytes (what migrate --threshold moves); 0: off"),
			sizeFlag("max-line", "1MB", 0, "report lines longer than `SIZE`; 0: off"),
			sizeFlag("max-file", "0", 0, "report files larger than `SIZE` on disk; 0: off"),
			checkStoreFlag(),
			&cli.BoolFlag{Name: "no-references", Usage: "do not check references (which reads every artifact referred to): only sizes"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json or github"},
			inputFormatFlag(),
			jobsFlag("`N` files checked in parallel; the report is the same"),
		},
		Action: func(c *cli.Context) error {
			paths, err := requirePaths(c)
			if err != nil {
				return err
			}
			opts := checkOptions{output: c.String("format")}
			opts.Store = c.String("store")
			opts.OpenStore = location.Open
			opts.NoReferences = c.Bool("no-references")
			opts.Format = c.String("input-format")
			opts.Jobs = c.Int("jobs")
			opts.MaxInline = int(sizeOf(c, "max-inline"))
			opts.MaxLine = sizeOf(c, "max-line")
			opts.MaxFile = sizeOf(c, "max-file")
			switch opts.output {
			case "text", "json", "github":
			default:
				return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q", opts.output),
					hint: "--format is text, json or github; --input-format names the format of the transcripts"}
			}
			return runCheck(c, st, paths, opts)
		},
	}
}

func runCheck(c *cli.Context, st streams, paths []string, opts checkOptions) error {
	inputs, err := collect(c.Context, st, paths, nil, shardOf(c))
	if err != nil {
		return err
	}
	var out checkOutput
	switch opts.output {
	case "json":
		out = &checkJSON{w: st.stdout, doc: checkDoc{Limits: checkLimits{
			MaxInline: opts.MaxInline, MaxLine: opts.MaxLine, MaxFile: opts.MaxFile, Store: opts.Store,
		}, Violations: []inspect.Finding{}, Notes: []inspect.Finding{}, Unreadable: []inspect.Finding{}}}
	case "github":
		out = newCheckGitHub(st.stdout)
	default:
		out = checkText{w: st.stdout}
	}
	totals, err := inspect.Check(c.Context, inputs, opts.CheckOptions, func(f inspect.Finding) {
		if f.Kind == inspect.KindUnreadable {
			st.errorf("%s", f.Message)
		}
		out.finding(f)
	})
	if err != nil {
		return fatal(err, "")
	}
	if err := out.done(totals); err != nil {
		return err
	}
	switch {
	case totals.Unreadable > 0:
		return &exitError{code: exitUsage, err: fmt.Errorf("%s could not be read", display.Plural(totals.Unreadable, "file"))}
	case totals.Violations > 0:
		return problems
	}
	return nil
}

// checkOutput writes the findings of a check as they come, then its
// totals.
type checkOutput interface {
	finding(f inspect.Finding)
	done(t inspect.CheckTotals) error
}

// checkText writes one FILE:LINE: MESSAGE line per violation and note and
// a summary line.
type checkText struct{ w io.Writer }

func (o checkText) finding(f inspect.Finding) {
	switch {
	case f.Kind == inspect.KindNote:
		f.Message = "note: " + f.Message
	case !f.Kind.Violation():
		return
	}
	fmt.Fprintln(o.w, f)
}

func (o checkText) done(t inspect.CheckTotals) error {
	for _, s := range t.Stores {
		fmt.Fprintf(o.w, "references checked against %s\n", s)
	}
	_, err := fmt.Fprintln(o.w, checkSummary(t))
	return err
}

// checkGitHub writes GitHub Actions workflow commands: an error annotation
// per violation, a notice per note, and the summary as a notice. A file is
// named relative to base, the workspace (GITHUB_WORKSPACE, or the current
// folder): GitHub places an annotation on a file by its path in the
// repository, and ignores an absolute one.
type checkGitHub struct {
	w    io.Writer
	base string
}

// newCheckGitHub returns a checkGitHub that names files relative to the
// workspace.
func newCheckGitHub(w io.Writer) checkGitHub {
	base := os.Getenv("GITHUB_WORKSPACE")
	if base == "" {
		base, _ = os.Getwd()
	}
	return checkGitHub{w: w, base: canon.Must(base)}
}

// file names path relative to the workspace when it is inside it.
func (o checkGitHub) file(path string) string {
	if rel, err := filepath.Rel(o.base, path); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return path
}

func (o checkGitHub) finding(f inspect.Finding) {
	cmd := "error"
	switch {
	case f.Kind == inspect.KindNote:
		cmd = "notice"
	case !f.Kind.Violation():
		return
	}
	props := "file=" + githubProperty(o.file(f.File))
	if f.Line > 0 {
		props += ",line=" + strconv.Itoa(f.Line)
	}
	fmt.Fprintf(o.w, "::%s %s::%s\n", cmd, props, githubData(f.Message))
}

func (o checkGitHub) done(t inspect.CheckTotals) error {
	for _, s := range t.Stores {
		fmt.Fprintf(o.w, "::notice title=%s::%s\n", githubProperty("transcript-tool check"), githubData("references checked against "+s))
	}
	_, err := fmt.Fprintf(o.w, "::notice title=%s::%s\n", githubProperty("transcript-tool check"), githubData(checkSummary(t)))
	return err
}

// GitHub workflow commands: "::command prop=value,prop=value::data". The
// data escapes %, CR and LF; property values also : and , which would end
// the value.
var (
	githubDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// githubData escapes the message of a workflow command.
func githubData(s string) string { return githubDataEscaper.Replace(s) }

// githubProperty escapes a property value of a workflow command.
func githubProperty(s string) string { return githubPropertyEscaper.Replace(s) }

// checkJSON collects the findings and writes them as one document.
type checkJSON struct {
	w   io.Writer
	doc checkDoc
}

type checkDoc struct {
	Limits     checkLimits         `json:"limits"`
	Violations []inspect.Finding   `json:"violations"`
	Notes      []inspect.Finding   `json:"notes"`
	Unreadable []inspect.Finding   `json:"unreadable"`
	Totals     inspect.CheckTotals `json:"totals"`
}

type checkLimits struct {
	MaxInline int    `json:"maxInline"`
	MaxLine   int64  `json:"maxLine"`
	MaxFile   int64  `json:"maxFile"`
	Store     string `json:"store,omitempty"`
}

func (o *checkJSON) finding(f inspect.Finding) {
	switch {
	case f.Kind.Violation():
		o.doc.Violations = append(o.doc.Violations, f)
	case f.Kind == inspect.KindNote:
		o.doc.Notes = append(o.doc.Notes, f)
	default:
		o.doc.Unreadable = append(o.doc.Unreadable, f)
	}
}

func (o *checkJSON) done(t inspect.CheckTotals) error {
	o.doc.Totals = t
	return writeJSON(o.w, o.doc)
}

// checkSummary says in one line what a check found.
func checkSummary(t inspect.CheckTotals) string {
	s := "no violations in " + display.Plural(t.Files, "file")
	if t.Violations > 0 {
		var kinds []string
		for _, k := range []struct {
			n    int
			what string
		}{
			{t.InlinePayloads, "inline payload"}, {t.LongLines, "long line"},
			{t.LargeFiles, "large file"}, {t.BrokenReferences, "broken reference"},
		} {
			if k.n > 0 {
				kinds = append(kinds, display.Plural(k.n, k.what))
			}
		}
		s = fmt.Sprintf("%s in %d of %s: %s", display.Plural(t.Violations, "violation"), t.FilesWithViolations,
			display.Plural(t.Files, "file"), strings.Join(kinds, ", "))
	}
	if t.Unreadable > 0 {
		s += "; " + display.Plural(t.Unreadable, "file") + " could not be read"
	}
	return s
}

// checkStoreFlag is storeFlag for check, whose references are checked
// against each transcript's own store unless it names one.
func checkStoreFlag() *cli.StringFlag {
	f := storeFlag()
	f.Usage = "check that every reference restores from the artifact store `DIR` (default: each transcript's own store, as migrate picks it)"
	return f
}
