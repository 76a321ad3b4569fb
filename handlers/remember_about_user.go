package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// rememberAboutUserTool declares knowmind_remember_about_user (tools.go: toolList).
var rememberAboutUserTool = declare(tool{
	Name:  "knowmind_remember_about_user",
	Title: "Remember about the user",
	Description: "Adds a lasting observation about the user (preferences, context) to their private profile under a " +
		"category. Shared knowledge goes to knowmind_create_note.",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetNotes,
}, (*service).rememberAboutUser)

// RememberAboutUserParams are knowmind_remember_about_user's parameters.
type RememberAboutUserParams struct {
	Category    string `json:"category" jsonschema:"e.g. preferences, work, communication" validate:"required,notblank,max=100"`
	Observation string `json:"observation" jsonschema:"the lasting fact about the user" validate:"required,notblank,max=4000"`
}

// RememberResult names the private note the observation was appended to.
type RememberResult = knowmind.NoteWriteResult

func (s *service) rememberAboutUser(ctx context.Context, p RememberAboutUserParams) (RememberResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RememberResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RememberResult{}, err
	}
	return t.Remember(ctx, scope, knowmind.ClassUserProfile, "", p.Category, p.Observation, actor(ctx))
}
