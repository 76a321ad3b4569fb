package handlers

import "context"

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
	if err := t.TrashNote(ctx, scope, p.ID, p.VersionToken, actor(ctx, "knowmind_delete_note")); err != nil {
		return DeleteNoteResult{}, err
	}
	return DeleteNoteResult{ID: p.ID, Trashed: true}, nil
}
