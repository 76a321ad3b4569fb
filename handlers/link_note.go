package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// linkNoteTool declares knowmind_link_note (tools.go: toolList).
var linkNoteTool = declare(tool{
	Name:  "knowmind_link_note",
	Title: "Link a note",
	Description: "Links a note to another note of its project, by id (to) or title (toTitle: waits until that note " +
		"exists); relType default REFERENCES. Many at once: knowmind_link_many.",
	Scope:      knowmind.ScopeWrite,
	Idempotent: true,
	Toolset:    knowmind.ToolsetNotes,
}, (*service).linkNote)

// LinkNoteParams are knowmind_link_note's parameters (the seed's link): exactly one of to and toTitle.
type LinkNoteParams struct {
	From    string `json:"from" jsonschema:"id of the note the link starts at" validate:"required,notblank,max=200"`
	To      string `json:"to,omitempty" jsonschema:"id of the target note (same project)" validate:"max=200"`
	ToTitle string `json:"toTitle,omitempty" jsonschema:"title of the target note; a forward reference if none has it yet" validate:"max=500"`
	RelType string `json:"relType,omitempty" jsonschema:"relation type from the shapes, default REFERENCES" validate:"max=64"`
}

// LinkNoteResult names the note; links or pendingLinks holds the target.
type LinkNoteResult = knowmind.NoteWriteResult

func (s *service) linkNote(ctx context.Context, p LinkNoteParams) (LinkNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return LinkNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return LinkNoteResult{}, err
	}
	return t.LinkNote(ctx, scope, p.From, knowmind.LinkSpec{RelType: p.RelType, To: p.To, ToTitle: p.ToTitle})
}
