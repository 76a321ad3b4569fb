package graph

// Visibility: every method that takes an id checks the node it reads against the caller's
// scope (knowmind.NoteScope, carried by the context the transport made), before acting and,
// for writes, inside the same transaction. A node the caller may not see — a note of a project
// outside its token, another principal's private note, a note in the trash, any note for a
// token without the notes toolset — gets word for word the answer of an id that does not
// exist, so an answer never tells the one from the other. Memories, documents, goals and drafts
// belong to no project: the tenant's namespace is their bound. Calls from inside the service
// (commands, imports, forward links resolving, tests) carry no scope and see the whole tenant.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/knowmind/knowmind"
)

// callerScope is the scope of the caller ctx carries, nil for calls from inside the service.
func callerScope(ctx context.Context) *knowmind.NoteScope {
	if s, ok := knowmind.NoteScopeFrom(ctx); ok {
		return &s
	}
	return nil
}

// hiddenFrom reports whether scope (nil: the service itself) may not see the note n: outside its
// projects or toolsets, another principal's private note, or in the trash.
func (n dgNote) hiddenFrom(scope *knowmind.NoteScope) bool {
	return scope != nil && (n.Status != knowmind.StatusIndexed || !n.visible(*scope))
}

// noteMetaQuery reads whether an id is a note and what decides who sees it.
const noteMetaQuery = `query q($id: string) {
  n(func: eq(Memory.id, $id), first: 1) @filter(eq(Memory.kind, "note")) {
    Memory.id Memory.status Note.class Note.owner Note.project { uid Project.handle Project.aliases }
  }
}`

// refuseNote is knowmind_update_fact's rule for notes: they keep their revisions through
// knowmind_edit_note, so a note id is refused (-32602), or answered as unknown when the caller
// may not see the note. A memory or an unknown id passes.
func (t *Tenant) refuseNote(ctx context.Context, param, id string) error {
	var out struct{ N []dgNote }
	if err := t.queryVars(ctx, noteMetaQuery, map[string]string{"$id": id}, &out); err != nil {
		return fmt.Errorf("read %s: %w", param, err)
	}
	switch {
	case len(out.N) == 0:
		return nil
	case out.N[0].hiddenFrom(callerScope(ctx)):
		return knowmind.Errorf(knowmind.ENOTFOUND, "memory %q not found", id)
	}
	return knowmind.InvalidParam(param, "%s %q is a note: notes keep their revisions through knowmind_edit_note, not knowmind_update_fact", param, id)
}

// hiddenNotes says which of ids are notes scope may not see (hiddenFrom); nil scope hides none.
func (t *Tenant) hiddenNotes(ctx context.Context, scope *knowmind.NoteScope, ids []string) (map[string]bool, error) {
	hidden := map[string]bool{}
	if scope == nil || len(ids) == 0 {
		return hidden, nil
	}
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = strconv.Quote(id)
	}
	var out struct{ N []dgNote }
	if err := t.queryVars(ctx, fmt.Sprintf(notesMetaQuery, strings.Join(quoted, ", ")), nil, &out); err != nil {
		return nil, fmt.Errorf("note details: %w", err)
	}
	for _, n := range out.N {
		hidden[n.ID] = n.hiddenFrom(scope)
	}
	return hidden, nil
}

// hideRelations leaves out of rels the edges to notes the caller may not see; the memory
// itself hidden is not found.
func (t *Tenant) hideRelations(ctx context.Context, id string, rels knowmind.RelationsResult) (knowmind.RelationsResult, error) {
	scope := callerScope(ctx)
	if scope == nil {
		return rels, nil
	}
	ids := []string{id}
	for _, e := range rels.Outgoing {
		ids = append(ids, e.To)
	}
	for _, e := range rels.Incoming {
		ids = append(ids, e.From)
	}
	hidden, err := t.hiddenNotes(ctx, scope, ids)
	if err != nil {
		return rels, err
	}
	if hidden[id] {
		return knowmind.RelationsResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id", Message: fmt.Sprintf("memory %q not found", id)}
	}
	rels.Outgoing = slices.DeleteFunc(rels.Outgoing, func(e knowmind.OutEdge) bool { return hidden[e.To] })
	rels.Incoming = slices.DeleteFunc(rels.Incoming, func(e knowmind.InEdge) bool { return hidden[e.From] })
	return rels, nil
}

// hideExplored leaves out of an explored neighbourhood the notes the caller may not see, with
// their edges; a hidden centre (or the version asked for) is not found.
func (t *Tenant) hideExplored(ctx context.Context, requested string, res knowmind.ExploreResult) (knowmind.ExploreResult, error) {
	scope := callerScope(ctx)
	if scope == nil {
		return res, nil
	}
	ids := []string{requested, res.Memory.ID}
	for _, n := range res.Nodes {
		ids = append(ids, n.ID)
	}
	hidden, err := t.hiddenNotes(ctx, scope, ids)
	if err != nil {
		return res, err
	}
	if hidden[requested] || hidden[res.Memory.ID] {
		return knowmind.ExploreResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id", Message: fmt.Sprintf("memory %q not found", requested)}
	}
	res.Nodes = slices.DeleteFunc(res.Nodes, func(n knowmind.ExploreNode) bool { return hidden[n.ID] })
	res.Edges = slices.DeleteFunc(res.Edges, func(e knowmind.ExploreEdge) bool { return hidden[e.From] || hidden[e.To] })
	return res, nil
}

// scopeDQL renders what narrows a DQL query to the notes scope may see (hiddenFrom's rule),
// so that a cap (first:) counts only those: blocks bind the variables filter reads, filter
// keeps a note node, and vars adds $owner (the query declares it: ownerParam). A nil scope
// (the service itself) narrows nothing: "", "", and no variables. A scope without the notes
// toolset sees no note: callers answer it before they ask.
func scopeDQL(scope *knowmind.NoteScope) (blocks, filter string, vars map[string]string) {
	if scope == nil {
		return "", "", nil
	}
	owner := `NOT has(Note.owner)`
	if scope.Principal != "" {
		owner, vars = `eq(Note.owner, $owner)`, map[string]string{"$owner": scope.Principal}
	}
	filter = `eq(Memory.kind, "note") AND eq(Memory.status, "indexed") AND (eq(Note.class, "` + knowmind.ClassUserDoc + `") OR ` + owner + `)`
	switch {
	case scope.Projects == nil:
	case len(scope.Projects) == 0:
		filter += ` AND NOT has(Note.project)`
	default:
		handles := make([]string, len(scope.Projects))
		for i, h := range scope.Projects {
			handles[i] = strconv.Quote(h) // quoted literals: DQL variables hold no lists
		}
		list := strings.Join(handles, ", ")
		blocks = `  SCOPEP as var(func: eq(Project.handle, [` + list + `]))
  SCOPEA as var(func: eq(Project.aliases, [` + list + `]))
  var(func: uid(SCOPEP, SCOPEA)) { SCOPEN as ~Note.project }
`
		filter += ` AND (uid(SCOPEN) OR NOT has(Note.project))`
	}
	return blocks, filter, vars
}

// ownerParam declares scopeDQL's variable in a query's head when it has one.
func ownerParam(vars map[string]string) string {
	if _, ok := vars["$owner"]; ok {
		return ", $owner: string"
	}
	return ""
}
