package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// ListRecentParams are knowmind_list_recent's parameters.
type ListRecentParams struct {
	K *int `json:"k,omitempty" jsonschema:"number of newest entries, 1 to 50 (default 10)" validate:"omitnil,min=1,max=50"`
}

// ListRecentResult lists the newest entries, newest first.
type ListRecentResult struct {
	Items []knowmind.RecentItem `json:"items"`
	Count int                   `json:"count"`
}

// listRecent lists the k most recently created documents and memories of
// the caller's tenant.
func (s *service) listRecent(ctx context.Context, p ListRecentParams) (ListRecentResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListRecentResult{}, err
	}
	items, err := t.ListRecent(ctx, intOr(p.K, 10))
	if err != nil {
		return ListRecentResult{}, err
	}
	if items == nil {
		items = []knowmind.RecentItem{} // the spec's "items": [], never null
	}
	if err := attachRecentEntities(ctx, t, items); err != nil {
		return ListRecentResult{}, err
	}
	return ListRecentResult{Items: items, Count: len(items)}, nil
}
