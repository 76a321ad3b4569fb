package handlers

import (
	"context"
	"errors"

	"github.com/knowmind/knowmind"
)

// noteScope is what the caller may see of notes: its token's projects, principal and toolsets.
func noteScope(ctx context.Context) (knowmind.NoteScope, error) {
	ci, ok := ctx.Value(callKey{}).(callInfo)
	if !ok {
		return knowmind.NoteScope{}, errors.New("notes: no authenticated principal in the call context")
	}
	return scopeOf(ci.principal), nil
}

func scopeOf(p knowmind.Principal) knowmind.NoteScope {
	return knowmind.NoteScope{Projects: p.Projects, Principal: p.TokenID, Toolsets: p.Toolsets}
}

// actor is who writes through the called tool: the agent holding the token.
func actor(ctx context.Context) knowmind.Actor {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return knowmind.Actor{Principal: ci.principal.TokenID, Via: ci.tool}
}
