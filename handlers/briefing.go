package handlers

import (
	"context"
	"fmt"

	"github.com/knowmind/knowmind"
)

// briefingTool declares knowmind_briefing (tools.go: toolList).
var briefingTool = declare(tool{
	Name:  "knowmind_briefing",
	Title: "Briefing",
	Description: "What to know now: due and fired goals, open conflicts and drafts, recent memories, within a token " +
		"budget; extractive, or written by a model when one is configured.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetEngine,
}, (*service).briefing)

// BriefingParams are knowmind_briefing's parameters.
type BriefingParams struct {
	Since     string       `json:"since,omitempty" jsonschema:"ISO 8601 time: only what was created or fired since then"`
	Entity    *EntityParam `json:"entity,omitempty" jsonschema:"only what is about this entity (type and id or name); due goals always show"`
	MaxTokens *int         `json:"max_tokens,omitempty" jsonschema:"token budget of the text (default 1,500)" validate:"omitnil,min=100,max=20000"`
	Mode      string       `json:"mode,omitempty" jsonschema:"llm (a configured model writes the text; then the default) or extractive" validate:"omitempty,oneof=llm extractive"`
}

// BriefingResult is the briefing: the extractive sections always, the text written by the
// model in mode llm.
type BriefingResult = knowmind.Briefing

func (s *service) briefing(ctx context.Context, p BriefingParams) (BriefingResult, error) {
	if p.Mode == knowmind.BriefingLLM && s.engine.briefing == nil {
		return BriefingResult{}, knowmind.InvalidParam("mode", "mode llm needs a model (knowmind serve --llm-url and --llm-model); use extractive")
	}
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
	b := knowmind.BuildBriefing(in)
	w := s.engine.briefing
	if w == nil || p.Mode == knowmind.BriefingExtractive || len(b.Sections) == 0 {
		return b, nil // nothing to write from when no section has items
	}
	text, err := w.WriteBriefing(ctx, b)
	if err != nil {
		if ctx.Err() != nil {
			return BriefingResult{}, ctx.Err()
		}
		s.log.WarnContext(ctx, "briefing model failed; answering the extractive briefing", "model", w.Model(), "err", err)
		b.Fallback = fmt.Sprintf("the model %s failed (%s); this is the extractive briefing", w.Model(), reasonOf(err))
		return b, nil
	}
	b.Mode, b.Model, b.Text, b.Tokens = knowmind.BriefingLLM, w.Model(), text, knowmind.ApproxTokens(text)
	b.Note = "written by the model " + w.Model() + " from the sections' items, which it cites by id; the sections are its sources"
	return b, nil
}

// reasonOf is what a client may read of a model's failure: the refusal's wording, or that
// the provider was unavailable (transport details stay in the log).
func reasonOf(err error) string {
	if e := knowmind.AsError(err); e != nil && e.Code == knowmind.EPROVIDER {
		return "provider unavailable"
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
