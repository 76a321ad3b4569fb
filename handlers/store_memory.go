package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/knowmind/knowmind"
)

// storeMemoryTool declares knowmind_store_memory (tools.go: toolList).
var storeMemoryTool = declare(tool{
	Name:  "knowmind_store_memory",
	Title: "Store a memory",
	Description: "Remember a fact, decision or preference for later: stores a new memory, never replaces one (an update: " +
		"knowmind_update_fact; a long text: knowmind_upload_document). Content already stored answers unchanged: true.",
	Scope: knowmind.ScopeWrite,
	// The same arguments again find the stored content by its SHA-256.
	Idempotent: true,
	Toolset:    knowmind.ToolsetMemory,
}, (*service).storeMemory)

// StoreMemoryParams are knowmind_store_memory's parameters. content is
// required in the schema, but the spec answers its absence with -32603
// content_required (and a too long one with too_large), not -32602, so its
// precheck answers those before the SDK's schema check (see publish).
//
// sequence and position place the memory in a sequence — a conversation's turns, a document's
// parts, one session's notes — so that recall also scores it by the memory before it (a reply
// by the question it answers): sequence is the caller's key (at most MaxSequenceChars),
// position its place 0..MaxSequencePosition, by default the next after the sequence's last.
// A position without a sequence is -32602. Without a sequence the memory joins the token's
// implicit sequence in this MCP session (knowmind.ImplicitSequenceGap): turns stored one by
// one read as one conversation, and two conversations of one token at once as two.
type StoreMemoryParams struct {
	Title      string        `json:"title,omitempty" jsonschema:"short title" validate:"max=500"`
	Content    string        `json:"content,omitempty" jsonschema:"the full text" schema:"required,maxLength=1000000"`
	MemoryType string        `json:"memory_type,omitempty" jsonschema:"default semantic" validate:"omitempty,oneof=semantic episodic procedural reference"`
	Tags       []string      `json:"tags,omitempty" jsonschema:"keywords for filtering" validate:"max=50,dive,notblank,max=100"`
	Source     string        `json:"source,omitempty" jsonschema:"where it comes from, free text" validate:"max=2000"`
	OccurredAt string        `json:"occurred_at,omitempty" jsonschema:"ISO 8601 time it is about (default now)" validate:"max=64"`
	Sequence   string        `json:"sequence,omitempty" jsonschema:"conversation/document it is part of" validate:"max=200"`
	Position   *int          `json:"position,omitempty" jsonschema:"place in it (default next)"`
	Entities   []EntityParam `json:"entities,omitempty" jsonschema:"what it is about; contradictions are reported" validate:"max=20,dive"`
}

// EntityParam names an entity: its type and its id or name.
type EntityParam struct {
	Type string `json:"type" jsonschema:"entity type, e.g. person" validate:"required,notblank,max=64"`
	ID   string `json:"id,omitempty" jsonschema:"slug, e.g. lisa-mueller (default from name)" validate:"max=200"`
	Name string `json:"name,omitempty" jsonschema:"display name, e.g. Lisa Müller" validate:"max=200"`
}

// StoreMemoryResult is the spec's result plus unchanged (true when the same content was
// already stored: nothing was written and id is that memory's), a note when that memory has
// another title, and the entities, conflicts and fired goals.
type StoreMemoryResult = knowmind.StoreResult

// storeMemory stores a new memory in the caller's tenant (append-only,
// idempotent by content; see graph.Tenant.StoreMemory). A failed ingest is
// -32603 ingest_failed, the memory kept with status failed.
func (s *service) storeMemory(ctx context.Context, p StoreMemoryParams) (StoreMemoryResult, error) {
	if err := p.precheck(); err != nil {
		return StoreMemoryResult{}, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return StoreMemoryResult{}, err
	}
	ci, _ := ctx.Value(callKey{}).(callInfo)
	in := knowmind.StoreMemoryInput{Title: p.Title, Content: p.Content, MemoryType: p.MemoryType, Tags: p.Tags, Source: p.Source,
		Sequence: p.Sequence, Position: p.Position, Writer: ci.principal.TokenID, Session: ci.session}
	if p.OccurredAt != "" {
		at, err := time.Parse(time.RFC3339, p.OccurredAt)
		if err != nil {
			return StoreMemoryResult{}, knowmind.InvalidParam("occurred_at", "occurred_at must be an ISO 8601 time such as 2026-03-12T10:00:00Z")
		}
		in.OccurredAt = &at
	}
	if len(p.Entities) > 0 {
		in.EntityTypes, _ = s.engine.vocab.get()
	}
	for _, e := range p.Entities {
		in.Entities = append(in.Entities, knowmind.CandidateEntity{Type: e.Type, ID: e.ID, Name: e.Name})
	}
	res, err := t.StoreMemory(ctx, in)
	if err != nil {
		return StoreMemoryResult{}, err
	}
	if res.Unchanged && p.Title != "" && p.Title != res.Title {
		res.Note = fmt.Sprintf("this content is already stored as memory %s titled %q; nothing was written and that title was kept", res.ID, res.Title)
	}
	return res, nil
}

func (p StoreMemoryParams) precheck() error { return checkContent(p.Content) }
