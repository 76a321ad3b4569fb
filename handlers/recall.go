package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// RecallParams are knowmind_recall's parameters.
type RecallParams struct {
	Query string `json:"query" jsonschema:"natural-language question" validate:"required,notblank,max=4000"`
	K     *int   `json:"k,omitempty" jsonschema:"number of hits, 1 to 25 (default 5)" validate:"omitnil,min=1,max=25"`
	Hops  *int   `json:"hops,omitempty" jsonschema:"depth of graph hops over the memories' relations, 0 to 3 (default 2)" validate:"omitnil,min=0,max=3"`
}

// RecallResult holds the hits, best first, with scores in 0..1, the time the recall took and
// which reranker ordered them ("none" when none is configured).
type RecallResult = knowmind.RecallResult

// recall searches the caller's tenant by full text (BM25), vectors and graph hops
// (graph.Tenant.Recall). Superseded versions and failed ingests never appear.
func (s *service) recall(ctx context.Context, p RecallParams) (RecallResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RecallResult{}, err
	}
	res, err := t.Recall(ctx, knowmind.RecallQuery{
		Query: p.Query,
		K:     intOr(p.K, knowmind.RecallDefaultK),
		Hops:  intOr(p.Hops, knowmind.RecallDefaultHops),
	})
	if err != nil {
		return res, err
	}
	return res, t.AttachEntities(ctx, res.Hits)
}
