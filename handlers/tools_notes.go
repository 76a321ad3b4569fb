package handlers

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// registerNoteTools is the notes toolset (seed 004, docs/notes.md): its list, scopes and static
// descriptions. Note contents never flow into them.
func (s *service) registerNoteTools(srv *mcp.Server) {
}

// noteScope is what the caller may see of notes: its token's projects and its principal.
func noteScope(ctx context.Context) (knowmind.NoteScope, error) {
	ci, ok := ctx.Value(callKey{}).(callInfo)
	if !ok {
		return knowmind.NoteScope{}, errors.New("notes: no authenticated principal in the call context")
	}
	return knowmind.NoteScope{Projects: ci.principal.Projects, Principal: ci.principal.TokenID}, nil
}

// hideNotes keeps recall's results to the notes the caller may see (knowmind_recall and
// knowmind_recall_at_time search the whole tenant, notes included).
func hideNotes(ctx context.Context, t *graph.Tenant, res knowmind.RecallResult, err error) (knowmind.RecallResult, error) {
	if err != nil {
		return res, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return res, err
	}
	res.Hits, err = t.HideNotes(ctx, scope, res.Hits)
	return res, err
}

// checkNoteLink applies the notes' rules (visible, same project) to knowmind_link's ends.
func checkNoteLink(ctx context.Context, t *graph.Tenant, fromID, toID string) error {
	scope, err := noteScope(ctx)
	if err != nil {
		return err
	}
	return t.CheckNoteLink(ctx, scope, fromID, toID)
}

// hideNoteRelations applies the notes' visibility to knowmind_list_relations.
func hideNoteRelations(ctx context.Context, t *graph.Tenant, id string, rels knowmind.RelationsResult) (knowmind.RelationsResult, error) {
	scope, err := noteScope(ctx)
	if err != nil {
		return rels, err
	}
	return t.HideNoteRelations(ctx, scope, id, rels)
}

// actor is who writes through tool: the agent holding the token.
func actor(ctx context.Context, tool string) knowmind.Actor {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return knowmind.Actor{Principal: ci.principal.TokenID, Via: tool}
}
