package registry

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/bytedance/sonic"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
)

// Record is one line of the registry: where an artifact came from.
type Record struct {
	Hash       string `json:"hash"`
	Size       int64  `json:"size"`
	Media      string `json:"media"`
	Site       string `json:"site"`
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Session    string `json:"session,omitempty"`
	Source     string `json:"source,omitempty"`
	Entry      string `json:"entry,omitempty"`
	Line       int    `json:"line,omitempty"`
	CreatedAt  string `json:"createdAt"`
	Summary    string `json:"summary,omitempty"`
}

var api = sonic.ConfigStd

// RegistryPath returns the path of the store's registry file.
func (s *Store) RegistryPath() string { return filepath.Join(s.dir, RegistryFile) }

// Append adds records to the registry, one write per line, under an
// exclusive lock, and fsyncs it. A torn last line left by an earlier crash is
// first moved to a file beside the registry and cut off.
//
// A record the registry already holds, the same in every field but its
// creation time, is not appended again: a run that was killed after its
// append and is run again, or a transcript rehydrated and migrated again,
// leaves the registry as one run would. The Store remembers the records it
// has read, so each Append reads only the lines added since the last one.
func (s *Store) Append(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	// A record keeps its artifact from a collector only once the registry
	// holds it: until then the lock does (see holdShared).
	if err := s.holdShared(); err != nil {
		return err
	}
	// The objects the records name are durable before the records are.
	if err := s.Sync(); err != nil {
		return err
	}
	if err := s.checkDurable(recs); err != nil {
		return err
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	path := s.RegistryPath()
	_, statErr := os.Stat(path)
	f, err := s.openLocked(os.O_RDWR | os.O_CREATE)
	if err != nil {
		return fmt.Errorf("open registry: %w", err)
	}
	defer f.Close()
	created := os.IsNotExist(statErr)
	if created {
		// Past the umask, like every file of the store.
		if err := f.Chmod(filePerm); err != nil {
			return fmt.Errorf("open registry: %w", err)
		}
	}
	end, err := s.repairTail(f.File)
	if err != nil {
		return err
	}
	if err := s.readKnown(f.File, end); err != nil {
		return fmt.Errorf("read registry %s: %w", path, err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return err
	}
	var line []byte
	for _, r := range recs {
		b, err := api.Marshal(r)
		if err != nil {
			return err
		}
		k, err := keyOf(r)
		if err != nil {
			return err
		}
		if s.known[k] {
			continue
		}
		line = append(append(line[:0], b...), '\n')
		if _, err := safefile.Write(f.File, line); err != nil {
			return fmt.Errorf("append to registry %s: %w", path, err)
		}
		s.known[k] = true
		s.knownEnd += int64(len(line))
	}
	if err := safefile.Sync(f.File); err != nil {
		// The lines written may be lost: read them again next time.
		s.known = nil
		return fmt.Errorf("fsync registry %s: %w", path, err)
	}
	if created {
		return safefile.SyncDir(s.dir) // the registry's own entry
	}
	return nil
}

// recordKey identifies a record whatever its creation time.
type recordKey [16]byte

func keyOf(r Record) (recordKey, error) {
	r.CreatedAt = ""
	b, err := api.Marshal(r)
	if err != nil {
		return recordKey{}, err
	}
	sum := sha256.Sum256(b)
	return recordKey(sum[:16]), nil
}

// readKnown adds to s.known the records of f's lines up to end that it has
// not read yet. If f is not the file it read before, or is shorter than
// what it read (replaced or cut by another tool), it starts over.
func (s *Store) readKnown(f *os.File, end int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	if s.known == nil || ino != s.knownIno || end < s.knownEnd {
		s.known, s.knownEnd, s.knownIno = map[recordKey]bool{}, 0, ino
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, s.knownEnd, end-s.knownEnd), 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			// Only whole lines come before end; a bad one is the readers'
			// business, not a record to compare with.
			var r Record
			if api.Unmarshal(line, &r) == nil && r.Hash != "" {
				k, err := keyOf(r)
				if err != nil {
					return err
				}
				s.known[k] = true
			}
			s.knownEnd += int64(len(line))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// repairTail returns the length of f up to its last newline, first setting
// aside and truncating any bytes after it.
func (s *Store) repairTail(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size == 0 {
		return 0, nil
	}
	end, err := lastNewline(f, size)
	if err != nil {
		return 0, err
	}
	if end == size {
		return size, nil
	}
	tail := make([]byte, size-end)
	if _, err := f.ReadAt(tail, end); err != nil {
		return 0, err
	}
	aside := fmt.Sprintf("%s.torn-%s", s.RegistryPath(), strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := safefile.WriteFile(aside, tail, filePerm); err != nil {
		return 0, fmt.Errorf("set aside torn registry tail: %w", err)
	}
	if err := safefile.Truncate(f, end); err != nil {
		return 0, fmt.Errorf("truncate torn registry tail: %w", err)
	}
	return end, safefile.Sync(f)
}

// lastNewline returns the offset just past the last '\n' in f, or 0.
func lastNewline(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for pos := size; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// BadLineError reports a registry line that does not parse.
type BadLineError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *BadLineError) Error() string {
	return fmt.Sprintf("%s:%d: byte %d: bad registry record: %v", e.Path, e.Line, e.Offset, e.Err)
}

func (e *BadLineError) Unwrap() error { return e.Err }

// recordError says in a few words what is wrong with a registry line that
// did not decode to a record, err being the decoder's error: the fast
// decoder's own message is a dump of the line. The slower standard
// decoder, only on this rare path, tells where the JSON breaks or which
// field has the wrong type.
func recordError(line []byte, err error) error {
	if err == nil {
		return errors.New("a record without a hash")
	}
	var (
		r  Record
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	jerr := json.Unmarshal(line, &r)
	switch {
	case errors.As(jerr, &se):
		return fmt.Errorf("not JSON (at byte %d of the line)", se.Offset)
	case errors.As(jerr, &te) && te.Field != "":
		return fmt.Errorf("not a record: %q is a JSON %s", te.Field, te.Value)
	case errors.As(jerr, &te):
		return fmt.Errorf("not a record: a JSON %s", te.Value)
	}
	return errors.New("not a record")
}

// Records calls fn for every record in the registry, in order. A torn last
// line is skipped; a bad line elsewhere is passed to bad, and reading goes
// on. A missing registry has no records.
func (s *Store) Records(fn func(r Record) error, bad func(*BadLineError)) error {
	return s.RecordsAt(func(r Record, _ int, _ int64) error { return fn(r) }, bad)
}

// RecordsAt is Records for a caller that reports on records: fn is also
// given the record's line number (from 1) and the byte offset where the
// line starts.
func (s *Store) RecordsAt(fn func(r Record, line int, offset int64) error, bad func(*BadLineError)) error {
	if err := notLinked(s.RegistryPath()); err != nil {
		return err
	}
	f, err := os.Open(s.RegistryPath())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var offset int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			return nil // torn tail: a writer will set it aside
		}
		if len(line) > 0 {
			var r Record
			if uerr := api.Unmarshal(line, &r); uerr != nil || r.Hash == "" {
				uerr = recordError(line, uerr)
				if bad != nil {
					bad(&BadLineError{Path: s.RegistryPath(), Line: n, Offset: offset, Err: uerr})
				}
			} else if ferr := fn(r, n, offset); ferr != nil {
				return ferr
			}
			offset += int64(len(line))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
