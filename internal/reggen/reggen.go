// Package reggen writes synthetic registries: segments of many records
// of the shape migrate writes, for tests and benchmarks of readers. It
// writes no objects.
package reggen

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// PerSession is how many records each session of a synthetic registry
// has: records i*PerSession to (i+1)*PerSession-1 are of session "s<i>".
const PerSession = 100

// Hash returns the hash of record i, the SHA-256 of its decimal number.
func Hash(i int) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(i)))
	return hex.EncodeToString(sum[:])
}

// ToolCallID returns the tool call id of record i.
func ToolCallID(i int) string { return fmt.Sprintf("toolu_%08d", i) }

// Session returns the session of record i.
func Session(i int) string { return "s" + strconv.Itoa(i/PerSession) }

// Source returns the transcript of session s.
func Source(s string) string { return "/home/u/.claude/projects/p/" + s + ".jsonl" }

// Write writes n registry lines to w, one record each but every
// seventeenth, which has two places (refs), the second of tool "read".
func Write(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range n {
		s := Session(i)
		if i%17 == 16 {
			fmt.Fprintf(bw, `{"hash":%q,"size":%d,"media":"text/plain; charset=utf-8","tool":"bash","session":%q,"source":%q,"createdAt":"2026-11-21T10:08:%02dZ","summary":"$ ls -la \u2014 exit 0 (%d lines)","refs":[{"site":"/message/content","entry":"e%d","line":%d,"toolCallId":%q},{"site":"/toolUseResult/stdout","entry":"e%d","line":%d,"toolCallId":%q,"tool":"read"}]}`+"\n",
				Hash(i), 5000+i%1000, s, Source(s), i%60, i%100, i, i%PerSession+1, ToolCallID(i), i, i%PerSession+1, ToolCallID(i))
			continue
		}
		fmt.Fprintf(bw, `{"hash":%q,"size":%d,"media":"text/plain; charset=utf-8","site":"/message/content","tool":"bash","toolCallId":%q,"session":%q,"source":%q,"entry":"e%d","line":%d,"createdAt":"2026-11-21T10:08:%02dZ","summary":"$ ls -la \u2014 exit 0 (%d lines)"}`+"\n",
			Hash(i), 5000+i%1000, ToolCallID(i), s, Source(s), i, i%PerSession+1, i%60, i%100)
	}
	return bw.Flush()
}
