package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// StatsParams: knowmind_stats takes no parameters.
type StatsParams struct{}

// StatsResult counts the workspace's memories, edges and chunks.
type StatsResult = knowmind.Stats

// stats reports the corpus size of the caller's tenant.
func (s *service) stats(ctx context.Context, _ StatsParams) (StatsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return StatsResult{}, err
	}
	return t.Stats(ctx)
}
