package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// listProjectsTool declares knowmind_list_projects (tools.go: toolList).
var listProjectsTool = declare(tool{
	Name:        "knowmind_list_projects",
	Title:       "My projects",
	Description: "The notes projects this token reaches: handle (pass it verbatim as project), name, note count.",
	Scope:       knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).listProjects)

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
