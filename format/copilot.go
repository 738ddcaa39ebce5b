package format

import (
	"github.com/transcript-tool/transcript-tool/transcript"
)

// copilot is GitHub Copilot CLI's session event log
// (~/.copilot/session-state/<session>/events.jsonl, beside workspace.yaml):
// one {"type","data","id","timestamp","parentId"} event a line, the first
// a session.start whose data carries the sessionId. A tool's output sits
// in a tool.execution_complete event: data.result.content, what the model
// is shown, again in full or as a diff in detailedContent, which only the
// timeline shows, and in structured contents blocks; the call itself
// (name, arguments) is in an assistant.message's toolRequests.
type copilot struct{}

func (copilot) Name() string { return Copilot }

// Detect takes an event of a type Copilot CLI 1.0.102 writes, with the
// data and parentId members every event has.
func (c copilot) Detect(entry transcript.Value) bool {
	if !c.Knows(entry) {
		return false
	}
	_, hasData := entry.Get("data")
	_, hasParent := entry.Get("parentId")
	return hasData && hasParent
}

func (copilot) Session(entry transcript.Value) string {
	if t, _ := entry.Get("type"); !t.IsString("session.start") {
		return ""
	}
	id, _ := Pointer{"data", "sessionId"}.Resolve(entry)
	return id.Text()
}

// copilotEvents are the event types of Copilot CLI 1.0.102, from the
// session-events schema its package ships.
var copilotEvents = map[string]bool{
	"abort": true, "agent.interrupted": true, "assistant.fusion_phase_activity": true, "assistant.fusion_phase_completed": true,
	"assistant.fusion_phase_failed": true, "assistant.fusion_phase_started": true, "assistant.idle": true, "assistant.intent": true,
	"assistant.message": true, "assistant.message_delta": true, "assistant.message_start": true, "assistant.reasoning": true,
	"assistant.reasoning_delta": true, "assistant.server_tool_progress": true, "assistant.streaming_delta": true,
	"assistant.tool_call_delta": true, "assistant.turn_end": true, "assistant.turn_retry": true, "assistant.turn_start": true,
	"assistant.usage": true, "auto_mode_switch.completed": true, "auto_mode_switch.requested": true, "capabilities.changed": true,
	"command.completed": true, "command.execute": true, "command.queued": true, "commands.changed": true,
	"elicitation.completed": true, "elicitation.requested": true, "exit_plan_mode.completed": true, "exit_plan_mode.requested": true,
	"external_tool.completed": true, "external_tool.requested": true, "hook.end": true, "hook.progress": true, "hook.start": true,
	"human_response.recorded": true, "mcp.headers_refresh_completed": true, "mcp.headers_refresh_required": true,
	"mcp.oauth_completed": true, "mcp.oauth_recovery_completed": true, "mcp.oauth_required": true, "mcp.prompts.list_changed": true,
	"mcp.resources.list_changed": true, "mcp.tools.list_changed": true, "mcp_app.tool_call_complete": true,
	"model.call_failure": true, "model.call_final_result": true, "model.call_finished": true, "model.call_start": true,
	"pending_messages.modified": true, "permission.assentDetected": true, "permission.carriedForward": true,
	"permission.completed": true, "permission.contextualAuthorization": true, "permission.messageAuthorization": true,
	"permission.messageAuthorizationDegraded": true, "permission.messageAuthorizationRead": true, "permission.requested": true,
	"prompt_cache_break": true, "sampling.completed": true, "sampling.requested": true, "sandbox.decision": true,
	"session.auto_mode_resolved": true, "session.auto_tier_recommendation": true, "session.auto_tier_switch_failed": true,
	"session.autopilot_objective_changed": true, "session.autopilot_stopped": true, "session.background_tasks_changed": true,
	"session.binary_asset": true, "session.canvas.closed": true, "session.canvas.opened": true, "session.canvas.recorded": true,
	"session.canvas.registry_changed": true, "session.canvas.removed": true, "session.canvas.unavailable": true,
	"session.compaction_complete": true, "session.compaction_start": true, "session.completion_receipt": true,
	"session.context_changed": true, "session.context_cleared": true, "session.custom_agents_updated": true,
	"session.custom_notification": true, "session.error": true, "session.extensions.attachments_pushed": true,
	"session.extensions_loaded": true, "session.fusion_change_checkpoint": true, "session.fusion_commit_started": true,
	"session.fusion_completed": true, "session.fusion_handoff": true, "session.fusion_resolved": true,
	"session.fusion_route_failed": true, "session.fusion_route_started": true, "session.handoff": true, "session.idle": true,
	"session.indexed_search": true, "session.info": true, "session.managed_plugin_progress": true,
	"session.managed_settings_enforced": true, "session.managed_settings_resolved": true,
	"session.mcp_server_needs_reconnect": true, "session.mcp_server_removed": true, "session.mcp_server_status_changed": true,
	"session.mcp_server_tools_loaded": true, "session.mcp_servers_loaded": true, "session.memory_changed": true,
	"session.mode_changed": true, "session.mode_notice_delivered": true, "session.model_change": true,
	"session.model_deselected": true, "session.permission_recovery": true, "session.permissions_changed": true,
	"session.plan_changed": true, "session.quota_observation": true, "session.remote_steerable_changed": true,
	"session.request_body_compression_disabled": true, "session.resume": true, "session.schedule_cancelled": true,
	"session.schedule_created": true, "session.schedule_rearmed": true, "session.session_limits_changed": true,
	"session.shutdown": true, "session.skills_loaded": true, "session.snapshot_rewind": true, "session.start": true,
	"session.task_complete": true, "session.title_changed": true, "session.todos_changed": true, "session.tools_updated": true,
	"session.truncation": true, "session.usage_checkpoint": true, "session.usage_info": true, "session.usage_record": true,
	"session.warning": true, "session.workspace_file_changed": true, "session_limits_exhausted.completed": true,
	"session_limits_exhausted.requested": true, "skill.context_delivered": true, "skill.context_delivered_ref": true,
	"skill.invoked": true, "skill.invoked_ref": true, "subagent.completed": true, "subagent.configured": true,
	"subagent.deselected": true, "subagent.failed": true, "subagent.selected": true, "subagent.started": true,
	"system.message": true, "system.notification": true, "tool.execution_complete": true, "tool.execution_partial_result": true,
	"tool.execution_progress": true, "tool.execution_start": true, "tool.shell_output": true, "tool.user_requested": true,
	"tool_search.activated": true, "ui.ephemeral_query": true, "user.message": true, "user_input.completed": true,
	"user_input.requested": true, "workflow.run_settled": true, "workflow.run_started": true, "workflow.run_updated": true,
}

func (copilot) Knows(entry transcript.Value) bool { return knownType(entry, "type", copilotEvents) }

// structuredDepth bounds how deep large fields are looked for in an MCP
// tool's structuredContent.
const structuredDepth = 3

func (copilot) Sites(entry transcript.Value, threshold int, dst []Site) []Site {
	var e [4]transcript.Value
	entry.Fields(e[:], "type", "data", "id", "timestamp")
	base := Site{Entry: e[2].Text(), CreatedAt: e[3].Text(), ViewTool: "view", ViewArg: "path"}
	data := e[1]
	switch t := e[0]; {
	case t.IsString("tool.execution_complete"):
		return copilotResult(data, threshold, base, dst)
	case t.IsString("system.message"):
		// The system prompt, which Copilot builds anew when it resumes a
		// session: it never sends the one a session holds (the model is
		// shown the same request whatever this content says). It writes
		// the prompt again when it differs from the last one written, as
		// a placeholder does: a resumed session gains the prompt once
		// more, which the next migration moves again.
		s := base
		s.Path = Pointer{"data", "content"}
		return memberSites(data, "content", threshold, s, dst)
	case t.IsString("session.binary_asset"):
		// An image a tool or the user gave, once for all the events
		// that name it by assetId.
		return copilotImage(data, Pointer{"data"}, threshold, base, dst)
	case t.IsString("user.message"):
		// An attachment's image data, where Copilot kept it inline
		// rather than in a session.binary_asset.
		atts, _ := data.Get("attachments")
		atts.Elems(func(i int, a transcript.Value) bool {
			dst = copilotImage(a, Pointer{"data", "attachments"}.Index(i), threshold, base, dst)
			return true
		})
	}
	return dst
}

// copilotImage finds the base64 data of a binary asset or blob
// attachment at path at, which is stored as the image's bytes when
// mimeType says it is one.
func copilotImage(v transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	d, ok := v.Get("data")
	if !ok || d.Kind() != transcript.String || d.Len() < threshold {
		return dst
	}
	s := base
	s.Path, s.Value = at.Key("data"), d
	s.Media = DeclaredImage(v)
	s.Image = s.Media != ""
	return append(dst, s)
}

// copilotResult finds the payloads of a tool.execution_complete event's
// data: the result's content, which the model is shown (a resumed session
// too), its detailedContent, the text, output and images of its contents
// blocks, the large fields of an MCP tool's structuredContent; and the
// message of a failed call's error, which the model is shown instead.
func copilotResult(data transcript.Value, threshold int, base Site, dst []Site) []Site {
	if data.Len() < threshold {
		return dst
	}
	var d [5]transcript.Value
	data.Fields(d[:], "toolCallId", "success", "result", "shellExecution", "error")
	result := d[2]
	exit, _ := d[3].Get("exitCode")
	base.ToolCallID, base.Exit = d[0].Text(), exitCode(exit)
	base.Failed = string(d[1].Raw()) == "false" || FailedExit(base.Exit)
	n := len(dst)
	if d[4].Kind() == transcript.Object {
		s := base
		s.Path, s.Shape = Pointer{"data", "error", "message"}, ShapeToolResult
		dst = memberSites(d[4], "message", threshold, s, dst)
	}
	if result.Kind() == transcript.Object {
		at := Pointer{"data", "result"}
		var r [5]transcript.Value
		result.Fields(r[:], "content", "detailedContent", "contents", "structuredContent", "binaryResultsForLlm")
		s := base
		s.Path, s.Shape = at.Key("content"), ShapeToolResult
		dst = memberSites(result, "content", threshold, s, dst)
		if v := r[1]; v.Kind() == transcript.String && v.Len() >= threshold {
			s := base
			s.Path, s.Value = at.Key("detailedContent"), v
			dst = append(dst, s)
		}
		r[2].Elems(func(i int, b transcript.Value) bool {
			if b.Len() >= threshold && b.Kind() == transcript.Object {
				dst = copilotBlock(b, at.Key("contents").Index(i), threshold, base, dst)
			}
			return true
		})
		dst = fieldSites(r[3], at.Key("structuredContent"), threshold, base, structuredDepth, true, dst)
		// Images a tool gave the model, when Copilot kept them inline
		// rather than in a session.binary_asset.
		r[4].Elems(func(i int, b transcript.Value) bool {
			dst = copilotImage(b, at.Key("binaryResultsForLlm").Index(i), threshold, base, dst)
			return true
		})
	}
	sortSites(dst[n:])
	return dst
}

// copilotBlock finds the payloads of one block of a result's contents at
// path at: the text of a text or terminal block, a shell's output preview,
// an embedded resource's text or data, and an image or audio block whole,
// which becomes a text block, a type the contents already take.
func copilotBlock(b transcript.Value, at Pointer, threshold int, base Site, dst []Site) []Site {
	t, _ := b.Get("type")
	field := func(v transcript.Value, at Pointer, key string) {
		if f, ok := v.Get(key); ok && f.Kind() == transcript.String && f.Len() >= threshold {
			s := base
			s.Path, s.Value = at.Key(key), f
			if key == "blob" {
				s.Image, s.Media = true, DeclaredImage(v)
			}
			dst = append(dst, s)
		}
	}
	switch {
	case t.IsString("text"), t.IsString("terminal"):
		field(b, at, "text")
	case t.IsString("shell_exit"):
		field(b, at, "outputPreview")
	case t.IsString("resource"):
		r, _ := b.Get("resource")
		field(r, at.Key("resource"), "text")
		field(r, at.Key("resource"), "blob")
	case t.IsString("image"), t.IsString("audio"):
		s := base
		s.Path, s.Value, s.Shape = at, b, ShapeImageBlock
		dst = append(dst, s)
	}
	return dst
}

// Calls finds the toolRequests of assistant messages, and the calls that
// tool.execution_start events record again (Relayed), the only record
// of a call the user asked for himself.
func (copilot) Calls(entry transcript.Value, fn func(Call)) {
	var e [2]transcript.Value
	entry.Fields(e[:], "type", "data")
	switch t := e[0]; {
	case t.IsString("assistant.message"):
		reqs, _ := e[1].Get("toolRequests")
		reqs.Elems(func(_ int, r transcript.Value) bool {
			var m [3]transcript.Value
			r.Fields(m[:], "toolCallId", "name", "arguments")
			fn(Call{ID: m[0].Text(), Name: m[1].Text(), Input: m[2]})
			return true
		})
	case t.IsString("tool.execution_start"):
		var m [3]transcript.Value
		e[1].Fields(m[:], "toolCallId", "toolName", "arguments")
		fn(Call{ID: m[0].Text(), Name: m[1].Text(), Input: m[2], Relayed: true})
	}
}

// Requests finds the text of user messages as the user wrote it, without
// what Copilot adds for the model (transformedContent).
func (copilot) Requests(entry transcript.Value, fn func(Request)) {
	if t, _ := entry.Get("type"); !t.IsString("user.message") {
		return
	}
	content, _ := Pointer{"data", "content"}.Resolve(entry)
	if content.Kind() == transcript.String {
		request(content.Text(), false, fn)
	}
}
