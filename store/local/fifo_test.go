package local

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/store"
)

// TestFIFOObjectDoesNotHang: an object that is a named pipe (planted in
// the store, or left by a broken copy) is corrupt, like a link or a
// directory, and is refused at once: opened without blocking, where a
// plain open(2) of a FIFO waits for a writer, deaf to SIGTERM.
func TestFIFOObjectDoesNotHang(t *testing.T) {
	s, l := newStore(t)
	data := []byte("payload that will be a fifo")
	d := mustPut(t, s, data)
	require.NoError(t, l.Release())
	path := l.Path(store.ObjectHandle(d))
	require.NoError(t, os.Remove(path))
	require.NoError(t, syscall.Mkfifo(path, 0o600))

	// Put last: it replaces the damaged object with a good one.
	for _, o := range []struct {
		name string
		op   func(s *store.Store) error
	}{
		{"Open", func(s *store.Store) error {
			r, err := s.Open(ctx, d)
			if err == nil {
				r.Close()
			}
			return err
		}},
		{"OpenRange", func(s *store.Store) error {
			r, err := s.OpenRange(ctx, d, 1, 2)
			if err == nil {
				r.Close()
			}
			return err
		}},
		{"Get", func(s *store.Store) error { _, err := s.Get(ctx, d); return err }},
		{"Verify", func(s *store.Store) error { return s.Verify(ctx, d) }},
		{"Size", func(s *store.Store) error { _, err := s.Size(ctx, d); return err }},
		// Resolve names a damaged object too (it is there): reading it
		// says what is wrong, where "not found" would mislead.
		{"Resolve", func(s *store.Store) error {
			got, err := s.Resolve(ctx, d.String())
			if err == nil && got != d {
				err = fmt.Errorf("resolved to %s", got)
			}
			return err
		}},
		{"Put", func(s *store.Store) error {
			defer s.Backend().(*Local).Release()
			_, _, err := s.Put(ctx, data)
			if err == nil {
				err = s.Flush(ctx, d)
			}
			return err
		}},
	} {
		name, op := o.name, o.op
		done := make(chan error, 1)
		go func() { done <- op(store.New(New(l.Dir()))) }()
		select {
		case err := <-done:
			if name == "Put" || name == "Resolve" {
				require.NoError(t, err, name)
			} else {
				require.ErrorIs(t, err, store.ErrCorrupt, name)
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
	got, err := s.Get(ctx, d)
	require.NoError(t, err)
	require.Equal(t, data, got)
}
