package externalizer

import (
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
		msg.Members(func(m transcript.Member) bool {
			// Members in document order keep the sites in order.
			switch {
			case m.Key.IsString("content"):
				if c, _ := msg.Get("content"); c.Start == m.Value.Start && m.Value.Len() >= threshold {
					s := base
					s.Path, s.Value, s.Shape, s.RefParent = at.Key("content"), m.Value, ShapeToolResult, at
					sites = append(sites, s)
				}
			case m.Key.IsString("details"):
				if d, _ := msg.Get("details"); d.Start == m.Value.Start {
					sites = detailSites(m.Value, at.Key("details"), threshold, base, detailsDepth, sites)
				}
			}
			return true
		})
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
	v.Members(func(m transcript.Member) bool {
		if m.Value.Len() < threshold || m.Key.IsString("artifactRef") {
			return true
		}
		key := m.Key.Text()
		if last, _ := v.Get(key); last.Start != m.Value.Start {
			return true // a duplicate key that readers ignore
		}
		switch m.Value.Kind() {
		case transcript.String, transcript.Array:
			s := base
			s.Path, s.Value = at.Key(key), m.Value
			dst = append(dst, s)
		case transcript.Object:
			dst = detailSites(m.Value, at.Key(key), threshold, base, depth-1, dst)
		}
		return true
	})
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
