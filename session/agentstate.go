package session

import (
	"context"
	"fmt"

	// The agents' state hooks that format's declarations name register
	// themselves.
	_ "github.com/transcript-tool/transcript-tool/agentstate"
	"github.com/transcript-tool/transcript-tool/format"
)

// AgentState guards what an agent keeps about a transcript that is about
// to be replaced in place (format.State): Codex's thread history projects
// a rollout by byte offsets, which a rewrite makes stale. Take it with
// LockAgentState before the rewrite, Reset it before the rename, Release
// it after.
type AgentState struct {
	held []heldState
}

// heldState is one agent's state of the transcript, held.
type heldState struct {
	what string
	format.HeldState
}

// LockAgentState takes the state of the transcript at path that the
// agent that owns it keeps elsewhere, asking every agent that declares
// such state; a transcript without any gives an AgentState whose methods
// do nothing. It fails while the agent has the transcript open.
func LockAgentState(path string) (*AgentState, error) {
	s := &AgentState{}
	for _, a := range format.Agents() {
		if a.State == nil {
			continue
		}
		h, err := a.State.Lock(path)
		if err != nil {
			s.Release()
			return nil, err
		}
		if h != nil {
			s.held = append(s.held, heldState{what: a.State.What, HeldState: h})
		}
	}
	return s, nil
}

// Reset makes the agent read the transcript anew the next time it opens
// it. It runs before the rename: a projection deleted for a rename that
// then fails is rebuilt from the unchanged transcript, while a rename
// without the reset would leave the projection wrong.
func (s *AgentState) Reset(ctx context.Context) error {
	for _, h := range s.held {
		if err := h.Reset(ctx); err != nil {
			return fmt.Errorf("reset %s for it: %w", h.what, err)
		}
	}
	return nil
}

// Release lets the agent have the transcript again.
func (s *AgentState) Release() {
	for _, h := range s.held {
		_ = h.Release()
	}
	s.held = nil
}
