package transcript

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// benchLine is a tool-result-like entry with a 1 MB payload full of the
// escapes real tool output has.
var benchLine = toolResult(1 << 20)

// toolResult returns a tool-result-like entry whose payload of about size
// bytes has the escapes and non-ASCII text of real tool output.
func toolResult(size int) []byte {
	payload := strings.Repeat("func main() {\n\tfmt.Println(\"héllo, 世界\")\n}\n", size/48)
	var b []byte
	b = append(b, `{"type":"message","message":{"role":"toolResult","toolName":"read","content":[{"type":"text","text":`...)
	b = AppendEncoded(b, []byte(payload), StyleJS)
	return append(b, `}],"isError":false}}`...)
}

func BenchmarkReader(b *testing.B) {
	input := bytes.Repeat(append(benchLine[:len(benchLine):len(benchLine)], '\n'), 8)
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(input))
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			}
		}
	}
}

func BenchmarkParse(b *testing.B) { benchParse(b, benchLine) }

// benchParse parses line over and over.
func benchParse(b *testing.B, line []byte) {
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Parse(line, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	v, err := Parse(benchLine, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchLine)))
	for b.Loop() {
		msg, _ := v.Get("message")
		if _, ok := msg.Get("content"); !ok {
			b.Fatal("no content")
		}
	}
}

func BenchmarkTextForm(b *testing.B) {
	v, _ := Parse(benchLine, 0)
	msg, _ := v.Get("message")
	content, _ := msg.Get("content")
	block, _ := content.Index(0)
	text, _ := block.Get("text")
	benchTextForm(b, text.Raw())
}

// benchTextForm measures AppendTextForm on the string literal raw.
func benchTextForm(b *testing.B, raw []byte) {
	var buf []byte
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var ok bool
		if buf, _, ok = AppendTextForm(buf[:0], raw); !ok {
			b.Fatal("no text form")
		}
	}
}

// benchPlain is an entry whose 1 MB payload has no escape: base64 data,
// as images are stored.
var benchPlain = func() []byte {
	payload := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk", 1<<20/60)
	return []byte(`{"type":"message","message":{"role":"toolResult","content":[{"type":"image","data":"` + payload + `","mimeType":"image/png"}]}}`)
}()

func BenchmarkParsePlain(b *testing.B) { benchParse(b, benchPlain) }

// BenchmarkTextFormPlain decodes a 1 MB log of long plain lines, an
// escape every 100 bytes or so.
func BenchmarkTextFormPlain(b *testing.B) {
	payload := strings.Repeat("2026-11-21T10:00:00Z INFO server listening on port 8080 with 16 workers and a queue of 1024 jobs\n", 1<<20/100)
	benchTextForm(b, AppendEncoded(nil, []byte(payload), StyleJS))
}

// benchLong is a line of 16 MB, most of it one tool result: a line the
// reader gives as Long, known by its skeleton.
var benchLong = toolResult(16 << 20)

// BenchmarkBuildSkeleton builds the skeleton of benchLong, its SHA-256
// included, from reads of 256 KiB as the long-line path makes them.
func BenchmarkBuildSkeleton(b *testing.B) {
	o := SkeletonOptions{Long: 16 << 10, StubLen: 4096, Max: 1 << 20}
	b.SetBytes(int64(len(benchLong)))
	for b.Loop() {
		if _, err := BuildSkeleton(bytes.NewReader(benchLong), o); err != nil {
			b.Fatal(err)
		}
	}
}
