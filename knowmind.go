// Package knowmind holds the domain of the knowmind memory service: the
// types every layer shares (memories, chunks, relations, principals) and the
// one Error type whose codes the transport maps to MCP/HTTP codes.
//
// It knows nothing of Dgraph, HTTP or MCP; graph/, handlers/ and embed/
// implement and consume what is declared here, cmd/knowmind wires them.
package knowmind

import (
	"slices"
	"strings"
	"time"
)

// Version is the service version reported by knowmind_health.
const Version = "0.4.0"

// Scope is a permission a token carries. Scopes are checked on every tool call.
type Scope string

const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
)

// ParseScope accepts the three scope names the spec defines.
func ParseScope(s string) (Scope, bool) {
	switch Scope(s) {
	case ScopeRead, ScopeWrite, ScopeAdmin:
		return Scope(s), true
	}
	return "", false
}

// Principal is who is calling: the tenant a token belongs to and what it may do.
// It is produced only by authentication; handlers never build one from input.
type Principal struct {
	Tenant  string
	Scopes  []Scope
	TokenID string // token uid or JWT subject, for logs and rate limits; never the secret
	// Projects limits the notes projects the principal reaches (knowmind token create
	// --projects); nil reaches all of the tenant's projects.
	Projects []string
	// Toolsets are the MCP toolsets the principal sees and calls (knowmind token create
	// --toolsets, narrowed per request by the X-Knowmind-Toolsets header); nil: every toolset,
	// listing DefaultToolsets.
	Toolsets []string
}

// Toolsets group the MCP tools so an agent sees only what it needs (each tool's file in
// handlers/ names its toolset): memory is the seed-000 memory service and the graph explorer,
// notes the notes knowledge base, engine the memory engine (capture, drafts, entities, goals,
// briefing).
const (
	ToolsetMemory = "memory"
	ToolsetNotes  = "notes"
	ToolsetEngine = "engine"
)

// AllToolsets are the toolsets a token may name.
var AllToolsets = []string{ToolsetMemory, ToolsetNotes, ToolsetEngine}

// DefaultToolsets are what tools/list shows a principal without a toolset list (the dev token,
// JWTs, OAuth tokens, stdio without --toolsets): the smallest list that answers and stores, so
// a model's tool list stays short. Such a principal may still call every tool; a client asks
// for more in the list per request (docs/clients.md).
var DefaultToolsets = []string{ToolsetMemory}

// ReachesToolset reports whether the principal may call the tools of toolset.
func (p Principal) ReachesToolset(toolset string) bool {
	return p.Toolsets == nil || slices.Contains(p.Toolsets, toolset)
}

// ListsToolset reports whether tools/list shows the principal the tools of toolset.
func (p Principal) ListsToolset(toolset string) bool {
	if p.Toolsets == nil {
		return slices.Contains(DefaultToolsets, toolset)
	}
	return slices.Contains(p.Toolsets, toolset)
}

// CheckToolsets refuses an empty list or an unknown toolset name.
func CheckToolsets(list []string) error {
	if len(list) == 0 {
		return InvalidParam("toolsets", "a toolset-limited token needs at least one toolset (%s)", strings.Join(AllToolsets, ", "))
	}
	for _, t := range list {
		if !slices.Contains(AllToolsets, t) {
			return InvalidParam("toolsets", "unknown toolset %q (%s)", t, strings.Join(AllToolsets, ", "))
		}
	}
	return nil
}

// Has reports whether the principal holds scope s. admin implies write and read,
// write implies read: a tarif-relevant admin token can still recall.
func (p Principal) Has(s Scope) bool {
	if slices.Contains(p.Scopes, s) || slices.Contains(p.Scopes, ScopeAdmin) {
		return true
	}
	return s == ScopeRead && slices.Contains(p.Scopes, ScopeWrite)
}

// Memory types the spec allows for knowmind_store_memory.
const (
	MemorySemantic   = "semantic"
	MemoryEpisodic   = "episodic"
	MemoryProcedural = "procedural"
	MemoryReference  = "reference"
)

// Kinds of corpus entries.
const (
	KindMemory   = "memory"
	KindDocument = "document"
)

// Ingest status of a memory or document. A failed ingest is kept and marked,
// never reported indexed.
const (
	StatusPending = "pending"
	StatusIndexed = "indexed"
	StatusFailed  = "failed"
)

// MaxContentChars bounds the content of one memory or document (spec: too_large).
const MaxContentChars = 1_000_000

// Memory is a memory or a document as stored (documents are memories of kind
// "document" whose content is split into several chunks).
type Memory struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"`
	Title        string     `json:"title"`
	Content      string     `json:"content"`
	MemoryType   string     `json:"memory_type,omitempty"`
	Tags         []string   `json:"tags,omitempty"`
	Source       string     `json:"source,omitempty"`
	Status       string     `json:"status"`
	ContentSHA   string     `json:"content_sha,omitempty"`
	Chunks       int        `json:"indexed_chunks"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	ValidFrom    time.Time  `json:"valid_from"`
	ValidTo      *time.Time `json:"valid_to,omitempty"`
	UpdateReason string     `json:"update_reason,omitempty"`
	// Dates are the days its text names, relative ones ("yesterday", "in two weeks",
	// "letzten Freitag") resolved against its own time (valid_from when it was written), a
	// week, month or year as its first day; at most MaxMemoryDates.
	Dates []time.Time `json:"dates,omitempty"`
	// Sequence and Position: its place in a sequence (StoreMemoryInput's), when it has one.
	Sequence string `json:"sequence,omitempty"`
	Position *int   `json:"position,omitempty"`
}
