package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// createNoteTool declares knowmind_create_note (tools.go: toolList).
var createNoteTool = declare(tool{
	Name:  "knowmind_create_note",
	Title: "Create a note",
	Description: "Creates a shared note in a project: body is Markdown starting with \"# Title\", optional YAML frontmatter; " +
		"[[Title]] links become edges (or wait for that note). A title already in the folder is refused (409).",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetNotes,
}, (*service).createNote)

// CreateNoteParams are knowmind_create_note's parameters. The class (user-doc) is the tool's.
type CreateNoteParams struct {
	Project string              `json:"project" jsonschema:"project handle, verbatim from knowmind_list_projects" validate:"required,notblank,max=64"`
	Body    string              `json:"body" jsonschema:"Markdown starting with a # Title line; optional YAML frontmatter before it" validate:"required,notblank"`
	Path    string              `json:"path,omitempty" jsonschema:"folder, e.g. Kunden/Müller (default: the project's root)" validate:"max=300"`
	Type    string              `json:"type,omitempty" jsonschema:"note type, overrides the frontmatter's" validate:"max=100"`
	Tags    []string            `json:"tags,omitempty" jsonschema:"tags, override the frontmatter's" validate:"max=50,dive,notblank,max=100"`
	Links   []knowmind.LinkSpec `json:"links,omitempty" jsonschema:"typed links to add: relType (default REFERENCES) and to (note id) or toTitle" validate:"max=50"`
}

// CreateNoteResult names the note, its version token and what its links became.
type CreateNoteResult = knowmind.NoteWriteResult

func (s *service) createNote(ctx context.Context, p CreateNoteParams) (CreateNoteResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return CreateNoteResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return CreateNoteResult{}, err
	}
	return t.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: p.Project, Body: p.Body, Path: p.Path,
		Type: p.Type, Tags: p.Tags, Links: p.Links, Class: knowmind.ClassUserDoc, Actor: actor(ctx)})
}
