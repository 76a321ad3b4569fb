package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

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
	return t.MoveNote(ctx, scope, p.ID, p.VersionToken, p.Path, actor(ctx, "knowmind_move_note"))
}
