package handlers

import (
	"slices"
	"strings"

	"github.com/knowmind/knowmind"
)

// toolsets is the one list of which tool belongs to which toolset (knowmind.AllToolsets). A
// token limited to some toolsets sees and calls only their tools (tools/list shows scope ∩
// toolsets); knowmind_health belongs to none and is always there.
var toolsets = map[string][]string{
	knowmind.ToolsetMemory: {"knowmind_stats", "knowmind_list_recent", "knowmind_recall", "knowmind_recall_at_time",
		"knowmind_link", "knowmind_unlink", "knowmind_store_memory", "knowmind_store_memories", "knowmind_upload_document", "knowmind_update_fact",
		"knowmind_list_relations"},
	knowmind.ToolsetNotes: {"knowmind_start_session", "knowmind_whoami", "knowmind_list_projects", "knowmind_list_notes",
		"knowmind_recent_activity", "knowmind_get_note", "knowmind_search", "knowmind_context", "knowmind_create_note",
		"knowmind_create_notes", "knowmind_edit_note", "knowmind_rename_note", "knowmind_move_note", "knowmind_move_folder", "knowmind_rename_project", "knowmind_delete_note",
		"knowmind_link_note", "knowmind_link_many", "knowmind_remember_about_user", "knowmind_remember_about_project"},
	knowmind.ToolsetEngine: {"knowmind_explore", "knowmind_capture", "knowmind_review_draft", "knowmind_list_drafts",
		"knowmind_list_entities", "knowmind_capture_calibration", "knowmind_set_capture_thresholds", "knowmind_set_goal",
		"knowmind_list_goals", "knowmind_close_goal", "knowmind_briefing", "knowmind_retrieve", "knowmind_replay"},
}

// toolsetOf maps a tool to its toolset ("" for knowmind_health).
var toolsetOf = func() map[string]string {
	m := map[string]string{}
	for set, names := range toolsets {
		for _, n := range names {
			m[n] = set
		}
	}
	return m
}()

// reaches says whether p may see and call tool name.
func reaches(p knowmind.Principal, name string) bool {
	set := toolsetOf[name]
	return set == "" || p.ReachesToolset(set)
}

// instructionSteps are initialize's instructions, per toolset in the recommended call order (seed
// 004's for notes). A step is given to a principal that reaches its toolset and the scope of at
// least one tool it names, so the instructions name the tools tools/list shows it.
var instructionSteps = []struct {
	toolset string
	tools   []string
	text    string
}{
	{"", nil, "knowmind is a long-term memory. Every call works in the workspace of your token."},
	{knowmind.ToolsetNotes, []string{"knowmind_start_session"}, "Notes (a shared knowledge base): call knowmind_start_session " +
		"first in a session (profile, projects, what changed since your last visit)."},
	{knowmind.ToolsetNotes, []string{"knowmind_list_projects"}, "Need a project? knowmind_list_projects; pass its handle verbatim."},
	{knowmind.ToolsetNotes, []string{"knowmind_list_notes", "knowmind_recent_activity"}, "Look around with knowmind_list_notes " +
		"and knowmind_recent_activity."},
	{knowmind.ToolsetNotes, []string{"knowmind_search", "knowmind_context"}, "Before you write, knowmind_search (or knowmind_context " +
		"for a bundle within a token budget)."},
	{knowmind.ToolsetNotes, []string{"knowmind_create_note", "knowmind_edit_note", "knowmind_link_note"}, "Then write: " +
		"knowmind_create_note, knowmind_edit_note (with the versionToken of knowmind_get_note), knowmind_link_note."},
	{knowmind.ToolsetNotes, []string{"knowmind_remember_about_user", "knowmind_remember_about_project"}, "Private memory: " +
		"knowmind_remember_about_user, knowmind_remember_about_project."},
	{knowmind.ToolsetMemory, []string{"knowmind_recall"}, "Memories: knowmind_recall before answering from memory."},
	{knowmind.ToolsetMemory, []string{"knowmind_store_memory", "knowmind_update_fact"}, "Store what should be remembered with " +
		"knowmind_store_memory; a changed fact with knowmind_update_fact."},
	{knowmind.ToolsetEngine, []string{"knowmind_briefing"}, "knowmind_briefing: what is due and relevant now."},
	{knowmind.ToolsetEngine, []string{"knowmind_capture"}, "knowmind_capture turns conversation text into memories or drafts " +
		"(knowmind_list_drafts, knowmind_review_draft)."},
	{knowmind.ToolsetEngine, []string{"knowmind_explore"}, "knowmind_explore shows a memory's neighbourhood in the graph."},
}

// instructions is initialize's text for p: the steps of its toolsets it may call.
func (s *service) instructions(p knowmind.Principal) string {
	var parts []string
	for _, step := range instructionSteps {
		if step.toolset != "" && !p.ReachesToolset(step.toolset) {
			continue
		}
		if step.tools != nil && !slices.ContainsFunc(step.tools, func(name string) bool {
			t := s.tools[name]
			return t != nil && (t.Scope == "" || p.Has(t.Scope))
		}) {
			continue
		}
		parts = append(parts, step.text)
	}
	return strings.Join(parts, " ")
}
