// Package benchgen writes the corpora that `make bench` measures
// transcript-tool on: session transcripts of a chosen total size in the pi /
// OpenClaw and Claude Code formats, whose tool output is sized as in the
// field, and a transcript holding one huge line (Generate); and one Claude
// Code project folder of many sessions that read the same files and run
// the same commands again and again, each result twice on its line, as in
// real project folders (GenerateProject).
//
// # Layout
//
//	DIR/sessions/pi/<project>/<time>_<uuid>.jsonl   pi v3 and OpenClaw sessions
//	DIR/sessions/claude/<project>/<uuid>.jsonl      Claude Code sessions
//	DIR/bigline/big.jsonl                           a line of Options.BigLine bytes
//	DIR/description                                 what was generated, in one line
//	DIR/stamp                                       Stamp(options), written last
//
// The huge line sits in its own directory so that it can be measured alone
// while the other runs read DIR/sessions.
//
// # Payloads
//
// Tool output sizes follow a log-normal law cut to [MinPayload,
// MaxPayload] (median about 680 bytes), tuned so that about a third of the
// payload bytes are in payloads over LargePayload bytes. The text is lines
// of code, logs and prose holding the escapes JSON writers produce (\n, \t,
// \", \\, \u001b) and non-ASCII text (é, 漢字, emoji), written raw as
// JSON.stringify does, or as \u00e9 escapes in the files written in
// Python's ensure_ascii style. Some results are PNG images in base64. Some
// payloads are written twice on their line, as OpenClaw
// (details.aggregated) and Claude Code (toolUseResult) do, and some repeat
// an earlier one, so that deduplication has work to do.
//
// GenerateProject's layout is written on it.
//
// # Determinism
//
// A corpus is a pure function of Options (of Project): the same options give the same
// bytes on every platform. Randomness comes from PCG (math/rand/v2); sizes
// are computed in integer arithmetic, because functions such as math.Exp
// may differ in the last bit between architectures; PNG images are
// assembled here from stored deflate blocks rather than by image/png, whose
// output may change between releases. Version (ProjectVersion) changes
// whenever the bytes for given options change.
//
// # Durability and memory
//
// Generate refuses a directory that exists. Every file is written to a
// temporary file beside it, fsynced, renamed and its directory fsynced; the
// stamp is written last, so a directory with a stamp holds a complete
// corpus. Payloads are streamed through a buffered writer: a payload is a
// function of its seed, so one written twice is generated twice rather than
// held, and memory stays small and constant whatever the sizes.
package benchgen

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/transcript-tool/transcript-tool/internal/safefile"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// Version is the generator's version, part of the stamp: a corpus of an
// older version is generated again.
const Version = 1

// Bounds of the size in bytes of one payload (its JSON bytes, without the
// quotes), and the size above which a payload counts as large.
const (
	MinPayload   = 100
	MaxPayload   = 2_000_000
	LargePayload = 12_000
)

// minBigLine is the smallest huge line Generate writes: the entry's own
// members take a few hundred bytes.
const minBigLine = 1000

// Options says what Generate writes.
type Options struct {
	// Seed selects the corpus.
	Seed uint64
	// Size is the total size in bytes of the session files, reached to
	// within a few payloads.
	Size int64
	// Files is the number of session files; their sizes vary widely.
	Files int
	// BigLine is the length in bytes of the huge line of bigline/big.jsonl
	// (without its newline); 0 writes no such file.
	BigLine int64
}

func (o Options) validate() error {
	switch {
	case o.Files < 1:
		return fmt.Errorf("benchgen: %d files: want at least 1", o.Files)
	case o.Size < 0:
		return fmt.Errorf("benchgen: negative size %d", o.Size)
	case o.BigLine != 0 && o.BigLine < minBigLine:
		return fmt.Errorf("benchgen: a huge line of %d bytes: want 0 or at least %d", o.BigLine, minBigLine)
	}
	return nil
}

// Stamp identifies the corpus Generate writes for o: equal stamps, equal
// bytes.
func Stamp(o Options) string {
	return fmt.Sprintf("benchgen v%d seed=%d size=%d files=%d bigline=%d", Version, o.Seed, o.Size, o.Files, o.BigLine)
}

// Stats describes a generated corpus.
type Stats struct {
	Files       int   // session files
	PiFiles     int   // of which pi / OpenClaw
	ClaudeFiles int   // of which Claude Code
	Bytes       int64 // total size of the session files
	// Payloads counts the payloads of the session files, each time one is
	// written (a payload duplicated on its line counts twice);
	// PayloadBytes is their size in JSON bytes and LargeBytes the part
	// of it in payloads over LargePayload bytes.
	Payloads     int
	PayloadBytes int64
	LargeBytes   int64
	Images       int   // base64 PNG images among the payloads
	BigLine      int64 // length of the huge line, 0 if none
	BigFileBytes int64 // size of bigline/big.jsonl
}

func (s *Stats) addPayload(n int64, image bool) {
	s.Payloads++
	s.PayloadBytes += n
	if n > LargePayload {
		s.LargeBytes += n
	}
	if image {
		s.Images++
	}
}

// LargeFraction is the fraction of payload bytes in payloads over
// LargePayload bytes.
func (s Stats) LargeFraction() float64 {
	if s.PayloadBytes == 0 {
		return 0
	}
	return float64(s.LargeBytes) / float64(s.PayloadBytes)
}

// String describes the corpus in one line.
func (s Stats) String() string {
	d := fmt.Sprintf("%d session files, %.1f MB (%d pi/OpenClaw, %d Claude Code); %d payloads of %d B to %.0f MB making %.0f%% of the bytes, %.1f%% of their bytes in payloads over %d KB, %d of them PNG images",
		s.Files, mb(s.Bytes), s.PiFiles, s.ClaudeFiles, s.Payloads, MinPayload, mb(MaxPayload),
		100*float64(s.PayloadBytes)/float64(max(s.Bytes, 1)), 100*s.LargeFraction(), LargePayload/1000, s.Images)
	if s.BigLine > 0 {
		d += fmt.Sprintf("; bigline/big.jsonl: one line of %.1f MB", mb(s.BigLine))
	}
	return d
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// Generate writes the corpus for o into dir, which must not exist.
func Generate(dir string, o Options) (Stats, error) {
	if err := o.validate(); err != nil {
		return Stats{}, err
	}
	if err := newDir(dir); err != nil {
		return Stats{}, err
	}
	st, err := writeSessions(filepath.Join(dir, "sessions"), o)
	if err != nil {
		return st, err
	}
	if o.BigLine > 0 {
		n, err := writeFile(filepath.Join(dir, "bigline", "big.jsonl"), transcript.StyleJS, nil, func(e *enc) {
			writeBigLine(e, o.Seed, o.BigLine)
		})
		if err != nil {
			return st, err
		}
		st.BigLine, st.BigFileBytes = o.BigLine, n
	}
	if err := writeText(filepath.Join(dir, "description"), st.String()+"\n"); err != nil {
		return st, err
	}
	return st, writeText(filepath.Join(dir, "stamp"), Stamp(o)+"\n")
}

// newDir creates dir, which must not exist, and its parents, durably.
func newDir(dir string) error {
	parent := filepath.Dir(dir)
	if err := safefile.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if err := safefile.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("benchgen: %s exists: the corpus is written into a new directory", dir)
	} else if err != nil {
		return err
	}
	return safefile.SyncDir(parent)
}

// writeFile writes the file name atomically with what fill writes through
// an encoder of style st that counts payloads into stats (when not nil),
// and returns its size.
func writeFile(name string, st transcript.Style, stats *Stats, fill func(*enc)) (int64, error) {
	if err := safefile.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return 0, err
	}
	f, err := safefile.Create(name, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	e := newEnc(f, st, stats)
	fill(e)
	if err := e.flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", name, err)
	}
	return e.pos(), f.Commit()
}

func writeText(name, text string) error {
	_, err := writeFile(name, transcript.StyleJS, nil, func(e *enc) { e.raw(text) })
	return err
}
