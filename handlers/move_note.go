package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// moveNoteTool declares knowmind_move_note (tools.go: toolList).
var moveNoteTool = declare(tool{
	Name:        "knowmind_move_note",
	Title:       "Move a note",
	Description: "Moves a note to another folder of its project; id, title and links stay. Needs a fresh versionToken.",
	Scope:       knowmind.ScopeWrite,
	Toolset:     knowmind.ToolsetNotes,
}, (*service).moveNote)

// MoveNoteParams are knowmind_move_note's parameters.
type MoveNoteParams struct {
	ID           string `json:"id" jsonschema:"id of the note" validate:"required,notblank,max=200"`
	VersionToken string `json:"versionToken" jsonschema:"versionToken of a fresh knowmind_get_note" validate:"required,notblank,max=100"`
	Path         string `json:"path" jsonschema:"target folder in the note's project, e.g. Archiv/2025; empty string = the project's root" validate:"max=300"`
}

// MoveNoteResult is the moved note with its new versionToken.
type MoveNoteResult = knowmind.NoteWriteResult

func (s *service) moveNote(ctx context.Context, p MoveNoteParams) (MoveNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return MoveNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return MoveNoteResult{}, err
	}
	return t.MoveNote(ctx, scope, p.ID, p.VersionToken, p.Path, actor(ctx))
}
