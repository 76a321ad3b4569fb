package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// BriefingParams are knowmind_briefing's parameters.
type BriefingParams struct {
	Since     string       `json:"since,omitempty" jsonschema:"ISO 8601 time: only memories, drafts and conflicts created since then, goals fired since then (due goals always show)"`
	Entity    *EntityParam `json:"entity,omitempty" jsonschema:"only what is about this entity (type and id or name); due goals always show"`
	MaxTokens *int         `json:"max_tokens,omitempty" jsonschema:"token budget of the briefing's text, 100 to 20,000 (default 1,500); items that do not fit are counted as omitted" validate:"omitnil,min=100,max=20000"`
}

// BriefingResult is the extractive briefing.
type BriefingResult = knowmind.Briefing

func (s *service) briefing(ctx context.Context, p BriefingParams) (BriefingResult, error) {
	since, err := parseTime("since", p.Since)
	if err != nil {
		return BriefingResult{}, err
	}
	var ent *knowmind.EntityRef
	if e := p.Entity; e != nil {
		id := e.ID
		if id == "" {
			id = knowmind.EntitySlug(e.Name)
		}
		if id == "" {
			return BriefingResult{}, knowmind.InvalidParam("entity", "entity needs an id or a name")
		}
		ent = &knowmind.EntityRef{Type: e.Type, ID: id}
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return BriefingResult{}, err
	}
	in, err := t.Briefing(ctx, since, ent, intOr(p.MaxTokens, knowmind.DefaultBriefingTokens))
	if err != nil {
		return BriefingResult{}, err
	}
	return knowmind.BuildBriefing(in), nil
}
