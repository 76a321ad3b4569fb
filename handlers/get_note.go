package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// getNoteTool declares knowmind_get_note (tools.go: toolList).
var getNoteTool = declare(tool{
	Name:  "knowmind_get_note",
	Title: "Get a note",
	Description: "A whole note by id or [[Title]]: content, frontmatter, path and the versionToken an edit needs; detailed " +
		"adds outline, links and former revisions.",
	Scope: knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).getNote)

// GetNoteParams are knowmind_get_note's parameters.
type GetNoteParams struct {
	ID       string `json:"id" jsonschema:"note id, or a wiki ref [[Title]]" validate:"required,notblank,max=200"`
	Project  string `json:"project,omitempty" jsonschema:"project of a wiki ref (default main)" validate:"max=64"`
	Detailed bool   `json:"detailed,omitempty" jsonschema:"add outline, links and revisions"`
}

// GetNoteResult is the note; revisions (detailed only) list former versions without their bodies.
type GetNoteResult struct {
	knowmind.Note
	Revisions []knowmind.Revision `json:"revisions,omitempty"`
}

func (s *service) getNote(ctx context.Context, p GetNoteParams) (GetNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return GetNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return GetNoteResult{}, err
	}
	n, err := t.GetNote(ctx, scope, p.ID, p.Project, p.Detailed)
	if err != nil || !p.Detailed {
		return GetNoteResult{Note: n}, err
	}
	revs, err := t.Revisions(ctx, scope, n.ID)
	for i := range revs {
		revs[i].Content = ""
	}
	return GetNoteResult{Note: n, Revisions: revs}, err
}
