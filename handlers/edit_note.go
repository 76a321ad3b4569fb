package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// editNoteTool declares knowmind_edit_note (tools.go: toolList).
var editNoteTool = declare(tool{
	Name:  "knowmind_edit_note",
	Title: "Edit a note",
	Description: "Edits a note by words: append, prepend, replace, replaceSection (under heading) or findReplace. Needs " +
		"the versionToken of a fresh knowmind_get_note; the former body is kept as a revision.",
	Scope:       knowmind.ScopeWrite,
	Destructive: true, // replace and findReplace overwrite text (kept as a revision)
	Toolset:     knowmind.ToolsetNotes,
}, (*service).editNote)

// EditNoteParams are knowmind_edit_note's parameters.
type EditNoteParams struct {
	ID           string `json:"id" jsonschema:"note id" validate:"required,notblank,max=200"`
	VersionToken string `json:"versionToken" jsonschema:"the versionToken of a fresh knowmind_get_note" validate:"required,notblank,max=100"`
	Op           string `json:"op" jsonschema:"append, prepend, replace, replaceSection or findReplace" validate:"required,oneof=append prepend replace replaceSection findReplace"`
	Content      string `json:"content,omitempty" jsonschema:"the text to insert (findReplace: empty deletes the snippet)"`
	Heading      string `json:"heading,omitempty" jsonschema:"replaceSection: the section's heading" validate:"max=500"`
	Find         string `json:"find,omitempty" jsonschema:"findReplace: a snippet that occurs exactly once" validate:"max=10000"`
}

// EditNoteResult carries the new version token.
type EditNoteResult = knowmind.NoteWriteResult

func (s *service) editNote(ctx context.Context, p EditNoteParams) (EditNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return EditNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return EditNoteResult{}, err
	}
	return t.EditNote(ctx, scope, knowmind.EditNoteInput{ID: p.ID, VersionToken: p.VersionToken, Op: p.Op,
		Content: p.Content, Heading: p.Heading, Find: p.Find, Actor: actor(ctx)})
}
