package externalizer

import (
	"sort"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// pi is the session format of pi (v1 to v3) and OpenClaw's file-backed
// sessions: a "session" header line, then entries of which "message"
// entries carry user, assistant, toolResult and bashExecution messages.
type pi struct{}

func (pi) Name() string { return "pi" }

func (pi) Detect(entry transcript.Value) bool {
	t, _ := entry.Get("type")
	return t.IsString("session")
}

func (p pi) Session(entry transcript.Value) string {
	if !p.Detect(entry) {
		return ""
	}
	id, _ := entry.Get("id")
	return id.Text()
}

// detailsDepth bounds how deep payload fields are looked for in details.
const detailsDepth = 3

func (pi) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	if t, _ := entry.Get("type"); !t.IsString("message") {
		return dst
	}
	msg, ok := entry.Get("message")
	if !ok || msg.Kind() != transcript.Object {
		return dst
	}
	idv, _ := entry.Get("id")
	tsv, _ := entry.Get("timestamp")
	base := Site{Entry: idv.Text(), CreatedAt: tsv.Text()}
	at := Pointer{"message"}
	role, _ := msg.Get("role")
	switch {
	case role.IsString("toolResult"):
		details, hasDetails := msg.Get("details")
		if hasDetails && isTrue(details, "openclawSyntheticMissingToolResult") {
			return dst
		}
		name, _ := msg.Get("toolName")
		call, _ := msg.Get("toolCallId")
		base.Tool, base.ToolCallID = name.Text(), call.Text()
		var sites []Site
		if content, ok := msg.Get("content"); ok && content.Len() >= threshold {
			s := base
			s.Path, s.Value, s.Shape, s.RefParent = at.Key("content"), content, ShapeToolResult, at
			sites = append(sites, s)
		}
		if hasDetails {
			sites = detailSites(details, at.Key("details"), threshold, base, detailsDepth, sites)
		}
		sort.Slice(sites, func(i, j int) bool { return sites[i].Value.Start < sites[j].Value.Start })
		return append(dst, sites...)
	case role.IsString("bashExecution"):
		if out, ok := msg.Get("output"); ok && out.Len() >= threshold {
			s := base
			s.Tool, s.Path, s.Value = "bash", at.Key("output"), out
			dst = append(dst, s)
		}
		return dst
	default:
		content, _ := msg.Get("content")
		return imageSites(content, at.Key("content"), threshold, base, dst)
	}
}

// detailSites finds large fields of a tool result's details: strings and
// arrays are sites, objects are searched a few levels down.
func detailSites(v transcript.Value, at Pointer, threshold int, base Site, depth int, dst []Site) []Site {
	if v.Kind() != transcript.Object || depth == 0 {
		return dst
	}
	// Readers keep the last of duplicate keys: find each key's last
	// member in one pass, so that hostile repetition stays linear.
	last := map[string]int{}
	var members []transcript.Member
	v.Members(func(m transcript.Member) bool {
		last[m.Key.Text()] = len(members)
		members = append(members, m)
		return true
	})
	for i, m := range members {
		key := m.Key.Text()
		if last[key] != i || m.Value.Len() < threshold || key == "artifactRef" ||
			(key == "" && m.Key.Len() != 2) {
			continue // a key without text (a lone surrogate) cannot be named again
		}
		switch m.Value.Kind() {
		case transcript.String, transcript.Array:
			s := base
			s.Path, s.Value = at.Key(key), m.Value
			dst = append(dst, s)
		case transcript.Object:
			dst = detailSites(m.Value, at.Key(key), threshold, base, depth-1, dst)
		}
	}
	return dst
}

// imageSites finds large base64 image blocks in a content array.
func imageSites(content transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	content.Elems(func(i int, e transcript.Value) bool {
		if e.Len() >= threshold && e.Kind() == transcript.Object {
			if t, _ := e.Get("type"); t.IsString("image") {
				s := base
				s.Path, s.Value, s.Shape = at.Index(i), e, ShapeImageBlock
				dst = append(dst, s)
			}
		}
		return true
	})
	return dst
}

func isTrue(obj transcript.Value, key string) bool {
	v, ok := obj.Get(key)
	return ok && string(v.Raw()) == "true"
}
