package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/knowmind/knowmind"
)

// reaches says whether p may call tool name: a token limited to some toolsets calls only their
// tools; knowmind_health belongs to none and is always there.
func (s *service) reaches(p knowmind.Principal, name string) bool {
	t := s.tools[name]
	return t == nil || t.Toolset == "" || p.ReachesToolset(t.Toolset)
}

// lists says whether tools/list shows p tool name: the tools of its toolsets, or of
// knowmind.DefaultToolsets for a principal without a list.
func (s *service) lists(p knowmind.Principal, name string) bool {
	t := s.tools[name]
	return t == nil || t.Toolset == "" || p.ListsToolset(t.Toolset)
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
	{knowmind.ToolsetMemory, []string{"knowmind_explore"}, "knowmind_explore shows a memory's neighbourhood in the graph."},
}

// instructions is initialize's text for p: the steps of its toolsets it may call.
func (s *service) instructions(p knowmind.Principal) string {
	var parts []string
	for _, step := range instructionSteps {
		if step.toolset != "" && !p.ListsToolset(step.toolset) {
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

// A client chooses the toolsets of its requests with the X-Knowmind-Toolsets header or the
// endpoint's toolsets query parameter (…/mcp?toolsets=notes,engine, or all), within what its
// token allows; without either it gets the token's list, or knowmind.DefaultToolsets for a
// token without one. Output schemas are left out of tools/list (they double its size) unless
// the client asks with output_schemas=true (header X-Knowmind-Output-Schemas).
const (
	toolsetsHeader      = "X-Knowmind-Toolsets"
	toolsetsQuery       = "toolsets"
	outputSchemasHeader = "X-Knowmind-Output-Schemas"
	outputSchemasQuery  = "output_schemas"
	// maxToolsetsAsked bounds the header's length (a handful of toolset names).
	maxToolsetsAsked = 200
)

// askedToolsets is the toolset list r asks for ("" = none asked).
func askedToolsets(r *http.Request) string {
	if v := r.Header.Get(toolsetsHeader); v != "" {
		return v
	}
	return r.URL.Query().Get(toolsetsQuery)
}

// askedOutputSchemas reports whether r asks tools/list for the tools' output schemas.
func askedOutputSchemas(r *http.Request) bool {
	v := r.Header.Get(outputSchemasHeader)
	if v == "" {
		v = r.URL.Query().Get(outputSchemasQuery)
	}
	ok, _ := strconv.ParseBool(v)
	return ok
}

// selectToolsets is the toolsets a request asking for asked reaches with a token limited to
// limit (nil: no limit). Asking beyond the limit is refused naming what the token reaches, so
// a client learns why a tool is missing instead of seeing a shorter list.
func selectToolsets(limit []string, asked string) ([]string, error) {
	if len(asked) > maxToolsetsAsked {
		return nil, knowmind.InvalidParam("toolsets", "the toolsets asked for are longer than %d characters", maxToolsetsAsked)
	}
	reach := limit
	if reach == nil {
		reach = knowmind.AllToolsets
	}
	var sel []string
	if strings.TrimSpace(asked) == "all" {
		return slices.Clone(reach), nil
	}
	for _, name := range strings.Split(asked, ",") {
		name = strings.TrimSpace(name)
		if name == "" || slices.Contains(sel, name) {
			continue
		}
		if !slices.Contains(knowmind.AllToolsets, name) {
			return nil, knowmind.InvalidParam("toolsets", "unknown toolset %q (%s, or all)", name, strings.Join(knowmind.AllToolsets, ", "))
		}
		if !slices.Contains(reach, name) {
			return nil, knowmind.InvalidParam("toolsets", "this token reaches only the toolsets %s", strings.Join(reach, ", "))
		}
		sel = append(sel, name)
	}
	if len(sel) == 0 {
		return nil, knowmind.InvalidParam("toolsets", "name at least one toolset (%s, or all)", strings.Join(knowmind.AllToolsets, ", "))
	}
	return sel, nil
}
