package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// statsTool declares knowmind_stats (tools.go: toolList).
var statsTool = declare(tool{
	Name:        "knowmind_stats",
	Title:       "Corpus statistics",
	Description: "Counts of the workspace's memories, relations and indexed chunks.",
	Scope:       knowmind.ScopeRead,
	ReadOnly:    true,
	Toolset:     knowmind.ToolsetMemory,
}, (*service).stats)

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
