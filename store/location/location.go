// Package location parses where a store is, the value of --store, and
// opens its backend. It names the concrete backends: only the command
// line imports it, and passes the backends it opens down.
package location

import (
	"context"
	"fmt"
	"strings"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/s3"
)

// Open returns the backend of the store at spec: a local folder, or (when
// spec has a URL scheme) the object storage it names: s3://BUCKET/PREFIX,
// configured from the standard AWS environment and files (see s3.Open).
func Open(spec string) (store.Backend, error) {
	if scheme, _, ok := strings.Cut(spec, "://"); ok && !strings.ContainsAny(scheme, `/\.`) {
		if scheme == s3.Scheme {
			return s3.Open(context.Background(), spec)
		}
		return nil, fmt.Errorf("store %s: unknown kind of store %q (want a folder or s3://BUCKET/PREFIX)", spec, scheme)
	}
	return local.New(spec), nil
}
