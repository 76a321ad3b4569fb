package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// contextTool declares knowmind_context (tools.go: toolList).
var contextTool = declare(tool{
	Name:  "knowmind_context",
	Title: "Context bundle",
	Description: "The most relevant notes, memories and documents on a topic plus their graph neighbours, as whole " +
		"contents cut to budgetTokens; below min_score left out. Use when you need the text, not only where it is " +
		"(knowmind_search).",
	Scope: knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).context)

// ContextParams are knowmind_context's parameters (the seed's recall).
type ContextParams struct {
	Query        string `json:"query" jsonschema:"the topic" validate:"required,notblank,max=4000"`
	BudgetTokens *int   `json:"budgetTokens,omitempty" jsonschema:"token budget of the bundle (default 4000)" validate:"omitnil,min=100,max=50000"`
	Project      string `json:"project,omitempty" jsonschema:"only this project's notes (leaves out memories and documents)" validate:"max=64"`
	// MinScore is recall's floor.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out items scoring below this (default 0.1; 0 keeps all)" validate:"omitnil,min=0,max=1"`
}

// ContextResult is the bundle: items best first, tokensUsed ≤ budgetTokens.
type ContextResult = knowmind.ContextBundle

func (s *service) context(ctx context.Context, p ContextParams) (ContextResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ContextResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return ContextResult{}, err
	}
	return t.Context(ctx, scope, p.Query, p.Project, intOr(p.BudgetTokens, knowmind.DefaultBudgetTokens),
		floatOr(p.MinScore, knowmind.RecallMinScore))
}
