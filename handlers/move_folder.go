package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// moveFolderTool declares knowmind_move_folder (tools.go: toolList).
var moveFolderTool = declare(tool{
	Name:        "knowmind_move_folder",
	Title:       "Move or rename a folder",
	Description: "Moves or renames a folder with everything in it, all or nothing; ids, titles and links stay.",
	Scope:       knowmind.ScopeWrite,
	Toolset:     knowmind.ToolsetNotes,
}, (*service).moveFolder)

// MoveFolderParams are knowmind_move_folder's parameters.
type MoveFolderParams struct {
	Project string `json:"project" jsonschema:"project handle, verbatim from knowmind_list_projects" validate:"required,notblank,max=64"`
	From    string `json:"from" jsonschema:"the folder to move, e.g. Kunden/Alt" validate:"required,notblank,max=300"`
	To      string `json:"to" jsonschema:"its new path, e.g. Archiv/Kunden; empty string = the project's root" validate:"max=300"`
}

// MoveFolderResult says which notes moved.
type MoveFolderResult = knowmind.MoveFolderResult

func (s *service) moveFolder(ctx context.Context, p MoveFolderParams) (MoveFolderResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return MoveFolderResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return MoveFolderResult{}, err
	}
	return t.MoveFolder(ctx, scope, p.Project, p.From, p.To, actor(ctx))
}
