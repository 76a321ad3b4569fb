package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// uploadDocumentTool declares knowmind_upload_document (tools.go: toolList).
var uploadDocumentTool = declare(tool{
	Name:  "knowmind_upload_document",
	Title: "Upload a document",
	Description: "Ingests a long text as a document split into sections; an upload with the title of a current document " +
		"replaces it (closed, not erased: its relations move on, as_of reads still see it). For a short fact use " +
		"knowmind_store_memory.",
	Scope: knowmind.ScopeWrite,
	// Replaces (deletes) the previous document of the same title; the
	// same title and content again is recognised (unchanged).
	Idempotent:  true,
	Destructive: true,
	Toolset:     knowmind.ToolsetMemory,
}, (*service).uploadDocument)

// UploadDocumentParams are knowmind_upload_document's parameters. content is
// checked by its precheck (-32603 content_required, too_large), as for
// StoreMemoryParams.
type UploadDocumentParams struct {
	Title   string `json:"title,omitempty" jsonschema:"document title; replaces the current document of this title" validate:"max=500"`
	Content string `json:"content,omitempty" jsonschema:"the document's full text" schema:"required,maxLength=1000000"`
	Source  string `json:"source,omitempty" jsonschema:"where it comes from (URL, path)" validate:"max=2000"`
}

// UploadDocumentResult is the spec's result. replaced_document_ids is always an array;
// unchanged appears (true) only when the same title and content were already the current
// document, which is then returned as it is.
type UploadDocumentResult = knowmind.StoreResult

// uploadDocument ingests a document in the caller's tenant, upserted per
// title: the old versions are closed and superseded once the new one is
// ingested (see graph.Tenant.UploadDocument).
func (s *service) uploadDocument(ctx context.Context, p UploadDocumentParams) (UploadDocumentResult, error) {
	if err := p.precheck(); err != nil {
		return UploadDocumentResult{}, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return UploadDocumentResult{}, err
	}
	res, err := t.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: p.Title, Content: p.Content, Source: p.Source})
	if err != nil {
		return UploadDocumentResult{}, err
	}
	if res.ReplacedDocumentIDs == nil {
		res.ReplacedDocumentIDs = []string{} // the spec's array, never null
	}
	return res, nil
}

func (p UploadDocumentParams) precheck() error { return checkContent(p.Content) }
