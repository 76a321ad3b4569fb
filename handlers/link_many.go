package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// linkManyTool declares knowmind_link_many (tools.go: toolList).
var linkManyTool = declare(tool{
	Name:        "knowmind_link_many",
	Title:       "Add several links",
	Description: "knowmind_link_note for up to 100 links in one call; an existing link is not doubled; results[] per item.",
	Scope:       knowmind.ScopeWrite,
	Idempotent:  true,
	Toolset:     knowmind.ToolsetNotes,
}, (*service).linkMany)

// LinkManyParams are knowmind_link_many's parameters: each link as knowmind_link_note's.
type LinkManyParams struct {
	Links []LinkNoteParams `json:"links" jsonschema:"each as knowmind_link_note takes it" validate:"required,min=1,max=100,dive"`
}

func (s *service) linkMany(ctx context.Context, p LinkManyParams) (BatchResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return BatchResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return BatchResult{}, err
	}
	return s.batch(ctx, len(p.Links), func(i int) (knowmind.NoteWriteResult, error) {
		l := p.Links[i]
		return t.LinkNote(ctx, scope, l.From, knowmind.LinkSpec{RelType: l.RelType, To: l.To, ToTitle: l.ToTitle})
	})
}
