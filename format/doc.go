// Package format declares, once for each agent, where its transcripts keep
// what the tool works on: how a file of the format is recognised from its
// first entries, which session id an entry carries, where the large
// payloads are (tool results, command output, images), where the tool
// calls are, and where the user's requests are.
//
// # Formats
//
// pi (pi and OpenClaw sessions), claude-code (Claude Code), codex (Codex
// CLI rollouts, the legacy format too), gemini (Gemini CLI), qwen (Qwen
// Code), copilot (GitHub Copilot CLI's events.jsonl) and chat
// (chat-completions style messages), named by the constants Pi,
// ClaudeCode, Codex, Gemini, Qwen, Copilot and Chat and found by Lookup,
// or by Detect from an entry.
//
// # Guarantees
//
// A Format only reads the entry it is given, a transcript.Value whose bytes
// it never changes or keeps, and holds no state: one value serves any
// number of goroutines. Sites come in document order, none inside another,
// each naming its value by a Pointer that resolves in the entry as every
// reader resolves it (the last member of a duplicated key), or by Dup for
// the earlier members that no reader sees. What a format takes from hostile
// input is bounded: depth of the fields searched, length of the texts kept
// for summaries. Entries of shapes a format does not have give no sites, no
// calls and no requests; they are never an error.
//
// The package imports only package transcript and internal helpers, so
// that every reader of transcripts, down to the lowest, can ask it.
package format
