package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// agent is one agent installed by scripts/agents.sh.
type agent struct {
	Pin  string // package@version
	Bin  string // its executable
	Path string // the PATH it runs with: the Node it needs first
}

// agentsDir is where scripts/agents.sh installs the agents.
func agentsDir() string {
	if d := os.Getenv("AGENTS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "transcript-tool", "agents")
}

// agentFolder is the folder scripts/agents.sh installs pin into.
func agentFolder(pin string) string {
	name, version := splitPin(pin)
	return filepath.Join(agentsDir(), strings.ReplaceAll(name, "/", "_")+"@"+version)
}

// splitPin splits "@scope/name@version" into the package and the version.
func splitPin(pin string) (name, version string) {
	i := strings.LastIndexByte(pin, '@')
	return pin[:i], pin[i+1:]
}

// agentPins returns the versions of an agent the tests run against: pin,
// the pinned one, and the version of the same package that `make agents
// AGENTS=latest` installed, when it is another.
func agentPins(pin string) []string {
	name, _ := splitPin(pin)
	pins := []string{pin}
	f, err := os.Open(filepath.Join(agentsDir(), "latest.pins"))
	if err != nil {
		return pins
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != pin && strings.HasPrefix(l, name+"@") {
			pins = append(pins, l)
		}
	}
	return pins
}

// forEachPin runs test as a subtest for each version of the agent pin
// names (see agentPins), named by its version.
func forEachPin(t *testing.T, pin string, test func(t *testing.T, pin string)) {
	for _, p := range agentPins(pin) {
		_, version := splitPin(p)
		t.Run(version, func(t *testing.T) { test(t, p) })
	}
}

// missing skips t, or fails it under TT_REQUIRE_AGENTS=1, for want of
// what msg says.
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("TT_REQUIRE_AGENTS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// findAgent returns the agent pin ("@scope/name@version") with its
// executable bin and the Node it needs: the oldest Node that satisfies
// the package's engines, of those scripts/agents.sh installed and the one
// on PATH. It skips t (or fails it, under TT_REQUIRE_AGENTS=1) when either
// is not installed.
func findAgent(t *testing.T, pin, bin string) agent {
	t.Helper()
	folder := agentFolder(pin)
	a := agent{Pin: pin, Bin: filepath.Join(folder, "node_modules", ".bin", bin), Path: os.Getenv("PATH")}
	if _, err := os.Stat(a.Bin); err != nil {
		missing(t, fmt.Sprintf("%s is not installed in %s: run `make agents` (it needs the npm registry)", pin, agentsDir()))
	}
	name, _ := splitPin(pin)
	var pkg struct {
		Engines struct {
			Node string `json:"node"`
		} `json:"engines"`
	}
	b, err := os.ReadFile(filepath.Join(folder, "node_modules", name, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil {
		t.Fatalf("%s: its package.json: %v", pin, err)
	}
	if pkg.Engines.Node == "" {
		return a
	}
	want, err := parseRange(pkg.Engines.Node)
	if err != nil {
		t.Fatalf("%s: engines.node: %v", pin, err)
	}
	var best string
	var bestVersion semver
	for _, n := range nodes() {
		v, ok := nodeVersion(n)
		if ok && want.match(v) && (best == "" || v.less(bestVersion)) {
			best, bestVersion = n, v
		}
	}
	if best == "" {
		missing(t, fmt.Sprintf("%s needs Node %s: run `make agents`, which installs it from npm into %s", pin, pkg.Engines.Node, agentsDir()))
	}
	a.Path = filepath.Dir(best) + string(os.PathListSeparator) + a.Path
	return a
}

// nodes returns the node executables at hand: those scripts/agents.sh
// installed and the one on PATH.
func nodes() []string {
	installed, _ := filepath.Glob(filepath.Join(agentsDir(), "node-*@*", "node_modules", ".bin", "node"))
	if p, err := exec.LookPath("node"); err == nil {
		installed = append(installed, p)
	}
	return installed
}

// nodeVersion returns the version of the node executable at path.
func nodeVersion(path string) (semver, bool) {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return semver{}, false
	}
	v, err := parseVersion(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"))
	return v, err == nil
}

// semver is a version's major, minor and patch numbers.
type semver [3]int

func (v semver) less(o semver) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// parseVersion parses "22", "22.19" or "22.19.0", the missing parts 0.
func parseVersion(s string) (semver, error) {
	var v semver
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return v, fmt.Errorf("version %q", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("version %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// versionRange is an npm version range of the forms package.json's
// engines use: sets of comparators joined by ||, a version matching a set
// when it satisfies each comparator of it.
type versionRange [][]comparator

type comparator struct {
	op string // ">=", ">", "<", "<=" or "="
	v  semver
}

func parseRange(s string) (versionRange, error) {
	var r versionRange
	for _, set := range strings.Split(s, "||") {
		var cs []comparator
		for _, f := range strings.Fields(set) {
			op := strings.TrimRight(f[:min(2, len(f))], "0123456789")
			switch op {
			case ">=", "<=", ">", "<", "=", "^", "":
			default:
				return nil, fmt.Errorf("range %q: comparator %q not understood", s, f)
			}
			v, err := parseVersion(f[len(op):])
			if err != nil {
				return nil, fmt.Errorf("range %q: %w", s, err)
			}
			switch op {
			case "", "=":
				if strings.Count(f, ".") != 2 {
					return nil, fmt.Errorf("range %q: comparator %q not understood", s, f)
				}
				cs = append(cs, comparator{"=", v})
			case "^": // same major version, from v
				cs = append(cs, comparator{">=", v}, comparator{"<", semver{v[0] + 1}})
			default:
				cs = append(cs, comparator{op, v})
			}
		}
		r = append(r, cs)
	}
	return r, nil
}

func (r versionRange) match(v semver) bool {
next:
	for _, set := range r {
		for _, c := range set {
			lt, gt := v.less(c.v), c.v.less(v)
			ok := map[string]bool{">=": !lt, ">": gt, "<": lt, "<=": !gt, "=": !lt && !gt}[c.op]
			if !ok {
				continue next
			}
		}
		return true
	}
	return false
}

// TestVersionRange checks the ranges of the engines the agents declare.
func TestVersionRange(t *testing.T) {
	for _, c := range []struct {
		rng, version string
		want         bool
	}{
		{">=22.19.0", "22.19.0", true},
		{">=22.19.0", "22.18.9", false},
		{">=22.19.0", "24.0.0", true},
		{">=20.6.0", "20.20.2", true},
		{">=24.16.0 <25 || >=26.1.0", "24.21.0", true},
		{">=24.16.0 <25 || >=26.1.0", "25.0.0", false},
		{">=24.16.0 <25 || >=26.1.0", "26.1.0", true},
		{">=24.16.0 <25 || >=26.1.0", "22.23.3", false},
		{"^22.1", "22.9.9", true},
		{"^22.1", "23.0.0", false},
		{"22.1.2", "22.1.2", true},
		{"=22.1.2", "22.1.3", false},
	} {
		r, err := parseRange(c.rng)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseVersion(c.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.match(v); got != c.want {
			t.Errorf("%s matches %s: %v, want %v", c.rng, c.version, got, c.want)
		}
	}
	for _, bad := range []string{"~22.1.0", "22", "22.x", ">=a"} {
		if _, err := parseRange(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
