package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// renameNoteTool declares knowmind_rename_note (tools.go: toolList).
var renameNoteTool = declare(tool{
	Name:  "knowmind_rename_note",
	Title: "Rename a note",
	Description: "New title for a note without breaking links: the old title becomes an alias and [[Old]] links are " +
		"rewritten. Needs a fresh versionToken.",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetNotes,
}, (*service).renameNote)

// RenameNoteParams are knowmind_rename_note's parameters.
type RenameNoteParams struct {
	ID           string `json:"id" jsonschema:"id of the note" validate:"required,notblank,max=200"`
	VersionToken string `json:"versionToken" jsonschema:"versionToken of a fresh knowmind_get_note" validate:"required,notblank,max=100"`
	Title        string `json:"title" jsonschema:"the new title (one line, no [ ] | #)" validate:"required,notblank,max=500"`
}

// RenameNoteResult is the renamed note and the notes whose links were rewritten.
type RenameNoteResult = knowmind.RenameResult

func (s *service) renameNote(ctx context.Context, p RenameNoteParams) (RenameNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RenameNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RenameNoteResult{}, err
	}
	return t.RenameNote(ctx, scope, p.ID, p.VersionToken, p.Title, actor(ctx))
}
