package handlers

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
)

// registerNoteTools is the notes toolset (seed 004, docs/notes.md): its list, scopes and static
// descriptions. Note contents never flow into them.
func (s *service) registerNoteTools(srv *mcp.Server) {
	addTool(s, srv, tool{
		Name:  "knowmind_list_projects",
		Title: "My projects",
		Description: "The notes projects this token reaches, each with its handle (pass it verbatim as project), name and " +
			"number of notes. Your private memory is implied by the token and not listed.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.listProjects)
	addTool(s, srv, tool{
		Name:  "knowmind_start_session",
		Title: "Start a session",
		Description: "Call first in a session. Returns the user's profile and your projects; with project also that project's " +
			"index (notes, top-level folders), knownValues (tags, types, categories in use) and delta: the notes others " +
			"created, edited or trashed there since your previous knowmind_start_session with that project. " +
			"Then: knowmind_list_notes or knowmind_recent_activity to look around, knowmind_search before you write.",
		Scope: knowmind.ScopeRead, Idempotent: true,
	}, s.startSession)
	addTool(s, srv, tool{
		Name:  "knowmind_whoami",
		Title: "Who am I",
		Description: "Your principal id, your ceiling (read, write or admin), the projects you reach and the engine's " +
			"capabilities (vector: semantic, lexical or none; trash; revisions).",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.whoami)
	addTool(s, srv, tool{
		Name:  "knowmind_list_notes",
		Title: "List a folder",
		Description: "Like ls: the shared notes directly in a folder of a project (by title, with id, tags and versionToken) " +
			"and its direct subfolders with note counts. Pass nextCursor as cursor for the next page. Not your private memory.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.listNotes)
	addTool(s, srv, tool{
		Name:  "knowmind_recent_activity",
		Title: "Recent activity",
		Description: "Recently changed shared notes, newest first: who (principal, agent or human), how (tool and operation: " +
			"created, edited, trashed), where (project, path) and when. Pass nextCursor as cursor for the next page.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.recentActivity)
	addTool(s, srv, tool{
		Name:  "knowmind_get_note",
		Title: "Get a note",
		Description: "A whole note by id or wiki ref ([[Title]], in project, default main): content, frontmatter, path, class, " +
			"versionToken (needed to edit) and provenance. detailed adds the outline (headings), links (edges in and out, " +
			"pending forward references) and the list of former revisions.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.getNote)
	addTool(s, srv, tool{
		Name:  "knowmind_search",
		Title: "Search notes",
		Description: "Hybrid search (full text in German and English plus vectors, ranked) over everything you may see: the " +
			"notes of your projects, your own memory (knowmind_remember_*) and the workspace's memories and documents " +
			"(knowmind_store_memory, capture, uploads; left out when you name a project, path or tag, or your token is " +
			"limited to projects), each with its kind; never the trash. Returns ranked snippets with score and path, not " +
			"whole notes (use knowmind_get_note). Hits scoring below min_score (default 0.1) are left out: an empty list " +
			"means nothing known. Falls back to full text when vectors are unavailable. Search before you write.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.search)
	addTool(s, srv, tool{
		Name:  "knowmind_context",
		Title: "Context bundle",
		Description: "Gathers context around a topic within a token budget: the most relevant notes, memories and documents " +
			"plus their neighbours in the graph (two hops), best first, cut to budgetTokens (about 4 characters a token). " +
			"Richer than knowmind_search: it returns contents, not snippets, and reports the tokens used. Items scoring " +
			"below min_score (default 0.1) are left out: an empty bundle means nothing known.",
		Scope: knowmind.ScopeRead, ReadOnly: true,
	}, s.context)
	addTool(s, srv, tool{
		Name:  "knowmind_create_note",
		Title: "Create a note",
		Description: "Creates a shared knowledge-base note (class user-doc) in a project. body is Markdown starting with a " +
			"\"# Title\" line (the title); optional YAML frontmatter (type, tags, other keys kept). [[Title]] links become " +
			"REFERENCES edges, or wait as forward references until a note of that title exists. A second note with the same " +
			"title in the same folder is refused (409) naming the existing one.",
		Scope: knowmind.ScopeWrite,
	}, s.createNote)
	addTool(s, srv, tool{
		Name:  "knowmind_edit_note",
		Title: "Edit a note",
		Description: "Edits a note by words, not positions: append, prepend (below the title), replace (the whole body), " +
			"replaceSection (the text under heading), findReplace (one unique snippet find; empty content deletes it). " +
			"Requires the versionToken of a fresh knowmind_get_note: a stale one is refused with versionConflict and the " +
			"current token, nothing overwritten. The former body is kept as a revision.",
		Scope:       knowmind.ScopeWrite,
		Destructive: true, // replace and findReplace overwrite text (kept as a revision)
	}, s.editNote)
	addTool(s, srv, tool{
		Name:  "knowmind_delete_note",
		Title: "Move a note to the trash",
		Description: "Moves a note to the trash: gone from search, recall and lists, but restorable. Only a person can restore " +
			"or empty the trash.",
		Scope:      knowmind.ScopeWrite,
		Idempotent: true, Destructive: true,
	}, s.deleteNote)
	addTool(s, srv, tool{
		Name:  "knowmind_link_note",
		Title: "Link a note",
		Description: "Adds a typed link from a note to another note of the same project: to (a note id) or toTitle (a title; " +
			"a forward reference if no note has it yet, resolved when one is created). relType from the shapes, default REFERENCES.",
		Scope:      knowmind.ScopeWrite,
		Idempotent: true,
	}, s.linkNote)
	addTool(s, srv, tool{
		Name:  "knowmind_rename_note",
		Title: "Rename a note",
		Description: "Gives a note a new title (its \"# Title\" line) without breaking links: the old title becomes an alias, " +
			"and [[Old title]] links in the notes you may see are rewritten to the new title, all in one step or not at " +
			"all. Requires the versionToken of a fresh knowmind_get_note. id and edges stay.",
		Scope: knowmind.ScopeWrite,
	}, s.renameNote)
	addTool(s, srv, tool{
		Name:  "knowmind_move_note",
		Title: "Move a note",
		Description: "Moves a note to another folder of its project; id, title and links stay. Requires the versionToken of " +
			"a fresh knowmind_get_note; a note of the same title in the target folder is refused (409).",
		Scope: knowmind.ScopeWrite,
	}, s.moveNote)
	addTool(s, srv, tool{
		Name:  "knowmind_move_folder",
		Title: "Move or rename a folder",
		Description: "Moves a folder with its subfolders to a new path in the same project (renaming it is a move to a " +
			"sibling path): every note inside moves in one step or none does; ids, titles and links stay. A note title " +
			"already taken at the target is refused (409).",
		Scope: knowmind.ScopeWrite,
	}, s.moveFolder)
	addTool(s, srv, tool{
		Name:  "knowmind_rename_project",
		Title: "Rename a project",
		Description: "Changes a project's handle and/or display name. Link-safe: notes, ids and links stay, and the old " +
			"handle becomes an alias that still resolves (also for tokens limited to it). A handle another project " +
			"holds, now or formerly, is refused (409).",
		Scope:      knowmind.ScopeWrite,
		Idempotent: true,
	}, s.renameProject)
	addTool(s, srv, tool{
		Name:  "knowmind_create_notes",
		Title: "Create several notes",
		Description: "Creates up to 50 notes in one call, each as knowmind_create_note takes it. Best-effort: results[] says " +
			"for each item (by index) ok with its id and versionToken, or the error it alone got; retry only the failed ones.",
		Scope: knowmind.ScopeWrite,
	}, s.createNotes)
	addTool(s, srv, tool{
		Name:  "knowmind_link_many",
		Title: "Add several links",
		Description: "Adds up to 100 typed links in one call, each as knowmind_link_note takes it (from, to or toTitle, " +
			"relType). Best-effort and idempotent: a link that exists is not added twice; results[] reports each by index.",
		Scope:      knowmind.ScopeWrite,
		Idempotent: true,
	}, s.linkMany)
	addTool(s, srv, tool{
		Name:  "knowmind_remember_about_user",
		Title: "Remember about the user",
		Description: "Appends a lasting observation about the user (preferences, context) under a category of the user's " +
			"private profile. Private memory, not shared knowledge; knowmind_search finds it for you only.",
		Scope: knowmind.ScopeWrite,
	}, s.rememberAboutUser)
	addTool(s, srv, tool{
		Name:  "knowmind_remember_about_project",
		Title: "Remember about a project",
		Description: "Appends an observation about a project to your private agent memory (class agent-memory), under a " +
			"category (default notes). Not shared knowledge: for that use knowmind_create_note.",
		Scope: knowmind.ScopeWrite,
	}, s.rememberAboutProject)
}

// noteScope is what the caller may see of notes: its token's projects, principal and toolsets.
func noteScope(ctx context.Context) (knowmind.NoteScope, error) {
	ci, ok := ctx.Value(callKey{}).(callInfo)
	if !ok {
		return knowmind.NoteScope{}, errors.New("notes: no authenticated principal in the call context")
	}
	return scopeOf(ci.principal), nil
}

func scopeOf(p knowmind.Principal) knowmind.NoteScope {
	return knowmind.NoteScope{Projects: p.Projects, Principal: p.TokenID, Toolsets: p.Toolsets}
}

// actor is who writes through tool: the agent holding the token.
func actor(ctx context.Context, tool string) knowmind.Actor {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return knowmind.Actor{Principal: ci.principal.TokenID, Via: tool}
}
