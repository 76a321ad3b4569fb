package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// searchTool declares knowmind_search (tools.go: toolList).
var searchTool = declare(tool{
	Name:  "knowmind_search",
	Title: "Search notes",
	Description: "Finds by words and meaning what you may see: notes, your private memory and the workspace's memories and " +
		"documents (notes only when you name a project, path or tag, or your token is limited to projects). Ranked snippets, not whole notes (then " +
		"knowmind_get_note); below min_score left out. Search before you write.",
	Scope: knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).search)

// SearchParams are knowmind_search's parameters.
type SearchParams struct {
	Query   string `json:"query" jsonschema:"what to look for, in German or English" validate:"required,notblank,max=4000"`
	Project string `json:"project,omitempty" jsonschema:"only this project" validate:"max=64"`
	Path    string `json:"path,omitempty" jsonschema:"only this folder and its subfolders" validate:"max=300"`
	Tag     string `json:"tag,omitempty" jsonschema:"only notes with this tag" validate:"max=100"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"number of hits, 1 to 25 (default 10)" validate:"omitnil,min=1,max=25"`
	// MinScore is recall's floor.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out hits scoring below this, 0 to 1 (default 0.1; 0 keeps every hit)" validate:"omitnil,min=0,max=1"`
}

// SearchResult holds the ranked snippets; vector is false when the search fell back to full text.
type SearchResult struct {
	Hits   []knowmind.SearchHit `json:"hits"`
	Vector bool                 `json:"vector"`
}

func (s *service) search(ctx context.Context, p SearchParams) (SearchResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	hits, vector, err := t.SearchNotes(ctx, scope, knowmind.SearchQuery{Query: p.Query, Project: p.Project, Path: p.Path,
		Tag: p.Tag, Limit: intOr(p.Limit, knowmind.DefaultSearchLimit), MinScore: floatOr(p.MinScore, knowmind.RecallMinScore)})
	return SearchResult{Hits: hits, Vector: vector}, err
}
