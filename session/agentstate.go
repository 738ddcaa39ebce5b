package session

import (
	"context"
	"fmt"

	"github.com/transcript-tool/transcript-tool/agentstate"
)

// AgentState guards what an agent keeps about a transcript that is about
// to be replaced in place: Codex's thread history projects a rollout by
// byte offsets, which a rewrite makes stale. Take it with LockAgentState
// before the rewrite, Reset it before the rename, Release it after.
type AgentState struct {
	codex  *agentstate.CodexThread
	unlock func() error
}

// LockAgentState takes the state of the transcript at path that the
// agent that owns it keeps elsewhere; a transcript without such state
// gives an AgentState whose methods do nothing. It fails while the agent
// has the transcript open.
func LockAgentState(path string) (*AgentState, error) {
	th, err := agentstate.FindCodexThread(path)
	if err != nil || th == nil {
		return &AgentState{}, err
	}
	unlock, err := th.Lock()
	if err != nil {
		return nil, err
	}
	return &AgentState{codex: th, unlock: unlock}, nil
}

// Reset makes the agent read the transcript anew the next time it opens
// it. It runs before the rename: a projection deleted for a rename that
// then fails is rebuilt from the unchanged transcript, while a rename
// without the reset would leave the projection wrong.
func (s *AgentState) Reset(ctx context.Context) error {
	if s.codex == nil {
		return nil
	}
	if err := s.codex.ResetHistory(ctx); err != nil {
		return fmt.Errorf("reset Codex's thread history for it: %w", err)
	}
	return nil
}

// Release lets the agent have the transcript again.
func (s *AgentState) Release() {
	if s.unlock != nil {
		_ = s.unlock()
	}
}
