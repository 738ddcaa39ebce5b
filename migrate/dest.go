package migrate

import (
	"fmt"

	"github.com/transcript-tool/transcript-tool/session"
)

// CheckDests refuses inputs that would be written to the same file under
// out: two files with one name from different directories would otherwise
// overwrite each other.
func CheckDests(inputs []session.Input, out string) error {
	if out == "" {
		return nil
	}
	seen := map[string]string{}
	for _, in := range inputs {
		dest := Dest(in, out)
		if prev, ok := seen[dest]; ok {
			return fmt.Errorf("%s and %s would both be written to %s", prev, in.Path, dest)
		}
		seen[dest] = in.Path
	}
	return nil
}
