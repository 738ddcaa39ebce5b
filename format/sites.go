package format

import (
	"sort"
	"strings"

	"github.com/transcript-tool/transcript-tool/transcript"
)

// fieldSites finds the large fields of an object that holds a tool's
// structured output (pi's details, Claude Code's toolUseResult): strings
// over the threshold are sites, and so are arrays when arrays is set;
// objects are searched depth levels down. Keys in skip are never sites.
func fieldSites(v transcript.Value, at Pointer, threshold int, base Site, depth int, arrays bool, dst []Site, skip ...string) []Site {
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
next:
	for i, m := range members {
		key := m.Key.Text()
		if last[key] != i || m.Value.Len() < threshold || (key == "" && m.Key.Len() != 2) {
			continue // a key without text (a lone surrogate) cannot be named again
		}
		for _, k := range skip {
			if key == k {
				continue next
			}
		}
		switch k := m.Value.Kind(); {
		case k == transcript.String, k == transcript.Array && arrays:
			s := base
			s.Path, s.Value = at.Key(key), m.Value
			if key == "base64" && k == transcript.String {
				s.Image, s.Media = true, DeclaredImage(v)
			}
			dst = append(dst, s)
		case k == transcript.Object:
			dst = fieldSites(m.Value, at.Key(key), threshold, base, depth-1, arrays, dst, skip...)
		case k == transcript.Array:
			dst = elemSites(m.Value, at.Key(key), threshold, base, depth-1, dst, skip...)
		}
	}
	return dst
}

// elemSites finds the large strings in the elements of an array that is
// kept as it is: its strings are sites, its objects and arrays are
// searched depth levels down.
func elemSites(v transcript.Value, at Pointer, threshold int, base Site, depth int, dst []Site, skip ...string) []Site {
	if v.Kind() != transcript.Array || depth == 0 {
		return dst
	}
	v.Elems(func(i int, e transcript.Value) bool {
		if e.Len() < threshold {
			return true
		}
		switch e.Kind() {
		case transcript.String:
			s := base
			s.Path, s.Value = at.Index(i), e
			dst = append(dst, s)
		case transcript.Object:
			dst = fieldSites(e, at.Index(i), threshold, base, depth-1, false, dst, skip...)
		case transcript.Array:
			dst = elemSites(e, at.Index(i), threshold, base, depth-1, dst, skip...)
		}
		return true
	})
	return dst
}

// blockSites finds the payloads in an array of content blocks: the content
// of tool_result blocks (Claude and Anthropic messages) and base64 image
// blocks.
func blockSites(content transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	content.Elems(func(i int, e transcript.Value) bool {
		if e.Len() < threshold || e.Kind() != transcript.Object {
			return true
		}
		t, _ := e.Get("type")
		switch {
		case t.IsString("image"):
			s := base
			s.Path, s.Value, s.Shape = at.Index(i), e, ShapeImageBlock
			dst = append(dst, s)
		case t.IsString("tool_result"):
			s := resultSite(e, base)
			s.Path, s.Shape = at.Index(i).Key("content"), ShapeToolResult
			dst = memberSites(e, "content", threshold, s, dst)
		}
		return true
	})
	return dst
}

// resultSite returns base with the call id and outcome of a tool_result
// block: Anthropic's is_error marks a failed call, a command that exits
// non-zero among them (Claude Code writes is_error:false for the others).
func resultSite(block transcript.Value, base Site) Site {
	id, _ := block.Get("tool_use_id")
	_, marked := block.Get("is_error")
	base.ToolCallID, base.Failed = id.Text(), isTrue(block, "is_error")
	if marked && !base.Failed {
		base.Exit = "0"
	}
	return base
}

// memberSites appends the sites of the members called key of obj, s
// standing for each with its Value set: the last member, which readers
// keep, and every earlier member of that name, which no reader sees but
// which weighs as much (a duplicate key a broken or hostile writer left);
// those at least threshold bytes long. s.Path names the member; an earlier
// one's site counts back from the last in Dup, and adds nothing else to
// the entry (no RefParent).
func memberSites(obj transcript.Value, key string, threshold int, s Site, dst []Site) []Site {
	var vals []transcript.Value
	obj.Members(func(m transcript.Member) bool {
		if m.Key.IsString(key) {
			vals = append(vals, m.Value)
		}
		return true
	})
	for i, v := range vals {
		if v.Len() < threshold {
			continue
		}
		d := s
		d.Value, d.Dup = v, len(vals)-1-i
		if d.Dup > 0 {
			d.RefParent = nil
		}
		dst = append(dst, d)
	}
	return dst
}

// sortSites puts sites in document order.
func sortSites(sites []Site) []Site {
	sort.Slice(sites, func(i, j int) bool { return sites[i].Value.Start < sites[j].Value.Start })
	return sites
}

// DeclaredImage returns the image media type an object declares beside
// its data, or "".
func DeclaredImage(v transcript.Value) string {
	for _, k := range []string{"mimeType", "media_type", "mime_type", "type"} {
		if m, ok := v.Get(k); ok && strings.HasPrefix(m.Text(), "image/") {
			return m.Text()
		}
	}
	return ""
}
