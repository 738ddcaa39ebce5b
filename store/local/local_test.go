package local_test

import (
	"path/filepath"
	"testing"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/local"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return local.New(t.TempDir()) })
}

func TestLocker(t *testing.T) {
	storetest.RunLocker(t, func(t *testing.T) func() store.Backend {
		dir := filepath.Join(t.TempDir(), "artifacts")
		return func() store.Backend { return local.New(dir) }
	})
}
