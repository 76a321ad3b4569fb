package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// renameProjectTool declares knowmind_rename_project (tools.go: toolList).
var renameProjectTool = declare(tool{
	Name:        "knowmind_rename_project",
	Title:       "Rename a project",
	Description: "Changes a project's handle or name; the old handle stays an alias, links stay.",
	Scope:       knowmind.ScopeWrite,
	Idempotent:  true,
	Toolset:     knowmind.ToolsetNotes,
}, (*service).renameProject)

// RenameProjectParams are knowmind_rename_project's parameters: the project and at least one of
// a new handle and a new name.
type RenameProjectParams struct {
	Project string `json:"project" jsonschema:"the project's handle (or a former one), verbatim from knowmind_list_projects" validate:"required,notblank,max=64"`
	Handle  string `json:"handle,omitempty" jsonschema:"the new handle: lower-case letters, digits, - and _; the old one stays as an alias" validate:"max=64"`
	Name    string `json:"name,omitempty" jsonschema:"the new display name" validate:"max=200"`
}

// RenameProjectResult is the project as it is now, former handles in aliases.
type RenameProjectResult = knowmind.Project

func (s *service) renameProject(ctx context.Context, p RenameProjectParams) (RenameProjectResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RenameProjectResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RenameProjectResult{}, err
	}
	return t.RenameProject(ctx, scope, p.Project, p.Handle, p.Name)
}
