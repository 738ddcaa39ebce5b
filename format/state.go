package format

import (
	"context"
	"fmt"
)

// State is what an agent keeps about its sessions outside their
// transcripts, derived from a transcript's bytes (by byte offsets, say),
// which a rewrite of the transcript in place makes stale. An agent's
// declaration names it; its implementation, which opens the agent's own
// databases and locks, is a package of its own that registers it
// (RegisterState) and that the code rewriting transcripts imports: this
// package, which every reader of a transcript imports, links no
// database.
type State struct {
	// What names the state in errors, as the agent's users know it.
	What string
	lock func(path string) (HeldState, error)
}

// HeldState is the state an agent keeps about one transcript, held: the
// agent cannot open the transcript until Release.
type HeldState interface {
	// Reset makes the agent derive the state anew from the transcript the
	// next time it opens it. It is called before the rewritten transcript
	// is renamed into place: a state reset for a rename that then fails
	// is rebuilt from the unchanged transcript, while a rename without
	// the reset would leave it wrong.
	Reset(ctx context.Context) error
	// Release lets the agent have the transcript again.
	Release() error
}

// RegisterState gives the State declared by the agent called agent its
// implementation, lock, which takes the state of the transcript at path:
// nil and no error for a transcript that is not the agent's or of which
// it keeps no state, an error while the agent has it open. It is called
// from the init function of the implementation's package, and panics for
// an agent that declares no State, or one already registered: a slip of
// the program, not of its input.
func RegisterState(agent string, lock func(path string) (HeldState, error)) {
	a, ok := Named(agent)
	if !ok {
		panic(fmt.Sprintf("format: RegisterState(%q): no such agent", agent))
	}
	if a.State == nil || a.State.lock != nil {
		panic(fmt.Sprintf("format: RegisterState(%q): the agent declares no state, or it is registered already", agent))
	}
	a.State.lock = lock
}

// Lock takes the state of the transcript at path (see RegisterState). A
// State whose implementation was never registered is an error for every
// transcript, never a state left stale.
func (s *State) Lock(path string) (HeldState, error) {
	if s.lock == nil {
		return nil, fmt.Errorf("%s: no implementation of %s is built in", path, s.What)
	}
	return s.lock(path)
}
