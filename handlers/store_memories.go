package handlers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/knowmind/knowmind"
)

// storeMemoriesTool declares knowmind_store_memories (tools.go: toolList).
var storeMemoriesTool = declare(tool{
	Name:  "knowmind_store_memories",
	Title: "Store many memories",
	Description: "knowmind_store_memory for up to 100 memories in one call: one result per memory in input order (indexed, " +
		"unchanged, or failed with its error).",
	Scope:      knowmind.ScopeWrite,
	Idempotent: true,
	Toolset:    knowmind.ToolsetMemory,
}, (*service).storeMemories)

// StoreMemoriesParams are knowmind_store_memories' parameters: up to
// knowmind.MaxStoreMemoriesItems memories, each with knowmind_store_memory's
// fields. Only the list is checked up front; each item is checked on its own
// and a bad one fails alone in results (best-effort), so item limits are not
// schema constraints.
type StoreMemoriesParams struct {
	Memories []StoreMemoriesItem `json:"memories" jsonschema:"each as knowmind_store_memory takes it" validate:"required,min=1,max=100"`
}

// StoreMemoriesItem is one memory of knowmind_store_memories, its fields as
// knowmind_store_memory's (the list's description says so: the schema repeats no descriptions).
type StoreMemoriesItem struct {
	Title      string   `json:"title,omitempty"`
	Content    string   `json:"content,omitempty"`
	MemoryType string   `json:"memory_type,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Source     string   `json:"source,omitempty"`
	OccurredAt string   `json:"occurred_at,omitempty"`
	Sequence   string   `json:"sequence,omitempty"`
	Position   *int     `json:"position,omitempty"`
}

// StoreMemoriesResult has one entry per memory, in input order, and the counts.
type StoreMemoriesResult struct {
	Results           []StoreMemoriesItemResult `json:"results"`
	Stored            int                       `json:"stored"`
	Unchanged         int                       `json:"unchanged"`
	Failed            int                       `json:"failed"`
	EmbeddingProvider string                    `json:"embedding_provider"`
	// PMMatches: event goals the stored memories fired (knowmind_set_goal); only when some did.
	PMMatches []knowmind.GoalMatch `json:"pm_matches,omitempty"`
}

// StoreMemoriesItemResult is one memory's outcome: status indexed, unchanged
// (the same content was stored already; id is that memory's) or failed with
// the error knowmind_store_memory would have answered.
type StoreMemoriesItemResult struct {
	Index         int        `json:"index"`
	Status        string     `json:"status"`
	ID            string     `json:"id,omitempty"`
	Title         string     `json:"title,omitempty"`
	ChunksWritten int        `json:"chunks_written"`
	Error         *ItemError `json:"error,omitempty"`
}

// ItemError is a failed item's JSON-RPC error (code, message, data), as errors.go maps it.
type ItemError struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// storeMemories stores many memories in the caller's tenant in one transaction, best-effort
// (see graph.Tenant.StoreMemories).
func (s *service) storeMemories(ctx context.Context, p StoreMemoriesParams) (StoreMemoriesResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return StoreMemoriesResult{}, err
	}
	if n := len(p.Memories); n == 0 || n > knowmind.MaxStoreMemoriesItems {
		return StoreMemoriesResult{}, knowmind.InvalidParam("memories", "memories must hold 1 to %d items", knowmind.MaxStoreMemoriesItems)
	}
	// An item whose occurred_at is no time fails alone, as an item the store refuses does.
	items := make([]knowmind.ItemResult, len(p.Memories))
	var ins []knowmind.StoreMemoryInput
	var at []int // the index in p.Memories of each of ins
	ci, _ := ctx.Value(callKey{}).(callInfo)
	for i, m := range p.Memories {
		in := knowmind.StoreMemoryInput{Title: m.Title, Content: m.Content, MemoryType: m.MemoryType, Tags: m.Tags, Source: m.Source,
			Sequence: m.Sequence, Position: m.Position, Writer: ci.principal.TokenID, Session: ci.session}
		if m.OccurredAt != "" {
			when, err := time.Parse(time.RFC3339, m.OccurredAt)
			if err != nil {
				items[i] = knowmind.ItemResult{Status: knowmind.ItemFailed,
					Err: knowmind.InvalidParam("occurred_at", "occurred_at must be an ISO 8601 time such as 2026-03-12T10:00:00Z")}
				continue
			}
			in.OccurredAt = &when
		}
		ins, at = append(ins, in), append(at, i)
	}
	if len(ins) > 0 {
		stored, err := t.StoreMemories(ctx, ins)
		if stored == nil {
			return StoreMemoriesResult{}, err
		}
		for j, it := range stored {
			items[at[j]] = it
		}
	}
	res := StoreMemoriesResult{Results: make([]StoreMemoriesItemResult, len(items)), EmbeddingProvider: t.Provider()}
	for i, it := range items {
		r := StoreMemoriesItemResult{Index: i, Status: it.Status, ID: it.ID, Title: it.Title, ChunksWritten: it.ChunksWritten}
		switch it.Status {
		case knowmind.ItemIndexed:
			res.Stored++
		case knowmind.ItemUnchanged:
			res.Unchanged++
		default:
			res.Failed++
			e := rpcError(ctx, s.log, it.Err)
			r.Error = &ItemError{Code: e.Code, Message: e.Message}
			_ = json.Unmarshal(e.Data, &r.Error.Data)
		}
		res.Results[i] = r
	}
	for _, it := range items {
		res.PMMatches = append(res.PMMatches, it.PMMatches...)
	}
	return res, nil
}
