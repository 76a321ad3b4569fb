package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// deleteNoteTool declares knowmind_delete_note (tools.go: toolList).
var deleteNoteTool = declare(tool{
	Name:        "knowmind_delete_note",
	Title:       "Move a note to the trash",
	Description: "Moves a note to the trash: gone from search and lists; only a person restores it.",
	Scope:       knowmind.ScopeWrite,
	Idempotent:  true, Destructive: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).deleteNote)

// DeleteNoteParams are knowmind_delete_note's parameters.
type DeleteNoteParams struct {
	ID           string `json:"id" jsonschema:"note id" validate:"required,notblank,max=200"`
	VersionToken string `json:"versionToken,omitempty" jsonschema:"if given, the note must still be at this version" validate:"max=100"`
}

// DeleteNoteResult confirms the move to the trash.
type DeleteNoteResult struct {
	ID      string `json:"id"`
	Trashed bool   `json:"trashed"`
}

func (s *service) deleteNote(ctx context.Context, p DeleteNoteParams) (DeleteNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return DeleteNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return DeleteNoteResult{}, err
	}
	if err := t.TrashNote(ctx, scope, p.ID, p.VersionToken, actor(ctx)); err != nil {
		return DeleteNoteResult{}, err
	}
	return DeleteNoteResult{ID: p.ID, Trashed: true}, nil
}
