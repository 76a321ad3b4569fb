package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// createNotesTool declares knowmind_create_notes (tools.go: toolList).
var createNotesTool = declare(tool{
	Name:  "knowmind_create_notes",
	Title: "Create several notes",
	Description: "knowmind_create_note for up to 50 notes in one call; results[] per item (ok with id and versionToken, or " +
		"its error).",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetNotes,
}, (*service).createNotes)

// CreateNotesParams are knowmind_create_notes' parameters: each item as knowmind_create_note's.
type CreateNotesParams struct {
	Notes []CreateNoteParams `json:"notes" jsonschema:"each as knowmind_create_note takes it" validate:"required,min=1,max=50,dive"`
}

// BatchItemError is one failed item: the error knowmind_create_note or knowmind_link_note would
// have answered for it alone.
type BatchItemError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// BatchItemResult is one item's outcome, by its index in the request.
type BatchItemResult struct {
	Index  int                       `json:"index"`
	OK     bool                      `json:"ok"`
	Result *knowmind.NoteWriteResult `json:"result,omitempty"`
	Error  *BatchItemError           `json:"error,omitempty"`
}

// BatchResult lists every item's outcome in request order; retry only those not ok.
type BatchResult struct {
	Results []BatchItemResult `json:"results"`
	OK      int               `json:"ok"`
	Failed  int               `json:"failed"`
}

func (s *service) createNotes(ctx context.Context, p CreateNotesParams) (BatchResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return BatchResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return BatchResult{}, err
	}
	return s.batch(ctx, len(p.Notes), func(i int) (knowmind.NoteWriteResult, error) {
		n := p.Notes[i]
		return t.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: n.Project, Body: n.Body, Path: n.Path,
			Type: n.Type, Tags: n.Tags, Links: n.Links, Class: knowmind.ClassUserDoc, Actor: actor(ctx)})
	})
}

// batch runs one item after the other; an item's error is its result, not the call's. A
// cancelled call stops (the items not run are not in the results).
func (s *service) batch(ctx context.Context, n int, run func(i int) (knowmind.NoteWriteResult, error)) (BatchResult, error) {
	res := BatchResult{Results: make([]BatchItemResult, 0, n)}
	for i := range n {
		if err := ctx.Err(); err != nil {
			return BatchResult{}, err
		}
		r, err := run(i)
		if err != nil {
			wire := rpcError(ctx, s.log, err)
			item := &BatchItemError{Code: wire.Code, Message: wire.Message}
			if e := knowmind.AsError(err); e != nil {
				item.Param = e.Param
			}
			res.Results = append(res.Results, BatchItemResult{Index: i, Error: item})
			res.Failed++
			continue
		}
		res.Results = append(res.Results, BatchItemResult{Index: i, OK: true, Result: &r})
		res.OK++
	}
	return res, nil
}
