package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// ListProjectsParams are knowmind_list_projects' parameters (none).
type ListProjectsParams struct{}

// ListProjectsResult lists the projects, by handle.
type ListProjectsResult struct {
	Projects []knowmind.Project `json:"projects"`
}

func (s *service) listProjects(ctx context.Context, _ ListProjectsParams) (ListProjectsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListProjectsResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return ListProjectsResult{}, err
	}
	list, err := t.ListProjects(ctx, scope)
	return ListProjectsResult{Projects: list}, err
}
