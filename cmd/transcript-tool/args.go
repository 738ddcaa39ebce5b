package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// normalizeArgs puts a command line in the order urfave/cli parses, so
// that flags may be given anywhere, as git and most tools take them:
// the global flags first (wherever they were given, --progress after the
// command included), then the command, its own flags, and "--" before its
// arguments, so that an argument that starts with "-" after a "--" of the
// user's stays an argument. An unknown flag is kept in the command's
// flags, where parsing reports it (see usageError); a line whose first
// word is no command is left as it is. A flag that needs a value and is
// given none is an error.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	var globals, own, operands []string
	i := 1
	for i < len(args) && isFlag(args[i]) {
		n := flagArgs(app.Flags, args[i:])
		globals = append(globals, args[i:i+n]...)
		i += n
	}
	if i == len(args) || args[i] == "--" {
		return args, nil
	}
	cmd := app.Command(args[i])
	if cmd == nil || cmd.Name == "help" {
		return args, nil
	}
	name := args[i]
	for i++; i < len(args); {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case !isFlag(a):
			operands = append(operands, a)
			i++
		case lookupFlag(cmd.Flags, a) == nil && lookupFlag(app.Flags, a) != nil:
			n := flagArgs(app.Flags, args[i:])
			globals = append(globals, args[i:i+n]...)
			i += n
		default:
			n := flagArgs(cmd.Flags, args[i:])
			if n == 1 && needsValue(cmd.Flags, a) {
				return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s needs a value", dashes(flagName(a))),
					hint: "transcript-tool " + name + " --help lists its flags"}
			}
			own = append(own, args[i:i+n]...)
			i += n
		}
	}
	out := append([]string{args[0]}, globals...)
	out = append(append(out, name), own...)
	if len(operands) > 0 {
		out = append(append(out, "--"), operands...)
	}
	return out, nil
}

// needsValue reports whether flag word a, given alone, lacks the value its
// flag takes.
func needsValue(flags []cli.Flag, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	switch lookupFlag(flags, a).(type) {
	case nil, *cli.BoolFlag:
		return false
	}
	return true
}

// isFlag reports whether a word of a command line is a flag: it starts
// with "-" and is not "-" alone (standard input, for the commands that
// take it).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// flagName returns the name of flag word a, without its dashes and value.
func flagName(a string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

// lookupFlag returns the flag of flags that word a names, or nil.
func lookupFlag(flags []cli.Flag, a string) cli.Flag {
	name := flagName(a)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// flagArgs returns how many words flag word args[0] takes: two for a flag
// with a value given as the next word, else one (a boolean flag, a value
// given with "=", an unknown flag, or a value missing at the end or
// before "--").
func flagArgs(flags []cli.Flag, args []string) int {
	if strings.Contains(args[0], "=") || len(args) < 2 || args[1] == "--" {
		return 1
	}
	switch f := lookupFlag(flags, args[0]); f.(type) {
	case nil, *cli.BoolFlag:
		return 1
	default:
		if name := flagName(args[0]); name == "help" || name == "h" || name == "version" || name == "v" {
			return 1
		}
		return 2
	}
}

// usageError rewrites an error urfave/cli returns for a command line,
// which Go's flag package words with single dashes ("flag provided but
// not defined: -thresold"), into this tool's words, with a did-you-mean
// hint for an unknown flag of flags (the command's, or the global ones).
func usageError(err error, flags []cli.Flag, command string) error {
	msg := err.Error()
	help := "transcript-tool --help lists the commands and global flags"
	if command != "" {
		help = "transcript-tool " + command + " --help lists its flags"
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = flagName(name)
		hint := help
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if s := closest(name, names); s != "" {
			hint = "did you mean " + dashes(s) + "?"
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("unknown flag %s", dashes(name)), hint: hint}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s needs a value", dashes(flagName(name))), hint: help}
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "x" for flag -jobs: parse error
		if value, after, ok := strings.Cut(rest, " for flag "); ok {
			name, why, _ := strings.Cut(after, ": ")
			if why == "parse error" {
				why = "not a number"
			}
			return &exitError{code: exitUsage, err: fmt.Errorf("%s: invalid value %s: %s", dashes(flagName(name)), value, why), hint: help}
		}
	}
	return &exitError{code: exitUsage, err: err, hint: help}
}

// dashes writes a flag's name as it is typed: -j, --jobs.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// closest returns the name among names nearest to word, if one is near
// enough to be a slip of the fingers (an edit or two, fewer than half
// the word), or "".
func closest(word string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(word, n); d < bestD && 2*d < max(len(word), 2) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the number of insertions, deletions, substitutions and
// swaps of neighbours that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
