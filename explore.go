package knowmind

import "time"

// Bounds of knowmind_explore, the graph explorer's view of one memory. They
// keep one answer page-sized: a hub with thousands of neighbours shows the
// first ExploreMaxNodes and says it was cut (Truncated).
const (
	ExploreDefaultHops = 1
	ExploreMaxHops     = 3
	ExploreMaxNodes    = 150
	// ExploreMaxContentChars cuts the centre's content (a document can hold
	// a million characters); its chunks show the rest section by section.
	ExploreMaxContentChars = 20_000
	// MaxNoteRevisionsRead bounds the revisions explore with as_of looks
	// through for a note's former title and body (newest first).
	MaxNoteRevisionsRead = 1000
	ExploreMaxChunks     = 100
	ExploreMaxChunkChars = 2_000
	// ExploreMaxVersions bounds the version chain read in each direction.
	ExploreMaxVersions = 100
	// ExploreMaxEntities bounds the centre's entities listed.
	ExploreMaxEntities = 100
)

// ExploreQuery asks for one memory's neighbourhood. AsOf nil shows what is
// current (open edges); AsOf set shows what was valid then: the version of
// the memory's chain valid at AsOf, edges with valid_from ≤ AsOf < valid_to
// and neighbours valid at AsOf.
type ExploreQuery struct {
	MemoryID string
	Hops     int // 1..ExploreMaxHops
	AsOf     *time.Time
}

// ExploreResult is what knowmind_explore returns.
type ExploreResult struct {
	// Memory is the centre: the memory asked for or, with as_of, the version
	// of its chain that was valid then. Its content is cut at
	// ExploreMaxContentChars (ContentTruncated).
	Memory           Memory `json:"memory"`
	ContentTruncated bool   `json:"content_truncated,omitempty"`
	// Entities are the entities the centre names (Memory.entities), in key
	// order; [] when none.
	Entities []ExploreEntity `json:"entities"`
	// Properties are a note's frontmatter (as knowmind_get_note's frontmatter); absent for
	// other kinds and notes without one.
	Properties map[string]any `json:"properties,omitempty"`
	// Path is a note's folder ("" at the project's root), with as_of the folder it was in then;
	// absent for other kinds.
	Path string `json:"path,omitempty"`
	// IngestError says why a failed ingest failed (status "failed").
	IngestError string `json:"ingest_error,omitempty"`
	// RequestedID is the memory_id asked for when the centre is another
	// version of its chain (as_of before it was valid).
	RequestedID string `json:"requested_id,omitempty"`
	// Chunks are a document's sections in order (at most ExploreMaxChunks).
	Chunks []ExploreChunk `json:"chunks"`
	// Versions is the centre's version chain, oldest first (one entry when
	// it was never updated).
	Versions []ExploreVersion `json:"versions"`
	// Nodes are the centre (first, hop 0) and the memories within hops.
	Nodes []ExploreNode `json:"nodes"`
	// Edges are the typed, directed relations between Nodes, each once in
	// the direction it was linked (the materialised inverse is InverseType).
	Edges     []ExploreEdge `json:"edges"`
	AsOf      *time.Time    `json:"as_of,omitempty"`
	Truncated bool          `json:"truncated"`
}

// ExploreEntity is an entity the centre names: its type, id (slug) and name.
type ExploreEntity struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ExploreChunk is one section of a document.
type ExploreChunk struct {
	Position int    `json:"position"`
	Heading  string `json:"heading,omitempty"`
	Text     string `json:"text"`
}

// ExploreVersion is one version in a chain written by knowmind_update_fact.
type ExploreVersion struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	ValidFrom    time.Time  `json:"valid_from"`
	ValidTo      *time.Time `json:"valid_to,omitempty"`
	UpdateReason string     `json:"update_reason,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
}

// ExploreNode is a memory in the neighbourhood; Hop is its distance from
// the centre.
type ExploreNode struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	Kind      string     `json:"kind"`
	Status    string     `json:"status"`
	ValidFrom time.Time  `json:"valid_from"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	Hop       int        `json:"hop"`
}

// ExploreEdge is a relation From --RelType--> To; InverseType is its name
// read backwards (SUPERSEDED_BY for SUPERSEDES; the same for a symmetric
// relation).
type ExploreEdge struct {
	ID          string     `json:"id"`
	From        string     `json:"from"`
	To          string     `json:"to"`
	RelType     string     `json:"rel_type"`
	InverseType string     `json:"inverse_type"`
	ValidFrom   time.Time  `json:"valid_from"`
	ValidTo     *time.Time `json:"valid_to,omitempty"`
}
