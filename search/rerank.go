package search

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/rank"
)

// Reranker is what recall needs from a cross-encoder (implemented by package embed): one
// relevance probability (0..1) per passage, in the passages' order.
type Reranker interface {
	Name() string
	Score(ctx context.Context, query string, passages []string) ([]float64, error)
}

// Rerank orders hits by the cross-encoder's probability that each (title and content) answers
// query; that probability becomes the score, graph neighbours staying below the hit that
// reached them (rank.Rerank). from[i] is the fused entry of hits[i].
func Rerank(ctx context.Context, rr Reranker, query string, hits []knowmind.RecallHit, from []rank.Hit) ([]knowmind.RecallHit, error) {
	passages := make([]string, len(hits))
	for i, h := range hits {
		passages[i] = strings.TrimSpace(h.Title + "\n" + h.Content)
	}
	scores, err := rr.Score(ctx, query, passages)
	if err != nil {
		return nil, err
	}
	if len(scores) != len(hits) {
		return nil, fmt.Errorf("reranker returned %d scores for %d passages", len(scores), len(hits))
	}
	order, final := rank.Rerank(from, scores)
	out := make([]knowmind.RecallHit, len(hits))
	for i, j := range order {
		out[i] = hits[j]
		out[i].Score = RoundScore(final[j])
	}
	return out, nil
}

// RoundScore keeps four decimals (scores are for ordering and thresholds, not for more).
// Rounding is monotone, so it never reorders hits.
func RoundScore(s float64) float64 {
	return math.Round(s*10000) / 10000
}

// AboveFloor returns the prefix of hits scoring at least floor: scores fall down the list.
func AboveFloor(hits []knowmind.RecallHit, floor float64) []knowmind.RecallHit {
	for i, h := range hits {
		if h.Score < floor {
			return hits[:i]
		}
	}
	return hits
}
