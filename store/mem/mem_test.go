package mem_test

import (
	"testing"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/mem"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Backend { return mem.New() })
}
