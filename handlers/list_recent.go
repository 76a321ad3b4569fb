package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// listRecentTool declares knowmind_list_recent (tools.go: toolList).
var listRecentTool = declare(tool{
	Name:  "knowmind_list_recent",
	Title: "Recently created entries",
	Description: "Browses what was stored lately: documents and memories, newest first, every version; page with cursor. " +
		"To answer a question use knowmind_recall.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetMemory,
}, (*service).listRecent)

// ListRecentParams are knowmind_list_recent's parameters.
type ListRecentParams struct {
	K      *int   `json:"k,omitempty" jsonschema:"entries per page (default 10)" validate:"omitnil,min=1,max=50"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page" validate:"max=200"`
}

// ListRecentResult lists the newest entries, newest first: count is the
// page's size, total every entry there is, next_cursor (null on the last
// page) continues. Each item's valid_to is null for a current version and
// set for one a newer version superseded.
type ListRecentResult struct {
	Items      []knowmind.RecentItem `json:"items"`
	Count      int                   `json:"count"`
	Total      int                   `json:"total"`
	NextCursor *string               `json:"next_cursor"`
}

// listRecent lists the k most recently created documents and memories of
// the caller's tenant, after cursor.
func (s *service) listRecent(ctx context.Context, p ListRecentParams) (ListRecentResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListRecentResult{}, err
	}
	page, err := t.ListRecentPage(ctx, intOr(p.K, 10), p.Cursor)
	if err != nil {
		return ListRecentResult{}, err
	}
	items := page.Items
	if items == nil {
		items = []knowmind.RecentItem{} // the spec's "items": [], never null
	}
	if err := attachRecentEntities(ctx, t, items); err != nil {
		return ListRecentResult{}, err
	}
	res := ListRecentResult{Items: items, Count: len(items), Total: page.Total}
	if page.NextCursor != "" {
		res.NextCursor = &page.NextCursor
	}
	return res, nil
}
