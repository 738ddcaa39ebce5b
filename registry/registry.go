package registry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bytedance/sonic"
	"github.com/rogpeppe/go-internal/lockedfile"

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
func (s *Store) Append(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := s.mkdirs(filepath.Join(s.dir, ObjectsDir)); err != nil {
		return err
	}
	// The objects the records name are durable before the records are.
	if err := s.Sync(); err != nil {
		return err
	}
	path := s.RegistryPath()
	_, statErr := os.Stat(path)
	f, err := lockedfile.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("open registry: %w", err)
	}
	defer f.Close()
	end, err := s.repairTail(f.File)
	if err != nil {
		return err
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
		line = append(append(line[:0], b...), '\n')
		if _, err := f.Write(line); err != nil {
			return fmt.Errorf("append to registry %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync registry %s: %w", path, err)
	}
	if os.IsNotExist(statErr) {
		return safefile.SyncDir(s.dir) // the registry's own entry
	}
	return nil
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
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("truncate torn registry tail: %w", err)
	}
	return end, f.Sync()
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

// Records calls fn for every record in the registry, in order. A torn last
// line is skipped; a bad line elsewhere is passed to bad, and reading goes
// on. A missing registry has no records.
func (s *Store) Records(fn func(r Record) error, bad func(*BadLineError)) error {
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
				if uerr == nil {
					uerr = errors.New("no hash")
				}
				if bad != nil {
					bad(&BadLineError{Path: s.RegistryPath(), Line: n, Offset: offset, Err: uerr})
				}
			} else if ferr := fn(r); ferr != nil {
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
