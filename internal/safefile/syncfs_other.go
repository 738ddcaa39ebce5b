//go:build !linux

package safefile

import "errors"

// FS stands for syncfs(2), which only Linux has: OpenFS returns no FS,
// and callers fsync each file.
type FS struct{}

// OpenFS returns nil: see FS.
func OpenFS(dir string) (*FS, error) { return nil, nil }

// Sync is never called: OpenFS returns no FS.
func (s *FS) Sync() error { return errNoSyncFS }

// Close closes nothing.
func (s *FS) Close() error { return nil }

// Synced is never called: OpenFS returns no FS.
func (f *File) Synced() error { return errNoSyncFS }

var errNoSyncFS = errors.New("safefile: syncfs is Linux's")
