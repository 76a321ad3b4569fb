package knowmind

import "time"

// Inputs and results of the ingest, listing and statistics tools. Result
// structs carry the spec's field names as JSON tags, so a handler can return
// them as they are.

// Bounds on ingest parameters besides MaxContentChars (the spec names only
// that one; these keep titles, tags and sources index- and log-sized).
const (
	MaxTitleChars        = 500
	MaxSourceChars       = 2000
	MaxTags              = 50
	MaxTagChars          = 100
	MaxUpdateReasonChars = 2000
	MaxIDChars           = 200
	MaxRecentCursorChars = 200 // list_recent's and recent_activity's nextCursor
	// MaxMemoryDates bounds the days one memory's text names that are kept on it
	// (Memory.Dates): the first ones found.
	MaxMemoryDates = 16
	// MaxSequenceChars and MaxSequencePosition bound a memory's place in a sequence
	// (StoreMemoryInput.Sequence, Position).
	MaxSequenceChars    = 200
	MaxSequencePosition = 1_000_000_000
)

// A memory stored without a sequence by a writer (StoreMemoryInput.Writer) joins that writer's
// implicit sequence (in its MCP session, StoreMemoryInput.Session) when its time lies within ImplicitSequenceGap of the sequence's last
// memory, and the sequence began at most ImplicitSequenceLookback ago; otherwise it begins a new
// one. Turns captured one by one thus read as a conversation (the context signal), and an
// agent's notes of one sitting as one sequence.
const (
	ImplicitSequenceGap      = 30 * time.Minute
	ImplicitSequenceLookback = 24 * time.Hour
)

// Bounds on what one memory or document may make of its content, so the work
// and storage of a call grow linearly with its input (spec: too_large beyond
// them). MaxChunks bounds the sections one call embeds and writes;
// MaxChunkExpansion bounds the characters stored in its chunks (texts with
// their title and heading lines, and the headings) against the content's,
// plus one chunk's header: headings are repeated in every chunk of their
// section, and many tiny sections under long headings would otherwise store
// far more than was sent.
const (
	MaxChunks         = 5000
	MaxChunkExpansion = 4
)

// StoreMemoryInput are knowmind_store_memory's parameters.
type StoreMemoryInput struct {
	Title      string   `json:"title,omitempty"`
	Content    string   `json:"content"`
	MemoryType string   `json:"memory_type,omitempty"` // default semantic
	Tags       []string `json:"tags,omitempty"`
	Source     string   `json:"source,omitempty"`
	// OccurredAt is the time the memory is about (default: now): it is valid from then, and the
	// times its text names relative to it ("yesterday", "letzten Freitag") are resolved against
	// it (Memory.Dates).
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	// Sequence and Position place the memory in a sequence — a conversation's turns, a
	// document's parts, one session's notes — so that recall also scores it by the memory
	// before it (the question a reply answers; search.Weights.Context). Sequence is the
	// caller's key, Position the place in it (nil: after the last one stored in it).
	Sequence string `json:"sequence,omitempty"`
	Position *int   `json:"position,omitempty"`
	// Writer is who stores the memory (the token's id; the tools set it, never the caller's
	// input). A memory with a writer and without a Sequence is placed in the writer's implicit
	// sequence (ImplicitSequenceGap); empty: in none.
	Writer string `json:"-"`
	// Session is the MCP session the writer stores from (Streamable HTTP's Mcp-Session-Id, one
	// per stdio process; the tools set it). One token's concurrent conversations are separate
	// sessions, so the implicit sequence is the writer's in that session; empty: the writer's
	// one implicit sequence (a one-shot request has no session).
	Session string `json:"-"`
	// Entities the memory is about (memory engine); ID defaults to EntitySlug(Name).
	Entities []CandidateEntity `json:"entities,omitempty"`
	// EntityTypes allowed for Entities; nil = the graph's shapes (see CaptureInput).
	EntityTypes []string `json:"-"`
}

// UploadDocumentInput are knowmind_upload_document's parameters.
type UploadDocumentInput struct {
	Title   string `json:"title,omitempty"`
	Content string `json:"content"`
	Source  string `json:"source,omitempty"`
}

// UpdateFactInput are knowmind_update_fact's parameters.
type UpdateFactInput struct {
	TargetID     string `json:"target_id"`
	NewTitle     string `json:"new_title"`
	NewContent   string `json:"new_content"`
	UpdateReason string `json:"update_reason,omitempty"`
}

// StoreResult is the result of knowmind_store_memory and
// knowmind_upload_document. MemoryID and ID are the same value (the spec
// returns both).
type StoreResult struct {
	MemoryID          string `json:"memory_id"`
	ID                string `json:"id"`
	Title             string `json:"title"`
	Status            string `json:"status"`
	ChunksWritten     int    `json:"chunks_written"`
	EmbeddingProvider string `json:"embedding_provider"`
	// Unchanged: the same content was already stored; nothing was written
	// and ID is the existing entry's.
	Unchanged bool `json:"unchanged,omitempty"`
	// ReplacedDocumentIDs (upload_document only, then never nil): the current
	// documents of the same title the new one supersedes (closed, not erased).
	ReplacedDocumentIDs []string `json:"replaced_document_ids,omitzero"`
	// Entities (store_memory with entities): what the memory names. Conflicts
	// (store_memory): the current memories it contradicts, among those about the
	// same entities and the nearest by meaning (linked CONTRADICTS; absent: none).
	Entities  []EntityRef `json:"entities,omitzero"`
	Conflicts []Conflict  `json:"conflicts,omitzero"`
	// Note says, with Unchanged, that the content was already stored under another title,
	// which was kept (Title is that one). Set by the tool, which knows the title it was sent.
	Note string `json:"note,omitempty"`
	// PMMatches: event goals the stored memory or document fired (knowmind_set_goal); only
	// when some did. Set by the tool, which matches goals after the write.
	PMMatches []GoalMatch `json:"pm_matches,omitempty"`
}

// UpdateFactResult is the result of knowmind_update_fact.
type UpdateFactResult struct {
	OldMemoryID    string `json:"old_memory_id"`
	NewMemoryID    string `json:"new_memory_id"`
	SupersedesEdge string `json:"supersedes_edge"`
	// PMMatches: goals the new version fired (knowmind_set_goal); only when some did.
	PMMatches []GoalMatch `json:"pm_matches,omitempty"`
}

// RecentItem is one entry of knowmind_list_recent.
type RecentItem struct {
	ID            string    `json:"id"`
	Title         string    `json:"title"`
	Status        string    `json:"status"`
	IndexedChunks int       `json:"indexed_chunks"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Kind          string    `json:"kind"`
	// ValidTo is when a newer version (knowmind_update_fact) superseded this one; null while
	// it is the current version.
	ValidTo *time.Time `json:"valid_to"`
	// Entities the memory names, and the first as entity_type/entity_id (seed 001).
	Entities   []EntityRef `json:"entities"`
	EntityType string      `json:"entity_type,omitempty"`
	EntityID   string      `json:"entity_id,omitempty"`
}

// RecentPage is one page of knowmind_list_recent.
type RecentPage struct {
	Items []RecentItem
	// Total counts every entry list_recent can show (memories and documents with a creation
	// time, every version and status).
	Total int
	// NextCursor continues after the last item; "" when there is nothing more.
	NextCursor string
}

// Stats is the result of knowmind_stats.
type Stats struct {
	Memories int64 `json:"memories"` // memories and documents, every version and status
	Edges    int64 `json:"edges"`    // stored relation edges; an edge and its inverse count as two
	Chunks   int64 `json:"chunks"`   // chunks with a vector
}
