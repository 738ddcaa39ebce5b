package mem_test

import (
	"testing"

	"github.com/transcript-tool/transcript-tool/store"
	"github.com/transcript-tool/transcript-tool/store/faulty"
	"github.com/transcript-tool/transcript-tool/store/mem"
	"github.com/transcript-tool/transcript-tool/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Backend { return mem.New() })
}

func TestConformanceThroughFaulty(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Backend { return faulty.New(mem.New(), nil) })
}
