//go:build !linux

package session

import "os"

// Only Linux has leases.

func setReadLease(*os.File) (bool, error) { return false, nil }

func holdsReadLease(*os.File) bool { return false }

func releaseLease(*os.File) {}
