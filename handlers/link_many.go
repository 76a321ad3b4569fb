package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// LinkManyParams are knowmind_link_many's parameters: each link as knowmind_link_note's.
type LinkManyParams struct {
	Links []LinkNoteParams `json:"links" jsonschema:"the links to add, 1 to 100, each as knowmind_link_note takes it" validate:"required,min=1,max=100,dive"`
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
