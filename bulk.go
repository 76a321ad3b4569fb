package knowmind

import (
	"time"
	"unicode/utf8"
)

// The bulk path: knowmind import / export (one JSONL schema, below) and
// knowmind_store_memories. The file format is documented in docs/bulk.md;
// these types are its lines.

// Record types of the JSONL format, one JSON object per line.
const (
	RecordHeader   = "header"   // optional first line of an export; ignored on import
	RecordMemory   = "memory"   // a memory (kind memory)
	RecordDocument = "document" // a document (kind document, chunked)
	RecordRelation = "relation" // a typed edge between two memories by id
	RecordGoal     = "goal"     // a goal (knowmind_set_goal), in Goal
	RecordDraft    = "draft"    // a captured fact waiting for (or past) review, in Draft
	// Notes (docs/notes.md): a project before the notes that name it, a note (the memory
	// fields plus NoteFields) among the memories, then its former bodies, the links waiting for
	// a title and the principals' last visits of a project.
	RecordProject  = "project"  // in Project
	RecordNote     = "note"     // memory fields plus Note
	RecordRevision = "revision" // in Revision
	RecordForward  = "forward"  // in Forward
	RecordVisit    = "visit"    // in Visit
	// What the memory engine keeps besides facts and drafts: an entity with its name and former
	// names, the review counts of one calibration bucket, the tenant's capture thresholds.
	RecordEntity          = "entity"           // in Entity
	RecordCalibration     = "calibration"      // in Calibration
	RecordCaptureSettings = "capture_settings" // in CaptureSettings
)

// AfterEntries says whether records of type typ are imported after every memory, document,
// project and note (they name them): relations, goals, drafts, revisions, forward links and
// visits.
func AfterEntries(typ string) bool {
	switch typ {
	case RecordRelation, RecordGoal, RecordDraft, RecordRevision, RecordForward, RecordVisit,
		RecordEntity, RecordCalibration, RecordCaptureSettings:
		return true
	}
	return false
}

// BulkFormat and BulkFormatVersion name the JSONL format in an export's header line.
const (
	BulkFormat        = "knowmind-jsonl"
	BulkFormatVersion = 1
)

// Bounds of the bulk path.
const (
	// MaxStoreMemoriesItems bounds one knowmind_store_memories call.
	MaxStoreMemoriesItems = 100
	// ImportBatchSize is how many records knowmind import writes per
	// transaction by default (its --batch flag), each batch committed with
	// the import's cursor.
	ImportBatchSize = 200
	// MaxImportBatchSize bounds --batch: a transaction of more memories with
	// their vectors gets slow to commit and retry.
	MaxImportBatchSize = 2000
	// MaxRecordBytes bounds one JSONL line (content is at most
	// MaxContentChars characters of up to 4 bytes, plus the other fields).
	MaxRecordBytes = 4*MaxContentChars + 1<<20
)

// Record is one line of the JSONL format. Type says which fields apply:
// memory and document use ID to UpdateReason (Content required; ID, Status
// and the times optional), relation uses From, To, RelType and the times.
type Record struct {
	Type string `json:"type"`

	// memory, document
	ID           string     `json:"id,omitempty"`
	Title        string     `json:"title,omitempty"`
	Content      string     `json:"content,omitempty"`
	MemoryType   string     `json:"memory_type,omitempty"`
	Tags         []string   `json:"tags,omitempty"`
	Source       string     `json:"source,omitempty"`
	Status       string     `json:"status,omitempty"` // indexed (default) or failed
	UpdatedAt    *time.Time `json:"updated_at,omitempty"`
	UpdateReason string     `json:"update_reason,omitempty"`
	// Sequence and Position: the memory's place in a sequence (StoreMemoryInput's).
	Sequence string `json:"sequence,omitempty"`
	Position *int   `json:"position,omitempty"`
	// Engine: what the memory engine recorded of a captured fact (none for other memories).
	Engine *MemoryEngine `json:"engine,omitempty"`

	// relation
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	RelType string `json:"rel_type,omitempty"`
	EdgeID  string `json:"edge_id,omitempty"` // informational: import derives it (graph.EdgeID)
	// What the link recorded (knowmind_link's confidence and metadata.reason, who linked).
	Confidence *float64 `json:"confidence,omitempty"`
	CreatedBy  string   `json:"created_by,omitempty"`
	Reason     string   `json:"reason,omitempty"`

	// goal, draft: the whole object as knowmind_list_goals / knowmind_list_drafts show it
	// (due and expired are recomputed on import).
	Goal  *Goal  `json:"goal,omitempty"`
	Draft *Draft `json:"draft,omitempty"`

	// project, note, revision, forward, visit
	Project  *ProjectRecord  `json:"project,omitempty"`
	Note     *NoteFields     `json:"note,omitempty"`
	Revision *RevisionRecord `json:"revision,omitempty"`
	Forward  *ForwardRecord  `json:"forward,omitempty"`
	Visit    *VisitRecord    `json:"visit,omitempty"`

	// entity, calibration, capture_settings
	Entity          *EntityRecord          `json:"entity,omitempty"`
	Calibration     *CalibrationRecord     `json:"calibration,omitempty"`
	CaptureSettings *CaptureSettingsRecord `json:"capture_settings,omitempty"`

	// both: when the record was written and the interval it is valid in
	// (valid_to absent = current).
	CreatedAt *time.Time `json:"created_at,omitempty"`
	ValidFrom *time.Time `json:"valid_from,omitempty"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`

	// header
	Format     string     `json:"format,omitempty"`
	Version    int        `json:"version,omitempty"`
	Tenant     string     `json:"tenant,omitempty"`
	ExportedAt *time.Time `json:"exported_at,omitempty"`
}

// BatchCursor names an import (Key, derived from its source) and how many of
// its items are done once a batch commits; the bulk write commits it in the
// batch's transaction. The zero value commits none.
type BatchCursor struct {
	Key  string
	Done int
}

// Outcomes of one item of a bulk write.
const (
	ItemIndexed   = "indexed"   // written, searchable
	ItemStored    = "stored"    // written as given (a failed record, a relation)
	ItemUnchanged = "unchanged" // already there (same id and content, or same content): nothing written
	ItemFailed    = "failed"    // not written; Err says why
)

// ItemResult is the outcome of one record or memory of a bulk write, in
// input order.
type ItemResult struct {
	Status        string
	ID            string // the memory's id (new or existing); for a relation the edge id
	Title         string
	ChunksWritten int
	Err           error       // *Error where the cause is the input
	PMMatches     []GoalMatch // event goals this memory fired
}

// ProjectRecord is a project as stored: its handle, name and former handles.
type ProjectRecord struct {
	Handle    string    `json:"handle"`
	Name      string    `json:"name,omitempty"`
	Aliases   []string  `json:"aliases,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NoteFields is what a note record holds besides the memory fields (id, title, content, tags,
// status indexed or trashed, the times): where the note lives and who wrote it, as stored. The
// version token travels, so an agent's token stays valid across a move.
type NoteFields struct {
	Project     string     `json:"project,omitempty"` // handle; none for a user profile
	Path        string     `json:"path,omitempty"`
	Class       string     `json:"class"`
	Type        string     `json:"type,omitempty"`
	Frontmatter string     `json:"frontmatter,omitempty"` // YAML as stored
	Version     string     `json:"version"`
	Revision    int        `json:"revision"`
	Aliases     []string   `json:"aliases,omitempty"`   // former titles
	LinkKeys    []string   `json:"link_keys,omitempty"` // what [[links]] resolve it by
	Owner       string     `json:"owner,omitempty"`     // the principal of private memory
	CreatedBy   string     `json:"created_by,omitempty"`
	CreatedVia  string     `json:"created_via,omitempty"`
	UpdatedBy   string     `json:"updated_by,omitempty"`
	UpdatedVia  string     `json:"updated_via,omitempty"`
	ActorKind   string     `json:"actor_kind,omitempty"`
	TrashedAt   *time.Time `json:"trashed_at,omitempty"`
}

// RevisionRecord is a former body of the note Note (its id), current from ValidFrom to ValidTo.
type RevisionRecord struct {
	Note      string    `json:"note"`
	Revision  int       `json:"revision"`
	Version   string    `json:"version"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Path      string    `json:"path,omitempty"`
	ValidFrom time.Time `json:"valid_from"`
	ValidTo   time.Time `json:"valid_to"`
	By        string    `json:"by,omitempty"`
}

// ForwardRecord is a link of note From waiting for a note titled Title in Project.
type ForwardRecord struct {
	From    string `json:"from"`
	Project string `json:"project"`
	Title   string `json:"title"`
	Rel     string `json:"rel"`
}

// EntityRecord is an entity as stored: its name, its former names and when it was created.
type EntityRecord struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Aliases   []string  `json:"aliases,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// MaxEntityAliases bounds an entity's former names in an imported record.
const MaxEntityAliases = 100

// Validate checks an imported entity by the bounds capture applies to a new one.
func (e EntityRecord) Validate() error {
	if EntitySlug(e.ID) != e.ID || e.ID == "" || len(e.ID) > MaxIDChars || e.Type == "" || len(e.Type) > 64 {
		return InvalidParam("entity", "%q/%q is no entity reference", e.Type, e.ID)
	}
	if len(e.Aliases) > MaxEntityAliases {
		return InvalidParam("entity", "an entity holds at most %d former names", MaxEntityAliases)
	}
	for _, n := range append([]string{e.Name}, e.Aliases...) {
		if len(n) > 4*MaxEntityNameChars || utf8.RuneCountInString(n) > MaxEntityNameChars {
			return InvalidParam("entity", "an entity's name or former name exceeds %d characters", MaxEntityNameChars)
		}
	}
	return nil
}

// CalibrationRecord is the review record of one confidence bucket of an extractor
// (bucket b holds confidences [b × CalibrationBucketWidth, (b+1) × CalibrationBucketWidth)).
type CalibrationRecord struct {
	Extractor  string `json:"extractor"`
	Bucket     int    `json:"bucket"`
	Accepted   int    `json:"accepted"`
	Rejected   int    `json:"rejected"`
	Superseded int    `json:"superseded"`
}

// Validate checks an imported calibration bucket.
func (c CalibrationRecord) Validate() error {
	switch {
	case c.Extractor == "" || len(c.Extractor) > MaxExtractorChars:
		return InvalidParam("calibration", "extractor must be 1-%d bytes", MaxExtractorChars)
	case c.Bucket < 0 || c.Bucket > Bucket(1):
		return InvalidParam("calibration", "bucket must lie in 0..%d", Bucket(1))
	case c.Accepted < 0 || c.Rejected < 0 || c.Superseded < 0:
		return InvalidParam("calibration", "counts must not be negative")
	}
	return nil
}

// CaptureSettingsRecord is the tenant's base capture thresholds.
type CaptureSettingsRecord struct {
	StoreThreshold float64 `json:"store_threshold"`
	DraftThreshold float64 `json:"draft_threshold"`
}

// VisitRecord is a principal's last knowmind_start_session with a project.
type VisitRecord struct {
	Principal string    `json:"principal"`
	Project   string    `json:"project"`
	At        time.Time `json:"at"`
}

// MemoryEngine is what knowmind_capture and knowmind_review_draft record on a fact they store:
// its category, the extraction's confidence and extractor, the reviewer, and the entities it
// names (created on import as needed, with the name given).
type MemoryEngine struct {
	Category   string         `json:"category,omitempty"`
	Confidence float64        `json:"confidence"`
	Extractor  string         `json:"extractor,omitempty"`
	ReviewedBy string         `json:"reviewed_by,omitempty"`
	ReviewedAt *time.Time     `json:"reviewed_at,omitempty"`
	Entities   []EngineEntity `json:"entities,omitempty"`
}

// EngineEntity is an entity a fact names.
type EngineEntity struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Validate bounds what an imported fact's engine fields hold, by the rules of capture.
func (m MemoryEngine) Validate() error {
	switch {
	case !(m.Confidence >= 0 && m.Confidence <= 1):
		return InvalidParam("engine", "engine.confidence must lie in 0..1")
	case len(m.Category) > 4*MaxCategoryChars || len(m.Extractor) > MaxExtractorChars || len(m.ReviewedBy) > 4*MaxReviewerChars:
		return InvalidParam("engine", "engine.category, extractor or reviewed_by is too long")
	case len(m.Entities) > MaxEntitiesPerFact:
		return InvalidParam("engine", "engine.entities holds at most %d", MaxEntitiesPerFact)
	}
	for _, e := range m.Entities {
		if EntitySlug(e.ID) != e.ID || e.ID == "" || len(e.ID) > MaxIDChars || e.Type == "" || len(e.Type) > 64 || len(e.Name) > 4*MaxEntityNameChars {
			return InvalidParam("engine", "engine.entities: %q/%q is no entity reference", e.Type, e.ID)
		}
	}
	return nil
}
