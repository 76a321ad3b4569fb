package knowmind

import "time"

// Retrieval four ways and replay (seed 001: memory_retrieve, memory_replay). Every answer has
// the same shape: memories with their entities, semantic profiles of the entities they name
// (always the current state, also in a replay), and the approximate tokens of the memories'
// content (context_tokens). sort_by chooses how memories are found: relevance is knowmind_recall's
// hybrid ranking; chronological lists current memories newest first; profile condenses each
// entity's current facts; graph walks the relations from a start memory.

// Modes of knowmind_retrieve (sort_by).
const (
	SortRelevance     = "relevance"
	SortChronological = "chronological"
	SortProfile       = "profile"
	SortGraph         = "graph"
)

// Bounds and defaults of knowmind_retrieve and knowmind_replay.
const (
	RetrieveDefaultLimit  = 10
	RetrieveMaxLimit      = 100
	ReplayDefaultLimit    = 50 // the seed's default
	ReplayMaxLimit        = 100
	MaxTimestampChars     = 64 // an ISO 8601 timestamp parameter (replay, store_memory's occurred_at)
	GraphDefaultDepth     = 3  // the seed's default
	GraphMaxDepth         = 5
	GraphMaxRelationTypes = 20
	GraphMaxNodes         = 500 // memories a graph walk returns at most (the fan-out bound)
	MaxProfiles           = 50  // semantic profiles in one answer
	ProfileMaxFacts       = 20  // current facts condensed into one profile
	MaxFilterChars        = 200 // category, entity_type
)

// RetrieveQuery is one knowmind_retrieve call after defaults. Query is required for relevance
// and filters (full-text, any word) otherwise; Category and EntityType filter every mode but graph.
type RetrieveQuery struct {
	SortBy     string
	Query      string
	Limit      int
	Category   string
	EntityType string
	Entity     *EntityRef // profile: only this entity's profile; chronological: only memories naming it
	// MinScore is the relevance mode's floor (recall's: RecallMinScore unless the caller asks
	// for another).
	MinScore float64
	// Graph mode.
	StartMemoryID string
	RelationTypes []string // predicates (UPPER_SNAKE) after mapping the seed's names; nil = all
	MaxDepth      int
}

// ReplayQuery is one knowmind_replay call: the tenant's knowledge as it stood at At.
type ReplayQuery struct {
	At         time.Time
	Query      string
	Category   string
	EntityType string
	Limit      int
}

// RetrievedMemory is one memory of a retrieve or replay answer.
type RetrievedMemory struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	Title      string     `json:"title"`
	Content    string     `json:"content"` // at most RecallMaxContentChars (a document: its start)
	Category   string     `json:"category,omitempty"`
	MemoryType string     `json:"memory_type,omitempty"`
	Tags       []string   `json:"tags,omitempty"`
	Source     string     `json:"source,omitempty"`
	Path       string     `json:"path,omitempty"` // a note's folder (in a replay: its folder then)
	CreatedAt  time.Time  `json:"created_at"`
	ValidFrom  time.Time  `json:"valid_from"`
	ValidTo    *time.Time `json:"valid_to"`        // null while valid (a replay shows when it ended later)
	Score      *float64   `json:"score,omitempty"` // relevance mode only
	Depth      *int       `json:"depth,omitempty"` // graph mode only: hops from the start memory
	// Entities the memory names, and the first as entity_type/entity_id (seed 001).
	Entities   []EntityRef `json:"entities"`
	EntityType string      `json:"entity_type,omitempty"`
	EntityID   string      `json:"entity_id,omitempty"`
}

// ProfileFact is one current fact in a semantic profile.
type ProfileFact struct {
	MemoryID  string    `json:"memory_id"`
	Text      string    `json:"text"`
	Category  string    `json:"category,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// SemanticProfile is an entity condensed: its current facts, newest first, and as one text.
type SemanticProfile struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	FactCount int           `json:"fact_count"` // all current facts; Facts holds at most ProfileMaxFacts
	Facts     []ProfileFact `json:"facts"`
	Summary   string        `json:"summary"`
}

// Relation is one edge a graph walk crossed, in the direction it was linked.
type Relation struct {
	SourceID   string    `json:"source_id"`
	TargetID   string    `json:"target_id"`
	Type       string    `json:"type"`
	Confidence float64   `json:"confidence"`
	CreatedBy  string    `json:"created_by"`
	Reason     string    `json:"reason,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	Depth      int       `json:"depth"` // 1 = touches the start memory
}

// RetrieveResult is knowmind_retrieve's and knowmind_replay's answer.
type RetrieveResult struct {
	SortBy           string            `json:"sort_by"` // replay: "replay"
	AsOf             *time.Time        `json:"as_of,omitempty"`
	Memories         []RetrievedMemory `json:"memories"`
	SemanticProfiles []SemanticProfile `json:"semantic_profiles"`
	Relations        []Relation        `json:"relations,omitempty"` // graph mode (always present there)
	ContextTokens    int               `json:"context_tokens"`
	Truncated        bool              `json:"truncated"` // more matched than limit (or the graph's node bound)
	ElapsedMS        int64             `json:"elapsed_ms"`
}

// FirstEntity sets EntityType and EntityID from Entities (never nil afterwards).
func (m *RetrievedMemory) FirstEntity() {
	if m.Entities == nil {
		m.Entities = []EntityRef{}
	}
	if len(m.Entities) > 0 {
		m.EntityType, m.EntityID = m.Entities[0].Type, m.Entities[0].ID
	}
}

// CountContextTokens sums ApproxTokens of the memories' titles and contents.
func CountContextTokens(ms []RetrievedMemory) int {
	n := 0
	for _, m := range ms {
		n += ApproxTokens(m.Title) + ApproxTokens(m.Content)
	}
	return n
}
