package migrate

import (
	"context"
	"fmt"

	"github.com/transcript-tool/transcript-tool/agentstate"
)

// agentState guards what an agent keeps about a transcript that is about
// to be replaced in place: Codex's thread history projects a rollout by
// byte offsets, which a rewrite makes stale. Lock it before the rewrite,
// reset it before the rename, release it after.
type agentState struct {
	codex  *agentstate.CodexThread
	unlock func() error
}

// lockAgentState takes the state of the transcript at path that the
// agent that owns it keeps elsewhere; a transcript without such state
// gives an agentState whose methods do nothing. It fails while the agent
// has the transcript open.
func lockAgentState(path string) (*agentState, error) {
	th, err := agentstate.FindCodexThread(path)
	if err != nil || th == nil {
		return &agentState{}, err
	}
	unlock, err := th.Lock()
	if err != nil {
		return nil, err
	}
	return &agentState{codex: th, unlock: unlock}, nil
}

// reset makes the agent read the transcript anew the next time it opens
// it. It runs before the rename: a projection deleted for a rename that
// then fails is rebuilt from the unchanged transcript, while a rename
// without the reset would leave the projection wrong.
func (s *agentState) reset(ctx context.Context) error {
	if s.codex == nil {
		return nil
	}
	if err := s.codex.ResetHistory(ctx); err != nil {
		return fmt.Errorf("reset Codex's thread history for it: %w", err)
	}
	return nil
}

func (s *agentState) release() {
	if s.unlock != nil {
		_ = s.unlock()
	}
}
