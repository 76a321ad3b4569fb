package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/shapes"
)

// Export reads a tenant as JSONL records (knowmind export): every project, then every memory,
// document and note, every version and status, then every relation edge between them as it was
// linked (the materialised inverses are not written: import restores them), closed ones
// included, with their validity, then the notes' former bodies, pending links and visits
// (noteexport.go), then every goal and draft (engineimport.go). Vectors are not exported; an
// import embeds the content again with its embedder.

// exportPage is how many memories one export query reads.
const exportPage = 500

// exportMemoriesQuery pages through the memories in uid order.
const exportMemoriesQuery = `query q($after: string, $n: int) {
  m(func: eq(Memory.kind, ["memory", "document", "note"]), first: $n, after: $after) {
    uid Memory.id Memory.kind Memory.title Memory.content Memory.memory_type Memory.tags Memory.source
    Memory.status Memory.created_at Memory.updated_at Memory.valid_from Memory.valid_to Memory.update_reason
    Memory.sequence Memory.position
    Memory.category Memory.confidence Memory.extractor Memory.reviewed_by Memory.reviewed_at
    Memory.entities (orderasc: Entity.key) { Entity.type Entity.id Entity.name }
    ` + exportNoteFields + `
  }
}`

// exportEdgesQuery pages through the memories with their outgoing edges over every relation
// predicate, each with the facets link writes.
var exportEdgesQuery = template.Must(template.New("exportEdges").Parse(`query q($after: string, $n: int) {
  m(func: eq(Memory.kind, ["memory", "document", "note"]), first: $n, after: $after) {
    uid Memory.id
{{- range .}}
    <{{.}}> @filter(eq(Memory.kind, ["memory", "document", "note"])) @facets(created_at: created_at, valid_from: valid_from, valid_to: valid_to, inverse: inverse, confidence: confidence, created_by: created_by, reason: reason) { Memory.id }
{{- end}}
  }
}`))

// Export calls emit with every record of the tenant: projects, then memories, documents and
// notes in uid order, then relations, note history, goals and drafts. It stops at the first
// error emit returns.
func (t *Tenant) Export(ctx context.Context, emit func(knowmind.Record) error) error {
	projects, err := t.exportProjects(ctx, emit)
	if err != nil {
		return err
	}
	err = t.pageMemories(ctx, exportMemoriesQuery, func(raw json.RawMessage) error {
		var m dgMemory
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		if m.Kind == knowmind.KindNote {
			var n dgNote
			if err := json.Unmarshal(raw, &n); err != nil {
				return err
			}
			return emit(noteRecord(m, n))
		}
		created, validFrom, updated := m.CreatedAt, m.ValidFrom, m.UpdatedAt
		engine, err := engineOf(raw)
		if err != nil {
			return err
		}
		return emit(knowmind.Record{
			Type: m.Kind, ID: m.ID, Title: m.Title, Content: m.Content, MemoryType: m.MemoryType,
			Tags: m.Tags, Source: m.Source, Status: m.Status, UpdateReason: m.UpdateReason,
			CreatedAt: &created, UpdatedAt: &updated, ValidFrom: &validFrom, ValidTo: m.ValidTo,
			Sequence: m.Sequence, Position: m.Position, Engine: engine,
		})
	})
	if err != nil {
		return fmt.Errorf("export memories: %w", err)
	}
	rels := make([]string, 0, len(t.c.cfg.Relations))
	for _, r := range t.c.cfg.Relations {
		if shapes.ValidName(r) == nil { // never splice anything else into DQL
			rels = append(rels, r)
		}
	}
	var q strings.Builder
	if err := exportEdgesQuery.Execute(&q, rels); err != nil {
		return err
	}
	err = t.pageMemories(ctx, q.String(), func(raw json.RawMessage) error {
		var node map[string]json.RawMessage
		if err := json.Unmarshal(raw, &node); err != nil {
			return err
		}
		var from string
		if err := json.Unmarshal(node["Memory.id"], &from); err != nil {
			return err
		}
		for _, rel := range rels {
			edges, ok := node[rel]
			if !ok {
				continue
			}
			var out []struct {
				edgeFacets
				PeerID string `json:"Memory.id"`
			}
			if err := json.Unmarshal(edges, &out); err != nil {
				return fmt.Errorf("decode %s: %w", rel, err)
			}
			for _, e := range out {
				if e.Inverse || e.PeerID == "" {
					continue // the materialised direction, or a peer that is no memory
				}
				created := createdOr(&e.edgeFacets, time.Time{})
				validFrom := created
				if e.ValidFrom != nil {
					validFrom = *e.ValidFrom
				}
				if err := emit(knowmind.Record{Type: knowmind.RecordRelation, From: from, To: e.PeerID, RelType: rel,
					EdgeID: EdgeID(from, rel, e.PeerID), CreatedAt: &created, ValidFrom: &validFrom, ValidTo: e.ValidTo,
					Confidence: e.Confidence, CreatedBy: e.CreatedBy, Reason: e.Reason}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("export relations: %w", err)
	}
	if err := t.exportNoteHistory(ctx, projects, emit); err != nil {
		return err
	}
	if err := t.exportGoalsAndDrafts(ctx, emit); err != nil {
		return err
	}
	return t.exportEngineState(ctx, emit)
}

// pageMemories runs q (a block m with $after and $n) page by page and calls each with every node.
func (t *Tenant) pageMemories(ctx context.Context, q string, each func(json.RawMessage) error) error {
	after := "0x0"
	for {
		var out struct {
			M []json.RawMessage `json:"m"`
		}
		if err := t.queryVars(ctx, q, map[string]string{"$after": after, "$n": strconv.Itoa(exportPage)}, &out); err != nil {
			return err
		}
		for _, raw := range out.M {
			if err := each(raw); err != nil {
				return err
			}
		}
		if len(out.M) < exportPage {
			return nil
		}
		var last struct {
			UID string `json:"uid"`
		}
		if err := json.Unmarshal(out.M[len(out.M)-1], &last); err != nil {
			return err
		}
		after = last.UID
	}
}

// engineOf is what the memory engine recorded on an exported memory (nil: nothing).
func engineOf(raw json.RawMessage) (*knowmind.MemoryEngine, error) {
	var m struct {
		Category   string     `json:"Memory.category"`
		Confidence float64    `json:"Memory.confidence"`
		Extractor  string     `json:"Memory.extractor"`
		ReviewedBy string     `json:"Memory.reviewed_by"`
		ReviewedAt *time.Time `json:"Memory.reviewed_at"`
		Entities   []struct {
			Type string `json:"Entity.type"`
			ID   string `json:"Entity.id"`
			Name string `json:"Entity.name"`
		} `json:"Memory.entities"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.Extractor == "" && m.Category == "" && len(m.Entities) == 0 && m.ReviewedBy == "" {
		return nil, nil
	}
	e := &knowmind.MemoryEngine{Category: m.Category, Confidence: m.Confidence, Extractor: m.Extractor,
		ReviewedBy: m.ReviewedBy, ReviewedAt: m.ReviewedAt}
	for _, en := range m.Entities {
		e.Entities = append(e.Entities, knowmind.EngineEntity{Type: en.Type, ID: en.ID, Name: en.Name})
	}
	return e, nil
}
