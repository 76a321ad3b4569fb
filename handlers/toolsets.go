package handlers

import "github.com/knowmind/knowmind"

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
		"knowmind_list_goals", "knowmind_close_goal", "knowmind_briefing"},
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
