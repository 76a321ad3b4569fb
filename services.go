package knowmind

import (
	"context"
	"time"
)

// The services a tenant's workspace offers, one small interface per capability, as the
// transport uses them. Package graph implements them all (graph.Tenant); handlers hold
// these interfaces and tests may hand them fakes.
//
// Every method works inside one tenant. Methods taking a NoteScope return only what that
// scope may see, and apply it before cutting to a limit or k; the others see the tenant's
// memories and documents, and still refuse notes outside the scope the context carries
// (WithNoteScope).

// Memories stores and reads memories and documents.
type Memories interface {
	// StoreMemory stores a memory (idempotent by content); a failed ingest keeps it with
	// status failed and returns ingest_failed.
	StoreMemory(ctx context.Context, in StoreMemoryInput) (StoreResult, error)
	// StoreMemories stores each input as StoreMemory would, in one transaction.
	StoreMemories(ctx context.Context, ins []StoreMemoryInput) ([]ItemResult, error)
	// UploadDocument ingests a document, replacing the current one of its title.
	UploadDocument(ctx context.Context, in UploadDocumentInput) (StoreResult, error)
	// UpdateFact supersedes a memory with a new version; nothing is erased.
	UpdateFact(ctx context.Context, in UpdateFactInput) (UpdateFactResult, error)
	// ListRecentPage lists up to k memories newest first, after cursor.
	ListRecentPage(ctx context.Context, k int, cursor string) (RecentPage, error)
	// Stats counts the tenant's corpus.
	Stats(ctx context.Context) (Stats, error)
	// Explore returns a memory (as of q.AsOf) with its chunks, versions and neighbours.
	Explore(ctx context.Context, q ExploreQuery) (ExploreResult, error)
	// EntitiesOf returns the entities each memory id names.
	EntitiesOf(ctx context.Context, ids []string) (map[string][]EntityRef, error)
	// Provider is the embedding provider's name, as results report it.
	Provider() string
}

// Retrieval answers questions: recall and the retrieve and replay views.
type Retrieval interface {
	// RecallVisible ranks what scope may see for q: k hits when k pass q.MinScore.
	RecallVisible(ctx context.Context, scope NoteScope, q RecallQuery) (RecallResult, error)
	// AttachEntities sets each hit's entities (never nil).
	AttachEntities(ctx context.Context, hits []RecallHit) error
	// RetrieveRelevance is recall's ranking of what scope may see as retrieve's memories, the
	// category and entity-type filters applied before the limit.
	RetrieveRelevance(ctx context.Context, scope NoteScope, q RetrieveQuery) (RetrieveResult, error)
	// RetrieveGraph walks the relations from q.StartMemoryID to q.MaxDepth.
	RetrieveGraph(ctx context.Context, q RetrieveQuery) (RetrieveResult, error)
	// Chronological lists current memories newest valid first, filtered.
	Chronological(ctx context.Context, q RetrieveQuery) (RetrieveResult, error)
	// Profiles condenses the current facts per entity.
	Profiles(ctx context.Context, q RetrieveQuery) (RetrieveResult, error)
	// Replay is the knowledge as it stood at q.At.
	Replay(ctx context.Context, q ReplayQuery) (RetrieveResult, error)
}

// Relations links memories and notes with typed, bi-temporal edges.
type Relations interface {
	// LinkWith links fromID --relType--> toID with meta on both edges.
	LinkWith(ctx context.Context, fromID, toID, relType string, meta EdgeMeta) (LinkResult, error)
	// LinkTitle links a note to the note of a title in its project, or waits for it.
	LinkTitle(ctx context.Context, scope NoteScope, fromID, title, rel string) (LinkResult, error)
	// Unlink closes an open edge and its inverse.
	Unlink(ctx context.Context, fromID, toID, relType string) (UnlinkResult, error)
	// ListRelations returns a memory's open edges, both ways.
	ListRelations(ctx context.Context, memoryID string) (RelationsResult, error)
}

// Notes writes, reads, searches and reorganises notes.
type Notes interface {
	CreateNote(ctx context.Context, scope NoteScope, in CreateNoteInput) (NoteWriteResult, error)
	// EditNote applies one edit at the caller's version token; the former body stays a Revision.
	EditNote(ctx context.Context, scope NoteScope, in EditNoteInput) (NoteWriteResult, error)
	// GetNote reads a note by id, or by title in project; 404 outside the scope.
	GetNote(ctx context.Context, scope NoteScope, ref, project string, detailed bool) (Note, error)
	// Revisions lists a note's former bodies, newest first.
	Revisions(ctx context.Context, scope NoteScope, id string) ([]Revision, error)
	// TrashNote moves a note to the trash.
	TrashNote(ctx context.Context, scope NoteScope, id, versionToken string, actor Actor) error
	// LinkNote links a note to a note id or a title of its project.
	LinkNote(ctx context.Context, scope NoteScope, fromID string, l LinkSpec) (NoteWriteResult, error)
	RenameNote(ctx context.Context, scope NoteScope, id, versionToken, newTitle string, actor Actor) (RenameResult, error)
	MoveNote(ctx context.Context, scope NoteScope, id, versionToken, path string, actor Actor) (NoteWriteResult, error)
	// MoveFolder moves every visible note of a folder, in one transaction.
	MoveFolder(ctx context.Context, scope NoteScope, project, from, to string, actor Actor) (MoveFolderResult, error)
	// ListNotes lists the notes directly in a folder and its subfolders.
	ListNotes(ctx context.Context, scope NoteScope, q ListNotesQuery) (NoteListing, error)
	// SearchNotes ranks snippets of what scope may see; vector says whether vectors took part.
	SearchNotes(ctx context.Context, scope NoteScope, q SearchQuery) (hits []SearchHit, vector bool, err error)
	// Context fits the ranked items and their neighbours into budget tokens.
	Context(ctx context.Context, scope NoteScope, query, project string, budget int, minScore float64) (ContextBundle, error)
	// Remember appends an observation to the caller's private memory note of a category.
	Remember(ctx context.Context, scope NoteScope, class, project, category, observation string, actor Actor) (NoteWriteResult, error)
}

// Projects are the folders of notes and an agent's way into them.
type Projects interface {
	// ListProjects lists the projects scope reaches.
	ListProjects(ctx context.Context, scope NoteScope) ([]Project, error)
	// RenameProject gives a project a new handle and/or name; the old handle stays an alias.
	RenameProject(ctx context.Context, scope NoteScope, handle, newHandle, newName string) (Project, error)
	// StartSession is the bootstrap: profile, projects and, with a project, what changed there.
	StartSession(ctx context.Context, scope NoteScope, project string) (Session, error)
	// RecentActivity lists the notes of scope's projects by their latest write.
	RecentActivity(ctx context.Context, scope NoteScope, project string, k int, cursor string) (ActivityPage, error)
}

// Engine is the memory engine: capture, drafts and their calibration, entities, briefings.
type Engine interface {
	// Capture turns raw text into stored facts and drafts with ex.
	Capture(ctx context.Context, in CaptureInput, ex Extractor) (CaptureResult, error)
	ListDrafts(ctx context.Context, status string, limit int) ([]Draft, error)
	// ReviewDraft accepts, rejects or edits-then-accepts an open draft.
	ReviewDraft(ctx context.Context, in ReviewInput) (ReviewResult, error)
	// Thresholds returns the base thresholds and, for extractor, the calibrated ones.
	Thresholds(ctx context.Context, extractor string) (base, calibrated Thresholds, buckets []CalibrationBucket, err error)
	SetThresholds(ctx context.Context, th Thresholds) error
	// ListEntities lists up to limit entities in key order, of entityType if set.
	ListEntities(ctx context.Context, entityType string, limit int) ([]Entity, error)
	// Briefing returns the input of an extractive briefing.
	Briefing(ctx context.Context, since *time.Time, entity *EntityRef, maxTokens int) (BriefingInput, error)
}

// Goals are the tenant's open goals and their triggers.
type Goals interface {
	SetGoal(ctx context.Context, g Goal) (Goal, error)
	ListGoals(ctx context.Context, status string, limit int) ([]Goal, error)
	CloseGoal(ctx context.Context, id, status string) (Goal, error)
}

// Workspace is one tenant's data through every capability.
type Workspace interface {
	Memories
	Retrieval
	Relations
	Notes
	Projects
	Engine
	Goals
}

// Gate admits the tool calls of a tenant. Workspaces that can hold a tenant's writes implement it
// (package cells: a tenant being moved between cells is read-only), and the transport enters it
// around every tool call, so a write is either refused or finished before the hold begins.
type Gate interface {
	// Enter admits one call of tenant (writes: the tool writes) and returns the function that
	// ends it; a write to a tenant held read-only is EUNAVAILABLE.
	Enter(ctx context.Context, tenant string, writes bool) (leave func(), err error)
}

// Workspaces opens tenants' workspaces.
type Workspaces interface {
	// Workspace opens tenant's workspace; create makes it on first use, otherwise an unknown
	// tenant is ENOTFOUND.
	Workspace(ctx context.Context, tenant string, create bool) (Workspace, error)
	// Capabilities say what the engine behind the workspaces can do.
	Capabilities() Capabilities
}
