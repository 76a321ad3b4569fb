package knowmind

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Notes: a shared knowledge base of Markdown notes in projects (seed 004). A note is a memory
// of kind "note" — same chunks, vectors, BM25 statistics and relations as memories and
// documents — plus a project, a folder path, a class, a version token and provenance.
// docs/notes.md maps the seed's names to these.

// KindNote is the Memory.kind of a note.
const KindNote = "note"

// StatusTrashed is the status of a note in the trash: not indexed, so recall, search and lists
// never see it; `knowmind trash restore` makes it indexed again.
const StatusTrashed = "trashed"

// Note classes. The tool decides the class, never the agent.
const (
	ClassUserDoc     = "user-doc"     // knowmind_create_note: shared knowledge of a project
	ClassAgentMemory = "agent-memory" // knowmind_remember_about_project: the agent's private memory
	ClassUserProfile = "user-profile" // knowmind_remember_about_user: the principal's profile
)

// Edit operations of knowmind_edit_note.
const (
	EditAppend         = "append"
	EditPrepend        = "prepend"
	EditReplace        = "replace"
	EditReplaceSection = "replaceSection"
	EditFindReplace    = "findReplace"
)

// DefaultProject is the project every tenant has.
const DefaultProject = "main"

// Limits of notes and projects. The handlers' validate tags are tested against them.
const (
	MaxNoteBodyChars     = 200_000 // a note is read whole by agents; documents take longer texts
	MaxNotePathChars     = 300
	MaxNotePathDepth     = 12
	MaxProjectHandle     = 64
	MaxProjectNameChars  = 200
	MaxNoteLinks         = 50
	MaxSearchLimit       = 25
	DefaultSearchLimit   = 10
	MaxBudgetTokens      = 50_000
	DefaultBudgetTokens  = 4_000
	MaxObservationChars  = 4_000
	MaxCategoryChars     = 100
	MaxWikiLinksPerNote  = 200
	MaxRevisionsReturned = 50
	MaxNoteTypeChars     = 100    // a note's type (frontmatter type:)
	MaxFrontmatterKeys   = 50     // top-level keys of a note's frontmatter (its properties)
	MaxFrontmatterChars  = 10_000 // a note's frontmatter as stored (YAML)
	MaxVersionTokenChars = 100    // a versionToken as get_note hands it out
	MaxFindChars         = 10_000 // edit_note's find text
	MaxNotesCursorChars  = 2_000  // list_notes' nextCursor
)

// Project is a folder tree of notes in a tenant; its handle is shown and taken verbatim.
type Project struct {
	Handle    string    `json:"handle"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Notes     int       `json:"notes"`
	// Aliases are former handles (knowmind_rename_project); they still name the project.
	Aliases []string `json:"aliases,omitempty"`
}

// Provenance says who wrote a note, how and when.
type Provenance struct {
	CreatedBy  string    `json:"createdBy"`
	CreatedVia string    `json:"createdVia"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedBy  string    `json:"updatedBy"`
	UpdatedVia string    `json:"updatedVia"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// ActorKind is "agent" for writes through MCP tools, "human" for the CLI.
	ActorKind string `json:"actorKind"`
}

// Note is a note as get_note returns it.
type Note struct {
	ID           string         `json:"id"`
	Project      string         `json:"project,omitempty"`
	Path         string         `json:"path"`
	Title        string         `json:"title"`
	Content      string         `json:"content"`
	Frontmatter  map[string]any `json:"frontmatter"`
	Type         string         `json:"type,omitempty"`
	Tags         []string       `json:"tags"`
	Class        string         `json:"class"`
	Status       string         `json:"status"`
	VersionToken string         `json:"versionToken"`
	Revision     int            `json:"revision"`
	Aliases      []string       `json:"aliases"`
	Provenance   Provenance     `json:"provenance"`
	Outline      []Heading      `json:"outline,omitempty"`
	Links        *NoteLinks     `json:"links,omitempty"`
}

// Heading is one line of a note's outline.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// NoteLinks are a note's current edges, both ways, and its unresolved forward references.
type NoteLinks struct {
	Out     []NoteLink `json:"out"`
	In      []NoteLink `json:"in"`
	Pending []NoteLink `json:"pending"`
}

// NoteLink is one edge of a note: the peer (id, title) and the relation type. A pending link has
// only the title it waits for.
type NoteLink struct {
	RelType string `json:"relType"`
	ID      string `json:"id,omitempty"`
	Title   string `json:"title"`
}

// Revision is a former body of a note, kept by every write.
type Revision struct {
	Revision     int        `json:"revision"`
	VersionToken string     `json:"versionToken"`
	Title        string     `json:"title"`
	Content      string     `json:"content,omitempty"`
	ValidFrom    time.Time  `json:"validFrom"`
	ValidTo      *time.Time `json:"validTo,omitempty"`
	By           string     `json:"by"`
}

// CreateNoteInput is what creating a note needs; Class, Owner and Actor come from the tool and
// the token, never from the agent.
type CreateNoteInput struct {
	Project string
	Body    string
	Path    string
	Type    string
	Tags    []string
	Links   []LinkSpec
	Class   string
	Owner   string // principal of private memory; "" for shared notes
	Actor   Actor
}

// LinkSpec is a typed link to add: to a note id, or (forward reference) to a title.
type LinkSpec struct {
	RelType string `json:"relType,omitempty"` // default REFERENCES
	To      string `json:"to,omitempty"`
	ToTitle string `json:"toTitle,omitempty"`
}

// Actor is who writes, through which tool.
type Actor struct {
	Principal string
	Via       string // tool or CLI command
	Human     bool
}

// EditNoteInput is one edit_note call.
type EditNoteInput struct {
	ID           string
	VersionToken string
	Op           string
	Content      string
	Heading      string // replaceSection
	Find         string // findReplace
	Actor        Actor
}

// NoteWriteResult is what create_note and edit_note return.
type NoteWriteResult struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Project      string   `json:"project,omitempty"`
	Path         string   `json:"path"`
	Class        string   `json:"class"`
	VersionToken string   `json:"versionToken"`
	Revision     int      `json:"revision"`
	Links        []string `json:"links"`        // titles resolved to edges
	PendingLinks []string `json:"pendingLinks"` // forward references, resolved when the title appears
	// Unlinked are the [[titles]] an edit took out of the body whose edge it closed (valid_to;
	// history keeps it) or whose forward reference it dropped.
	Unlinked []string `json:"unlinked,omitempty"`
	// LinksDropped are the links (given or [[in the body]]) that were not made, each with why:
	// the note is written by then, so a link that fails is reported, not the write refused.
	LinksDropped []DroppedLink `json:"linksDropped,omitempty"`
	// LinksTruncated counts the body's [[links]] past MaxWikiLinksPerNote, which were not linked.
	LinksTruncated int `json:"linksTruncated,omitempty"`
	// PMMatches: event goals the note's text fired (knowmind_set_goal); only when some did.
	PMMatches []GoalMatch `json:"pm_matches,omitempty"`
}

// DroppedLink is one link of a note write that was not made.
type DroppedLink struct {
	RelType string `json:"relType"`
	To      string `json:"to,omitempty"`
	ToTitle string `json:"toTitle,omitempty"`
	Reason  string `json:"reason"`
}

// SearchHit is one ranked snippet of knowmind_search.
type SearchHit struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Project string   `json:"project,omitempty"`
	Path    string   `json:"path"`
	Class   string   `json:"class"`
	Kind    string   `json:"kind"`
	Tags    []string `json:"tags"`
	Snippet string   `json:"snippet"`
	Score   float64  `json:"score"`
}

// SearchQuery is one knowmind_search.
type SearchQuery struct {
	Query   string
	Project string // "" = every project of the scope
	Path    string // folder; its subfolders included
	Tag     string
	Limit   int
	// MinScore leaves out hits scoring below it (RecallMinScore unless the caller
	// asks for another).
	MinScore float64
}

// ContextItem is one entry of a context bundle.
type ContextItem struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	Class   string  `json:"class,omitempty"`
	Title   string  `json:"title"`
	Project string  `json:"project,omitempty"`
	Path    string  `json:"path,omitempty"`
	Score   float64 `json:"score"`
	Content string  `json:"content"`
	Tokens  int     `json:"tokens"`
	// Truncated: the content was cut to fit the budget.
	Truncated bool `json:"truncated,omitempty"`
}

// ContextBundle is what knowmind_context returns.
type ContextBundle struct {
	Items        []ContextItem `json:"items"`
	TokensUsed   int           `json:"tokensUsed"`
	BudgetTokens int           `json:"budgetTokens"`
	Vector       bool          `json:"vector"`
}

// RenameResult is the renamed note and the notes whose [[links]] were rewritten.
type RenameResult struct {
	NoteWriteResult
	Rewritten []string `json:"rewritten"` // ids of referring notes now linking the new title
}

// MoveFolderResult says how many notes moved, and which.
type MoveFolderResult struct {
	Project string   `json:"project"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Moved   int      `json:"moved"`
	IDs     []string `json:"ids"`
}

// ListNotesQuery is one knowmind_list_notes page.
type ListNotesQuery struct {
	Project string
	Path    string
	Tag     string
	Limit   int
	Cursor  string
}

// NoteScope is what a caller may see of notes: the projects of its token (nil = all), its
// own principal (for private memory) and its toolsets (nil = all): notes belong to the notes
// toolset, so a token without it sees none, whichever tool it calls. Memories, documents,
// goals and drafts belong to no project; a tenant's namespace bounds them.
type NoteScope struct {
	Projects  []string
	Principal string
	Toolsets  []string
}

// ReachesNotes reports whether the scope's toolsets include the notes.
func (s NoteScope) ReachesNotes() bool {
	return s.Toolsets == nil || slices.Contains(s.Toolsets, ToolsetNotes)
}

type noteScopeKey struct{}

// WithNoteScope returns ctx carrying the caller's scope. The transport sets it once per call,
// before any tool runs, so every service method that takes an id can check the node it
// reads against the caller, whichever handler called it.
func WithNoteScope(ctx context.Context, s NoteScope) context.Context {
	return context.WithValue(ctx, noteScopeKey{}, s)
}

// NoteScopeFrom is the scope ctx carries; ok is false for calls from inside the service
// (commands, imports, tests), which see the whole tenant.
func NoteScopeFrom(ctx context.Context) (s NoteScope, ok bool) {
	s, ok = ctx.Value(noteScopeKey{}).(NoteScope)
	return s, ok
}

// AllowsProject reports whether the scope reaches project handle.
func (s NoteScope) AllowsProject(handle string) bool {
	return s.Projects == nil || slices.Contains(s.Projects, handle)
}

// VersionConflict is the error of a CAS write whose token is stale: it carries the current one.
func VersionConflict(current string) *Error {
	return &Error{Code: ECONFLICT, Message: "versionConflict: the note changed since your versionToken; read it again with knowmind_get_note and retry",
		Data: map[string]any{"versionConflict": true, "currentVersionToken": current}}
}

// CleanNotePath checks and normalises a folder path: segments separated by "/", no empty, "."
// or ".." segment, not absolute, no control characters, bounded. "" is the project's root.
func CleanNotePath(param, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", nil
	}
	if utf8.RuneCountInString(p) > MaxNotePathChars {
		return "", InvalidParam(param, "%s exceeds %d characters", param, MaxNotePathChars)
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "\\") || (len(p) > 1 && p[1] == ':') {
		return "", InvalidParam(param, "%s must be relative (no leading / or drive)", param)
	}
	if strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == '\\' }) {
		return "", InvalidParam(param, "%s must not contain control characters or backslashes", param)
	}
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	if len(segs) > MaxNotePathDepth {
		return "", InvalidParam(param, "%s is deeper than %d folders", param, MaxNotePathDepth)
	}
	for i, s := range segs {
		s = strings.TrimSpace(s)
		if s == "" || s == "." || s == ".." {
			return "", InvalidParam(param, "%s must not contain empty, . or .. segments", param)
		}
		segs[i] = s
	}
	return strings.Join(segs, "/"), nil
}

// ValidProjectHandle checks a project handle: a slug of lower-case letters, digits, "-" and "_"
// (other scripts' letters allowed), 1..MaxProjectHandle characters.
func ValidProjectHandle(h string) error {
	if h == "" || utf8.RuneCountInString(h) > MaxProjectHandle {
		return InvalidParam("project", "project handle must have 1 to %d characters", MaxProjectHandle)
	}
	for _, r := range h {
		if !(unicode.IsLower(r) || unicode.IsDigit(r) || r == '-' || r == '_' || (unicode.IsLetter(r) && !unicode.IsUpper(r))) {
			return InvalidParam("project", "project handle %q: use lower-case letters, digits, - and _", h)
		}
	}
	return nil
}

// ApproxTokens estimates the LLM tokens of a text (about four characters a token), the unit of
// the context bundle's budget.
func ApproxTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// Limits of the bootstrap and navigation tools (knowmind_start_session, knowmind_list_notes,
// knowmind_recent_activity).
const (
	MaxListNotes     = 100  // knowmind_list_notes limit
	DefaultListNotes = 50   //
	MaxActivity      = 50   // knowmind_recent_activity limit
	DefaultActivity  = 20   //
	MaxBatchNotes    = 50   // knowmind_create_notes: notes per call
	MaxBatchLinks    = 100  // knowmind_link_many: links per call
	MaxDeltaItems    = 100  // per kind (created, edited, trashed) in start_session's delta
	MaxIndexedNotes  = 5000 // notes read for a project index and its knownValues
	MaxKnownValues   = 50   // per kind in knownValues, most used first
	ActivityCreated  = "created"
	ActivityEdited   = "edited"
	ActivityTrashed  = "trashed"
	VectorSemantic   = "semantic" // Capabilities.Vector: a learned embedding model
	VectorLexical    = "lexical"  // the hash embedder: character n-grams, no meaning
	VectorNone       = "none"     // no embedder: full text only
)

// Capabilities say what the engine behind the tools can do.
type Capabilities struct {
	Vector    string `json:"vector"` // VectorSemantic, VectorLexical or VectorNone
	Trash     bool   `json:"trash"`
	Revisions bool   `json:"revisions"`
}

// ProfileEntry is one category of the caller's private user profile.
type ProfileEntry struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Content  string `json:"content"`
}

// ValueCount is a value in use and how many notes use it.
type ValueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// KnownValues are the categories, tags and types in use, most used first.
type KnownValues struct {
	Categories []ValueCount `json:"categories"`
	Tags       []ValueCount `json:"tags"`
	Types      []ValueCount `json:"types"`
}

// ProjectIndex is start_session's compact view of one project.
type ProjectIndex struct {
	Project string `json:"project"`
	Notes   int    `json:"notes"`
	// Folders are the top-level folders with the number of notes in them and below.
	Folders   []ValueCount `json:"folders"`
	Truncated bool         `json:"truncated"` // more than MaxIndexedNotes notes: counts are of the first ones
}

// ActivityItem is one note's latest change: who, how, where and when.
type ActivityItem struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Project   string    `json:"project,omitempty"`
	Path      string    `json:"path"`
	Operation string    `json:"operation"` // ActivityCreated, ActivityEdited, ActivityTrashed
	By        string    `json:"by"`
	Via       string    `json:"via"`
	ActorKind string    `json:"actorKind"`
	At        time.Time `json:"updated_at"`
	Revision  int       `json:"revision"`
}

// SessionDelta is what others changed in a project since the caller's previous start_session.
type SessionDelta struct {
	Since      *time.Time     `json:"since"` // null on the first visit
	FirstVisit bool           `json:"firstVisit"`
	Created    []ActivityItem `json:"created"`
	Edited     []ActivityItem `json:"edited"`
	Trashed    []ActivityItem `json:"trashed"`
	Truncated  bool           `json:"truncated"`
}

// Session is knowmind_start_session's answer.
type Session struct {
	Principal   string         `json:"principal"`
	Profile     []ProfileEntry `json:"profile"`
	Projects    []Project      `json:"projects"`
	Index       *ProjectIndex  `json:"index,omitempty"`
	Delta       *SessionDelta  `json:"delta,omitempty"`
	KnownValues *KnownValues   `json:"knownValues,omitempty"`
}

// NoteSummary is a note in a listing.
type NoteSummary struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Path         string    `json:"path"`
	Type         string    `json:"type,omitempty"`
	Tags         []string  `json:"tags"`
	VersionToken string    `json:"versionToken"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// NoteListing is one page of knowmind_list_notes.
type NoteListing struct {
	Project    string        `json:"project"`
	Path       string        `json:"path"`
	Folders    []ValueCount  `json:"folders"` // direct subfolders with their notes (and below)
	Notes      []NoteSummary `json:"notes"`
	NextCursor *string       `json:"nextCursor"`
}

// ActivityPage is one page of knowmind_recent_activity.
type ActivityPage struct {
	Items      []ActivityItem `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}
