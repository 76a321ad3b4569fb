package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// listNotesTool declares knowmind_list_notes (tools.go: toolList).
var listNotesTool = declare(tool{
	Name:  "knowmind_list_notes",
	Title: "List a folder",
	Description: "Like ls: the notes directly in a folder of a project (title, id, tags, versionToken) and its subfolders; " +
		"page with cursor.",
	Scope: knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).listNotes)

// ListNotesParams are knowmind_list_notes' parameters.
type ListNotesParams struct {
	Project string `json:"project" jsonschema:"project handle, verbatim from knowmind_list_projects" validate:"required,notblank,max=64"`
	Path    string `json:"path,omitempty" jsonschema:"folder to list, e.g. Kunden/Müller (default: the project's root)" validate:"max=300"`
	Tag     string `json:"tag,omitempty" jsonschema:"only notes with this tag" validate:"max=100"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"notes per page, 1 to 100 (default 50)" validate:"omitnil,min=1,max=100"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page" validate:"max=2000"`
}

// ListNotesResult is one page: the folder's notes by title and its direct subfolders.
type ListNotesResult = knowmind.NoteListing

func (s *service) listNotes(ctx context.Context, p ListNotesParams) (ListNotesResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListNotesResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return ListNotesResult{}, err
	}
	return t.ListNotes(ctx, scope, knowmind.ListNotesQuery{Project: p.Project, Path: p.Path, Tag: p.Tag,
		Limit: intOr(p.Limit, knowmind.DefaultListNotes), Cursor: p.Cursor})
}
