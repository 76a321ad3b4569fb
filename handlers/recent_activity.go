package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// recentActivityTool declares knowmind_recent_activity (tools.go: toolList).
var recentActivityTool = declare(tool{
	Name:  "knowmind_recent_activity",
	Title: "Recent activity",
	Description: "Recently changed shared notes, newest first: who, with which tool and operation, where and when; page " +
		"with cursor.",
	Scope: knowmind.ScopeRead, ReadOnly: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).recentActivity)

// RecentActivityParams are knowmind_recent_activity's parameters.
type RecentActivityParams struct {
	Project string `json:"project,omitempty" jsonschema:"only this project (default: every project of the token)" validate:"max=64"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"notes per page, 1 to 50 (default 20)" validate:"omitnil,min=1,max=50"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page" validate:"max=200"`
}

// RecentActivityResult lists notes by their latest write, newest first.
type RecentActivityResult = knowmind.ActivityPage

func (s *service) recentActivity(ctx context.Context, p RecentActivityParams) (RecentActivityResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RecentActivityResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RecentActivityResult{}, err
	}
	return t.RecentActivity(ctx, scope, p.Project, intOr(p.Limit, knowmind.DefaultActivity), p.Cursor)
}
