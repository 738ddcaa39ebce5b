package registry_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/registry"
)

// TestFIFOObjectDoesNotHang: an object that is a named pipe (planted in
// the store, or left by a broken copy) is corrupt, like a link or a
// directory, and is refused at once: opened without blocking, where a
// plain open(2) of a FIFO waits for a writer, deaf to SIGTERM.
func TestFIFOObjectDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	st := registry.Open(dir)
	data := []byte("payload that will be a fifo")
	d, _, err := st.Put(data)
	require.NoError(t, err)
	require.NoError(t, st.Sync())
	require.NoError(t, st.Release())
	path := filepath.Join(dir, registry.ObjectPath(d))
	require.NoError(t, os.Remove(path))
	require.NoError(t, syscall.Mkfifo(path, 0o600))

	// Put last: it replaces the damaged object with a good one.
	for _, o := range []struct {
		name string
		op   func(s *registry.Store) error
	}{
		{"Open", func(s *registry.Store) error {
			r, err := s.Open(d)
			if err == nil {
				r.Close()
			}
			return err
		}},
		{"Get", func(s *registry.Store) error { _, err := s.Get(d); return err }},
		{"Verify", func(s *registry.Store) error { return s.Verify(d) }},
		{"Resolve", func(s *registry.Store) error { _, err := s.Resolve(d.String()); return err }},
		{"Put", func(s *registry.Store) error {
			defer s.Release()
			_, _, err := s.Put(data)
			return err
		}},
	} {
		name, op := o.name, o.op
		done := make(chan error, 1)
		go func() { done <- op(registry.Open(dir)) }()
		select {
		case err := <-done:
			if name != "Put" {
				require.ErrorIs(t, err, registry.ErrCorrupt, name)
			}
		case <-time.After(3 * time.Second):
			// Unblock the stuck open so the test process can go on.
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-done
			t.Errorf("%s of an object that is a named pipe blocks in open(2)", name)
		}
	}
}
