package handlers

import (
	"context"
	"strings"

	"github.com/knowmind/knowmind"
)

// rememberAboutProjectTool declares knowmind_remember_about_project (tools.go: toolList).
var rememberAboutProjectTool = declare(tool{
	Name:  "knowmind_remember_about_project",
	Title: "Remember about a project",
	Description: "Adds an observation about a project to your private agent memory under a category. Shared knowledge goes " +
		"to knowmind_create_note.",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetNotes,
}, (*service).rememberAboutProject)

// RememberAboutProjectParams are knowmind_remember_about_project's parameters.
type RememberAboutProjectParams struct {
	Project     string `json:"project" jsonschema:"project handle" validate:"required,notblank,max=64"`
	Observation string `json:"observation" jsonschema:"the fact about the project" validate:"required,notblank,max=4000"`
	Category    string `json:"category,omitempty" jsonschema:"e.g. decisions, conventions (default notes)" validate:"max=100"`
}

func (s *service) rememberAboutProject(ctx context.Context, p RememberAboutProjectParams) (RememberResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RememberResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RememberResult{}, err
	}
	category := strings.TrimSpace(p.Category)
	if category == "" {
		category = "notes"
	}
	return t.Remember(ctx, scope, knowmind.ClassAgentMemory, p.Project, category, p.Observation, actor(ctx))
}
