package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/transcript-tool/transcript-tool/fsck"
	"github.com/transcript-tool/transcript-tool/internal/display"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
)

func verifyCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a store and the references of transcripts to it (fsck)",
		ArgsUsage: "[PATH...]",
		Description: "Re-hashes every artifact, checks the registry against the objects, and rebuilds\n" +
			"every migrated line of the given transcripts to check that its references resolve\n" +
			"to intact artifacts. Missing or corrupt artifacts and bad registry lines are errors\n" +
			"(exit 1). Information: artifacts without a record or without a reference, records\n" +
			"naming transcripts that no longer exist (a moved tree?), and what gc given the same\n" +
			"transcripts would delete, or would delete with --prune-missing.\n" +
			"Without PATH, only the store is checked: --store, by default the store of the current\n" +
			"folder's session root, as for cat and ls.",
		Flags: []cli.Flag{
			shardFlag(),
			storeFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the reports as JSON"},
		},
		Action: func(c *cli.Context) error {
			groups, err := storeGroups(c.Context, st, c.Args().Slice(), c.String("store"), shardOf(c))
			if err != nil {
				return err
			}
			asJSON := c.Bool("json")
			reports := []fsck.Report{}
			var total fsck.Report
			// As JSON, the findings are printed with the reports, after
			// the last store's: they wait in a temporary file meanwhile,
			// lists[i] the list of reports[i].
			findings := listSpill{what: "findings"}
			defer findings.close()
			var lists []int
			if asJSON {
				if err := findings.open(); err != nil {
					return fatal(err, "")
				}
			}
			for _, g := range groups {
				store, err := openStore(g.store)
				if err != nil {
					return err
				}
				// The findings of a store that exists are printed as
				// they are made; a store that does not exist may not be
				// reported at all (below), so its are kept.
				missing := storeMissing(g.store) != nil
				var found func(fsck.Finding)
				list := -1
				switch {
				case asJSON:
					list = findings.begin()
					found = func(f fsck.Finding) {
						// A failure to keep it is the list's, reported
						// when it is printed.
						if b, err := json.Marshal(f); err == nil {
							_ = findings.add(b)
						}
					}
				case !missing:
					found = func(f fsck.Finding) { fmt.Fprintln(st.stdout, f) }
				}
				rep, err := fsck.VerifyTo(c.Context, store, g.transcripts, found)
				if err != nil {
					return fatal(err, "")
				}
				if missing && rep.References == 0 {
					continue // transcripts never migrated: no store to check
				}
				rep.Missing = missing
				if !asJSON {
					for _, f := range rep.Findings {
						fmt.Fprintln(st.stdout, f)
					}
					fmt.Fprintln(st.stdout, verifyLine(rep.Store, rep))
					rep.Findings = nil
				}
				reports = append(reports, rep)
				lists = append(lists, list)
				total.Objects += rep.Objects
				total.Bytes += rep.Bytes
				total.Records += rep.Records
				total.Transcripts += rep.Transcripts
				total.References += rep.References
				total.Errors += rep.Errors
			}
			if asJSON {
				err := writeListsJSON(st.stdout, reports, "findings", func(i int, put func(any) error) error {
					return findings.each(lists[i], func(e []byte) error { return put(json.RawMessage(e)) })
				})
				if err != nil {
					return err
				}
			} else if len(reports) > 1 {
				fmt.Fprintln(st.stdout, verifyLine("total of "+display.Plural(len(reports), "store"), total))
			}
			if total.Errors > 0 {
				return problems
			}
			return nil
		},
	}
}

// verifyLine says in one line what verify found of one store, or of all.
func verifyLine(name string, rep fsck.Report) string {
	what := display.Plural(rep.Objects, "artifact") + " (" + human(rep.Bytes) + "), " + display.Plural(rep.Records, "registry record")
	if rep.Missing {
		what = "no artifact store there"
	}
	return fmt.Sprintf("%s: %s, %s referring to %s: %s", name, what,
		display.Plural(rep.Transcripts, "transcript"), display.Plural(rep.References, "artifact"), display.Plural(rep.Errors, "error"))
}

// storeGroup is a store and the transcripts to check against it.
type storeGroup struct {
	store       string
	transcripts []session.Input
}

// storeGroups sorts the transcripts under paths by the store they use:
// the one given, or the default one of each (session.StoreFor). Without
// paths it is the store storeHere picks, alone; a store that does not
// exist is a usage error then.
func storeGroups(ctx context.Context, st streams, paths []string, store string, shard registry.Shard) ([]storeGroup, error) {
	if len(paths) == 0 {
		store = storeHere(store)
		if err := storeMissing(store); errors.Is(err, fs.ErrNotExist) {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("no artifact store at %s", store), hint: "name the store with --store DIR, or give the transcripts that use it"}
		}
		return []storeGroup{{store: store}}, nil
	}
	inputs, err := collect(ctx, st, paths, nil, shard)
	if err != nil {
		return nil, err
	}
	byStore := map[string]*storeGroup{}
	for _, in := range inputs {
		dir := session.StoreFor(cmp.Or(store, in.Store), in.Path)
		g, ok := byStore[dir]
		if !ok {
			g = &storeGroup{store: dir}
			byStore[dir] = g
		}
		g.transcripts = append(g.transcripts, in)
	}
	groups := make([]storeGroup, 0, len(byStore))
	for _, g := range byStore {
		groups = append(groups, *g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].store < groups[j].store })
	return groups, nil
}
