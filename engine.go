package knowmind

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The memory engine (seed 001): knowmind_capture turns raw text into facts.
// An Extractor proposes candidate facts with a confidence; routing stores
// the confident ones as memories, keeps the uncertain ones as drafts for
// review and drops the rest; reviews calibrate the routing per tenant.

// Routing defaults (the seed's numbers): confidence >= DefaultStoreThreshold
// is stored, >= DefaultDraftThreshold kept as a draft, below dropped. Each
// tenant may set its own (knowmind_set_capture_thresholds); reviews move them
// (see Calibrate).
const (
	DefaultStoreThreshold = 0.85
	DefaultDraftThreshold = 0.40
)

// Calibration rule: confidences are grouped in buckets of CalibrationBucketWidth
// per extractor. A bucket right below the store threshold whose drafts were
// accepted at least CalibrationPromoteRate of at least CalibrationMinReviews
// reviews is stored directly from then on (the threshold moves down one
// bucket, repeatedly). Facts such a bucket stored without review that
// knowmind_update_fact later superseded count like rejects, so a bucket whose
// direct stores keep being corrected falls below the rate and moves back to
// drafts. A bucket right above the draft threshold whose drafts were rejected
// at least CalibrationPromoteRate of as many reviews is dropped (the draft
// threshold moves up).
const (
	CalibrationBucketWidth = 0.05
	CalibrationMinReviews  = 20
	CalibrationPromoteRate = 0.90
)

// Bounds of the engine's inputs.
const (
	MaxCaptureChars    = 100_000 // text of one capture
	MaxCaptureFacts    = 200     // candidates kept from one capture
	MaxFactChars       = 2000    // text of one fact or draft
	MaxEntitiesPerFact = 20
	MaxEntityNameChars = 200
	MaxListDrafts      = 200
	MaxListEntities    = 500
	MaxReviewerChars   = 200
	MaxExtractorChars  = 64 // an extractor's name (rules, llm)
)

// Statuses of a draft.
const (
	DraftOpen     = "draft"
	DraftAccepted = "accepted"
	DraftRejected = "rejected"
)

// Review actions of knowmind_review_draft.
const (
	ReviewAccept = "accept"
	ReviewReject = "reject"
	ReviewEdit   = "edit" // edit the text, then accept
)

// EntityRef names an entity as every memory in a result lists it (the seed's
// entities: [{type, id}]).
type EntityRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Entity is a person, organisation, project, ... that facts are about. Its
// key is Type plus ID, a slug of the name (EntitySlug).
type Entity struct {
	Type    string   `json:"type"`
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	Facts   int      `json:"facts"` // current memories naming it
}

// Span is where a fact came from in the captured text, in characters
// (Unicode code points), end exclusive. Zero when unknown.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// CandidateEntity is an entity an extractor recognised in a candidate.
type CandidateEntity struct {
	Type string
	ID   string // slug; EntitySlug(Name) when empty
	Name string
}

// Candidate is one fact an extractor proposes.
type Candidate struct {
	Text       string
	Span       Span
	Confidence float64 // 0..1
	Entities   []CandidateEntity
	// Features say why the confidence is what it is (entity, number, date, decision, hedge, ...).
	Features []string
	// ForceDraft keeps the candidate as a draft whatever its confidence, with Reason
	// (e.g. the llm's output failed validation).
	ForceDraft bool
	Reason     string
}

// ExtractRequest is what an extractor gets: the text and the domain's vocabulary.
type ExtractRequest struct {
	Text        string
	Known       []Entity // the tenant's entities (names and aliases)
	EntityTypes []string // the domain's entity types; extractors report no others
	Categories  []string
}

// Extractor turns text into candidate facts. An error is the provider's
// (EPROVIDER); invalid output is not an error but drafts with a reason.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, req ExtractRequest) ([]Candidate, error)
}

// CaptureInput are knowmind_capture's parameters after defaults.
type CaptureInput struct {
	Text       string
	Source     string
	Category   string
	OccurredAt *time.Time
	// Vocabulary: the domain's entity types and categories as the transport last read
	// them; nil = the shapes the graph client was opened with.
	EntityTypes, Categories []string
}

// Thresholds are a tenant's routing thresholds for one extractor.
type Thresholds struct {
	Store float64 `json:"store"`
	Draft float64 `json:"draft"`
}

// Route says where a candidate of confidence c goes under th: "stored",
// "draft" or "dropped".
func (th Thresholds) Route(c float64) string {
	switch {
	case c >= th.Store-1e-9:
		return RouteStored
	case c >= th.Draft-1e-9:
		return RouteDraft
	}
	return RouteDropped
}

// Routes of a candidate.
const (
	RouteStored  = "stored"
	RouteDraft   = "draft"
	RouteDropped = "dropped"
)

// CapturedFact is one stored fact or draft in a capture's answer.
type CapturedFact struct {
	ID         string      `json:"id"`
	Text       string      `json:"text"`
	Confidence float64     `json:"confidence"`
	Entities   []EntityRef `json:"entities"`
	EntityType string      `json:"entity_type,omitempty"` // the first entity (seed: compatibility)
	EntityID   string      `json:"entity_id,omitempty"`
	Span       Span        `json:"span"`
	Reason     string      `json:"reason,omitempty"` // why a draft is a draft when not its confidence
	// Unchanged: the same text was already a current memory (stored) or an open draft
	// (drafts); ID is that one's and nothing was written.
	Unchanged bool `json:"unchanged,omitempty"`
}

// Conflict is a new fact that contradicts a current memory about the same entity.
type Conflict struct {
	NewID        string `json:"new_id"`
	NewStatus    string `json:"new_status"` // stored or draft
	ExistingID   string `json:"existing_id"`
	ExistingText string `json:"existing_text"`
	Reason       string `json:"reason"`
}

// CaptureResult is knowmind_capture's answer (the seed's memory_store).
type CaptureResult struct {
	Stored     []CapturedFact `json:"stored"`
	Drafts     []CapturedFact `json:"drafts"`
	PMMatches  []GoalMatch    `json:"pm_matches"` // event goals the stored facts fired (knowmind_set_goal)
	Conflicts  []Conflict     `json:"conflicts"`
	Dropped    int            `json:"dropped"`
	Extractor  string         `json:"extractor"`
	Thresholds Thresholds     `json:"thresholds"`
}

// Draft is a fact waiting for review.
type Draft struct {
	ID         string      `json:"id"`
	Text       string      `json:"text"`
	Confidence float64     `json:"confidence"`
	Status     string      `json:"status"`
	Reason     string      `json:"reason,omitempty"`
	Extractor  string      `json:"extractor"`
	Source     string      `json:"source,omitempty"`
	Category   string      `json:"category,omitempty"`
	Entities   []EntityRef `json:"entities"`
	Span       Span        `json:"span"`
	// ConflictsWith are current memories this draft contradicts (linked CONTRADICTS on accept).
	ConflictsWith []string   `json:"conflicts_with,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	ReviewedAt    *time.Time `json:"reviewed_at,omitempty"`
	ReviewedBy    string     `json:"reviewed_by,omitempty"`
	MemoryID      string     `json:"memory_id,omitempty"` // the memory an accepted draft became
}

// ReviewInput is one review of a draft.
type ReviewInput struct {
	DraftID  string
	Action   string // ReviewAccept, ReviewReject, ReviewEdit
	Text     string // ReviewEdit: the corrected text
	Reviewer string // who reviewed (the token id)
}

// ReviewResult is knowmind_review_draft's answer.
type ReviewResult struct {
	DraftID    string     `json:"draft_id"`
	Status     string     `json:"status"`
	MemoryID   string     `json:"memory_id,omitempty"`
	Thresholds Thresholds `json:"thresholds"` // the extractor's thresholds after this review
	// PMMatches: event goals the accepted fact fired (knowmind_set_goal); only when some did.
	PMMatches []GoalMatch `json:"pm_matches,omitempty"`
}

// CalibrationBucket is the review record of one confidence bucket of one extractor.
type CalibrationBucket struct {
	Extractor string  `json:"extractor"`
	From      float64 `json:"from"` // bucket [From, From+CalibrationBucketWidth)
	Accepted  int     `json:"accepted"`
	Rejected  int     `json:"rejected"`
	// Superseded: facts of the bucket stored without review that knowmind_update_fact
	// later replaced; they count against the bucket like rejects.
	Superseded int `json:"superseded"`
}

// Bucket is the index of the calibration bucket holding confidence c.
func Bucket(c float64) int { return int(math.Floor(c/CalibrationBucketWidth + 1e-9)) }

// Calibrate moves base thresholds by the review record (see the rule above).
func Calibrate(base Thresholds, buckets map[int]CalibrationBucket) Thresholds {
	th := base
	for {
		b := int(math.Ceil(th.Store/CalibrationBucketWidth-1e-9)) - 1 // the bucket right below Store
		from := float64(b) * CalibrationBucketWidth
		rec, ok := buckets[b]
		n := rec.Accepted + rec.Rejected + rec.Superseded
		if !ok || from < th.Draft-1e-9 || n < CalibrationMinReviews || float64(rec.Accepted) < CalibrationPromoteRate*float64(n) {
			break
		}
		th.Store = round2(from)
	}
	for {
		b := Bucket(th.Draft)
		to := float64(b+1) * CalibrationBucketWidth
		rec, ok := buckets[b]
		n := rec.Accepted + rec.Rejected
		if !ok || to > th.Store+1e-9 || n < CalibrationMinReviews || float64(rec.Rejected) < CalibrationPromoteRate*float64(n) {
			break
		}
		th.Draft = round2(to)
	}
	return th
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// EntitySlug is an entity's id from its name: lower case, German umlauts and
// ß transliterated, every other run of non-letters and non-digits one '-'
// ("Lisa Müller" → "lisa-mueller", the seed's example).
func EntitySlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		switch r {
		case 'ä':
			b.WriteString("ae")
		case 'ö':
			b.WriteString("oe")
		case 'ü':
			b.WriteString("ue")
		case 'ß':
			b.WriteString("ss")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Validate checks a whole draft record (an imported one) by the bounds knowmind_capture applies
// to a new one, naming the record's parameter, draft.
func (d Draft) Validate() error {
	switch {
	case strings.TrimSpace(d.ID) == "" || utf8.RuneCountInString(d.ID) > MaxIDChars:
		return InvalidParam("draft", "draft.id is required (at most %d characters)", MaxIDChars)
	case strings.TrimSpace(d.Text) == "" || utf8.RuneCountInString(d.Text) > MaxFactChars:
		return InvalidParam("draft", "draft.text is required (at most %d characters)", MaxFactChars)
	case !slices.Contains([]string{DraftOpen, DraftAccepted, DraftRejected}, d.Status):
		return InvalidParam("draft", "draft.status must be draft, accepted or rejected")
	case d.Confidence < 0 || d.Confidence > 1:
		return InvalidParam("draft", "draft.confidence must lie in 0..1")
	case len(d.Entities) > MaxEntitiesPerFact || len(d.ConflictsWith) > MaxEntitiesPerFact:
		return InvalidParam("draft", "draft.entities and draft.conflicts_with hold at most %d each", MaxEntitiesPerFact)
	}
	for _, e := range d.Entities {
		if EntitySlug(e.ID) != e.ID || e.ID == "" || len(e.ID) > MaxIDChars || e.Type == "" || len(e.Type) > 64 {
			return InvalidParam("draft", "draft.entities: %q/%q is no entity reference", e.Type, e.ID)
		}
	}
	return nil
}
