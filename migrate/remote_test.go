package migrate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/testsession"
	"github.com/transcript-tool/transcript-tool/migrate"
	"github.com/transcript-tool/transcript-tool/registry"
	"github.com/transcript-tool/transcript-tool/session"
	"github.com/transcript-tool/transcript-tool/store/local"
)

// memRemote is a transcript kept in memory, as a session.Remote: a
// stand-in for an object in a bucket or rows of a database.
type memRemote struct {
	name     string
	mu       *sync.Mutex
	bytes    *[]byte
	fetched  []byte
	changeAt func() // when set, called between Fetch and Replace
}

func (r *memRemote) Name() string { return r.name }

func (r *memRemote) Fetch(_ context.Context, path string) (int64, error) {
	r.mu.Lock()
	r.fetched = append([]byte(nil), *r.bytes...)
	r.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	return int64(len(r.fetched)), os.WriteFile(path, r.fetched, 0o600)
}

func (r *memRemote) Replace(_ context.Context, path string, _ bool) error {
	if r.changeAt != nil {
		r.changeAt()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if string(*r.bytes) != string(r.fetched) {
		return fmt.Errorf("%s: %w", r.name, session.ErrSourceChanged)
	}
	*r.bytes = data
	return nil
}

// TestRemoteInputs: transcripts that are no files of their own are
// fetched as workers take them, so that a run of 1,000 at --jobs 2 never
// holds more than --jobs + 1 local copies (counted as they come and go);
// each is put back migrated, named by its name in results and registry
// records; and one changed between its fetch and its replace is left as
// it was and fails alone.
func TestRemoteInputs(t *testing.T) {
	const n, jobs = 1000, 2
	dir := t.TempDir()
	copies, store := filepath.Join(dir, "copies"), filepath.Join(dir, "store")
	var mu sync.Mutex
	data := make([][]byte, n)
	var inputs []session.Input
	for i := range n {
		data[i] = testsession.Pi(fmt.Sprintf("s%d", i), 1, 5000+i%7)
		r := &memRemote{name: fmt.Sprintf("mem://b/s%04d.jsonl", i), mu: &mu, bytes: &data[i]}
		if i == 7 {
			r.changeAt = func() {
				mu.Lock()
				data[7] = append(data[7], []byte(`{"type":"message","appended":true}`+"\n")...)
				mu.Unlock()
			}
		}
		inputs = append(inputs, session.Input{Path: filepath.Join(copies, fmt.Sprintf("s%04d.jsonl", i)), Rel: fmt.Sprintf("s%04d.jsonl", i),
			Size: int64(len(data[i])), Remote: r})
	}
	want7 := append(append([]byte(nil), data[7]...), `{"type":"message","appended":true}`+"\n"...)

	var most atomic.Int64
	stop := make(chan struct{})
	var counted sync.WaitGroup
	counted.Add(1)
	go func() {
		defer counted.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
			entries, _ := os.ReadDir(copies)
			live := int64(0)
			for _, e := range entries {
				if filepath.Ext(e.Name()) == ".jsonl" {
					live++
				}
			}
			if live > most.Load() {
				most.Store(live)
			}
		}
	}()
	sum := migrate.Run(context.Background(), inputs, migrate.Options{OpenStore: local.Open, Store: store, Jobs: jobs})
	close(stop)
	counted.Wait()

	assert.Equal(t, n-1, sum.Migrated)
	assert.Equal(t, 1, sum.Failed)
	assert.LessOrEqual(t, most.Load(), int64(jobs+1), "local copies held at once")
	assert.Positive(t, most.Load())
	for _, r := range sum.Results {
		if r.Status == migrate.StatusFailed {
			assert.Equal(t, "mem://b/s0007.jsonl", r.Path)
			assert.ErrorIs(t, r.Err, session.ErrSourceChanged)
		}
	}
	mu.Lock()
	assert.Equal(t, want7, data[7], "the transcript that changed is left as it was changed")
	migrated := append([]byte(nil), data[3]...)
	mu.Unlock()
	assert.Less(t, len(migrated), 4000, "the others are put back migrated")
	entries, err := os.ReadDir(copies)
	require.NoError(t, err)
	assert.Empty(t, entries, "no local copy is left")

	st, err := registry.Open(local.Open, store)
	require.NoError(t, err)
	sources := map[string]bool{}
	require.NoError(t, st.Records(context.Background(), func(r registry.Record) error {
		sources[r.Source] = true
		return nil
	}, func(*registry.BadLineError) {}))
	assert.True(t, sources["mem://b/s0003.jsonl"], "records name the transcript, not its copy")
	for src := range sources {
		assert.NotContains(t, src, copies)
	}
}
