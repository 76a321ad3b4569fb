package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// whoamiTool declares knowmind_whoami (tools.go: toolList).
var whoamiTool = declare(tool{
	Name:        "knowmind_whoami",
	Title:       "Who am I",
	Description: "Your principal id, ceiling (read, write or admin), projects and the engine's capabilities.",
	Scope:       knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).whoami)

// WhoamiParams are knowmind_whoami's parameters (none).
type WhoamiParams struct{}

// WhoamiResult says who the token is, how far it reaches and what the engine can do.
type WhoamiResult struct {
	Principal string `json:"principal"`
	// Ceiling is the highest scope the token holds: read, write or admin.
	Ceiling      knowmind.Scope        `json:"ceiling"`
	Projects     []string              `json:"projects"`
	Capabilities knowmind.Capabilities `json:"capabilities"`
}

func (s *service) whoami(ctx context.Context, _ WhoamiParams) (WhoamiResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return WhoamiResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return WhoamiResult{}, err
	}
	list, err := t.ListProjects(ctx, scope)
	if err != nil {
		return WhoamiResult{}, err
	}
	ci, _ := ctx.Value(callKey{}).(callInfo)
	res := WhoamiResult{Principal: scope.Principal, Ceiling: knowmind.ScopeRead, Projects: []string{}, Capabilities: s.workspaces.Capabilities()}
	for _, sc := range []knowmind.Scope{knowmind.ScopeWrite, knowmind.ScopeAdmin} {
		if ci.principal.Has(sc) {
			res.Ceiling = sc
		}
	}
	for _, p := range list {
		res.Projects = append(res.Projects, p.Handle)
	}
	return res, nil
}
