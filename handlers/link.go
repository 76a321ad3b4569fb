package handlers

import (
	"context"
	"strings"

	"github.com/knowmind/knowmind"
)

// linkTool declares knowmind_link (tools.go: toolList).
var linkTool = declare(tool{
	Name:  "knowmind_link",
	Title: "Link two memories",
	Description: "Relates two memories (A depends on B): adds a typed relation from_id --rel_type--> to_id and its inverse; " +
		"linking twice adds nothing. From a note, to_title may name the target note. Version history is knowmind_update_fact's.",
	More:       func(s *service) string { return " " + relTypesText(s.shapes()) },
	Scope:      knowmind.ScopeWrite,
	Idempotent: true,
	RelTypes:   true,
	Toolset:    knowmind.ToolsetMemory,
}, (*service).link)

// LinkParams are knowmind_link's parameters. Seed 001's memory_link spells
// them source_id, target_id and relation_type (lower case: caused_by,
// contradicts, relates_to); those names are accepted as aliases, the
// relation_type in any case. rel_type stays UPPER_SNAKE_CASE (its schema's enum).
type LinkParams struct {
	FromID  string `json:"from_id,omitempty" jsonschema:"memory id of the source node (required)" validate:"omitempty,notblank,max=200"`
	ToID    string `json:"to_id,omitempty" jsonschema:"memory id of the target node (or give to_title)" validate:"omitempty,notblank,max=200"`
	ToTitle string `json:"to_title,omitempty" jsonschema:"instead of to_id when from_id is a note: a note title of its project (linked once such a note exists)" validate:"omitempty,notblank,max=500"`
	RelType string `json:"rel_type,omitempty" jsonschema:"relation type (required)" validate:"omitempty,notblank,max=64"`
	// Seed 001's names for from_id, to_id and rel_type.
	SourceID     string `json:"source_id,omitempty" jsonschema:"alias of from_id" validate:"omitempty,notblank,max=200"`
	TargetID     string `json:"target_id,omitempty" jsonschema:"alias of to_id" validate:"omitempty,notblank,max=200"`
	RelationType string `json:"relation_type,omitempty" jsonschema:"alias of rel_type, any case" validate:"omitempty,notblank,max=64"`
	// Seed 001 (memory_link): how sure the linker is and why, recorded on the edge.
	Confidence *float64      `json:"confidence,omitempty" jsonschema:"how sure the link is (default 1)" validate:"omitnil,min=0,max=1"`
	Metadata   *LinkMetadata `json:"metadata,omitempty" jsonschema:"optional reason for the link"`
}

// LinkMetadata is memory_link's optional justification.
type LinkMetadata struct {
	Reason string `json:"reason,omitempty" jsonschema:"why the two memories are linked" validate:"max=500"`
}

// LinkResult carries the ids of the edge and of its materialised inverse (with to_title also the
// note it resolved to, or pending).
type LinkResult = knowmind.LinkResult

// link writes from_id --rel_type--> to_id and its inverse in the caller's
// tenant; with to_title (the seed's toTitle) the target is a note named by title. The rel_type format, the shapes and the ids are checked by the
// graph (-32602, 400 "SHACL constraint violated", 404).
func (s *service) link(ctx context.Context, p LinkParams) (LinkResult, error) {
	if err := p.resolveAliases(); err != nil {
		return LinkResult{}, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return LinkResult{}, err
	}
	switch {
	case p.ToID != "" && p.ToTitle != "":
		return LinkResult{}, knowmind.InvalidParam("to_title", "give to_id or to_title, not both")
	case p.ToID == "" && p.ToTitle == "":
		return LinkResult{}, knowmind.InvalidParam("to_id", "to_id is required (or to_title, for a note)")
	case p.ToTitle != "":
		scope, err := noteScope(ctx)
		if err != nil {
			return LinkResult{}, err
		}
		return t.LinkTitle(ctx, scope, p.FromID, p.ToTitle, p.RelType)
	}
	meta := knowmind.EdgeMeta{Confidence: p.Confidence, CreatedBy: actor(ctx).Principal}
	if p.Metadata != nil {
		meta.Reason = p.Metadata.Reason
	}
	return t.LinkWith(ctx, p.FromID, p.ToID, p.RelType, meta)
}

// resolveAliases folds seed 001's names into knowmind's: one of each pair is
// required, both only if they agree; relation_type is upper-cased.
func (p *LinkParams) resolveAliases() error {
	p.RelationType = strings.ToUpper(strings.TrimSpace(p.RelationType))
	for _, a := range []struct {
		name, alias string
		value       *string
		aliasValue  string
		required    bool
	}{
		{"from_id", "source_id", &p.FromID, p.SourceID, true},
		{"to_id", "target_id", &p.ToID, p.TargetID, false},
		{"rel_type", "relation_type", &p.RelType, p.RelationType, true},
	} {
		switch {
		case *a.value != "" && a.aliasValue != "" && *a.value != a.aliasValue:
			return knowmind.InvalidParam(a.alias, "%s is seed 001's name for %s: give one of them", a.alias, a.name)
		case *a.value == "":
			*a.value = a.aliasValue
		}
		if a.required && *a.value == "" {
			return knowmind.InvalidParam(a.name, "%s is required (seed 001's %s is accepted instead)", a.name, a.alias)
		}
	}
	p.SourceID, p.TargetID, p.RelationType = "", "", ""
	return nil
}
