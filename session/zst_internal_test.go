package session

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/transcript-tool/transcript-tool/internal/sessiongen"
	"github.com/transcript-tool/transcript-tool/transcript"
)

// choppy serves data in reads of random sizes, up to 1 MiB.
type choppy struct {
	data []byte
	r    *rand.Rand
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.r.IntN(1<<20))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestSpool: every line the Reader returns as Long reads back exactly
// from the spool, whatever the sizes of the reads: lines at LongLine and
// just past it, long lines one after the other or between short ones,
// CR LF, and a long last line without a newline.
func TestSpool(t *testing.T) {
	var lines []string
	for i, n := range []int{2, LongLine - 1, LongLine, LongLine + 1, LongLine + 1, LongLine + 5, 5, LongLine, 2 * LongLine} {
		lines = append(lines, strings.Repeat(string(rune('a'+i)), n))
	}
	eols := []string{"\n", "\n", "\n", "\n", "\r\n", "\n", "\n", "\r\n", ""}
	var data []byte
	for i := range lines {
		data = append(data, lines[i]+eols[i]...)
	}
	for seed := range uint64(3) {
		s := &spool{r: &choppy{data: data, r: rand.New(rand.NewPCG(seed, 0))}}
		r := transcript.NewReader(s)
		r.Limit = LongLine
		var long []int
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if !l.Long {
				assert.Equal(t, lines[l.Num-1], string(l.Text))
				continue
			}
			long = append(long, l.Num)
			got, err := io.ReadAll(io.NewSectionReader(s, l.Offset, l.Len))
			require.NoError(t, err)
			assert.True(t, bytes.Equal([]byte(lines[l.Num-1]), got), "line %d does not read back", l.Num)
		}
		s.close()
		assert.Equal(t, []int{5, 6, 9}, long, "the lines the Reader holds no longer")
	}
}

// decodeAll reads a stream through Decoded and returns the reader, still
// held, and what it read.
func decodeAll(t *testing.T, stream []byte) (io.Reader, []byte, func()) {
	t.Helper()
	r, release, err := Decoded(&choppy{data: stream, r: rand.New(rand.NewPCG(1, 2))}, true)
	require.NoError(t, err)
	t.Cleanup(release)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	return r, got, release
}

// TestWindowsFollowed: Decoded follows the frames of real streams, read
// in pieces of any size, and takes from the budget the largest window
// they declare while it holds them: klauspost's frames with checksums
// and compressed blocks, zstd's skippable frames, a single-segment frame,
// and a later frame with a larger window than the first.
func TestWindowsFollowed(t *testing.T) {
	text := bytes.Repeat([]byte(`{"type":"message","text":"some words again and again"}`+"\n"), 20000)
	var enc bytes.Buffer
	e, err := zstd.NewWriter(&enc, zstd.WithWindowSize(1<<20))
	require.NoError(t, err)
	_, err = e.Write(text)
	require.NoError(t, err)
	require.NoError(t, e.Close())
	single := zstd.EncodeTo(nil, text[:5000])
	skippable := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, skippableMagic|3), 5)
	skippable = append(skippable, "hello"...)

	for _, c := range []struct {
		name   string
		stream []byte
		want   []byte
		window int64
	}{
		{"klauspost", enc.Bytes(), text, 1 << 20},
		{"skippable first", append(slices.Clone(skippable), enc.Bytes()...), text, 1 << 20},
		{"single segment", single, text[:5000], 5000},
		{"larger later", slices.Concat(sessiongen.ZstdFrame(text[:3000], 10), skippable, sessiongen.ZstdFrame(text[3000:], 24), single),
			slices.Concat(text, text[:5000]), 16 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, got, release := decodeAll(t, c.stream)
			assert.True(t, bytes.Equal(c.want, got), "decoded bytes differ")
			f := r.(*zstdReader).f
			assert.Equal(t, stepMagic, f.step, "frames lost track of the stream")
			assert.Equal(t, int64(len(c.stream)), f.off)
			assert.Equal(t, c.window, f.held, "window held")
			assert.False(t, windows.TryAcquire(windowBudget-c.window+1), "the window is not taken from the budget")
			release()
			require.True(t, windows.TryAcquire(windowBudget), "the window is not given back")
			windows.Release(windowBudget)
		})
	}
}

// TestWindowBudget: a compressed transcript whose window the budget
// cannot hold beside another's waits until that one is released.
func TestWindowBudget(t *testing.T) {
	stream := sessiongen.ZstdFrame([]byte("{}\n"), 27) // 128 MiB: the whole budget
	_, _, release := decodeAll(t, stream)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, rel, err := Decoded(bytes.NewReader(stream), true)
		if assert.NoError(t, err) {
			_, err = io.ReadAll(r)
			assert.NoError(t, err)
			rel()
		}
	}()
	select {
	case <-done:
		t.Fatal("a second window of 128 MiB was decoded while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the second decoder still waits once the first is released")
	}
}

// TestWindowTooLarge: a frame that declares a window over maxWindow is
// refused as such, at its offset, not decoded (a single segment's
// content size is its window), and Open says so rather than that the
// format is unknown.
func TestWindowTooLarge(t *testing.T) {
	huge := sessiongen.ZstdFrame([]byte(`{"type":"session_meta","payload":{"id":"x"}}`+"\n"), 31)
	fcs := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	fcs = append(fcs, 3<<6|1<<5)                         // single segment, 8-byte content size
	fcs = binary.LittleEndian.AppendUint64(fcs, 200<<20) // 200 MiB
	fcs = append(fcs, 1, 0, 0)                           // an empty last raw block
	for _, c := range []struct {
		name, msg string
		stream    []byte
	}{
		{"window", "zstd frame at byte 0 declares a window of 2 GiB, over the 128 MiB this tool decodes", huge},
		{"content size", "zstd frame at byte 9 declares a window of 200 MiB, over the 128 MiB this tool decodes",
			append(sessiongen.ZstdFrame(nil, 10), fcs...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, release, err := Decoded(bytes.NewReader(c.stream), true)
			require.NoError(t, err)
			_, err = io.ReadAll(r)
			assert.ErrorIs(t, err, ErrWindowTooLarge)
			assert.ErrorContains(t, err, c.msg)
			release()
			require.True(t, windows.TryAcquire(windowBudget), "budget kept after a refused window")
			windows.Release(windowBudget)

			path := filepath.Join(t.TempDir(), "rollout.jsonl.zst")
			require.NoError(t, os.WriteFile(path, c.stream, 0o600))
			_, err = Open(path, "")
			assert.ErrorIs(t, err, ErrWindowTooLarge)
			assert.ErrorContains(t, err, path+": "+c.msg)
		})
	}
}
