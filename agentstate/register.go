package agentstate

import (
	"context"

	"github.com/transcript-tool/transcript-tool/format"
)

// Codex's declaration in package format names its thread history; this
// package implements it, so that format, which every reader of a
// transcript imports, links no SQLite.
func init() { format.RegisterState("Codex", lockThread) }

// lockThread takes the Codex thread of the rollout at path, or returns
// nil for a file that is no rollout.
func lockThread(path string) (format.HeldState, error) {
	th, err := FindCodexThread(path)
	if err != nil || th == nil {
		return nil, err
	}
	unlock, err := th.Lock()
	if err != nil {
		return nil, err
	}
	return &heldThread{th: th, unlock: unlock}, nil
}

// heldThread is a Codex thread locked for the rewrite of its rollout.
type heldThread struct {
	th     *CodexThread
	unlock func() error
}

func (h *heldThread) Reset(ctx context.Context) error { return h.th.ResetHistory(ctx) }
func (h *heldThread) Release() error                  { return h.unlock() }
