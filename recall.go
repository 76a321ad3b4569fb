package knowmind

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds and defaults of knowmind_recall and knowmind_recall_at_time (spec: k 1..25 default 5,
// hops 0..3 default 2).
const (
	RecallDefaultK    = 5
	RecallMaxK        = 25
	RecallDefaultHops = 2
	RecallMaxHops     = 3
	// RecallMaxQueryChars bounds the query text (the spec gives no limit; this keeps a query
	// embeddable and its full-text part small).
	RecallMaxQueryChars = 4000
	// RecallMinScore is the tools' default floor: hits scoring below it are left out, so a
	// question the workspace does not answer returns few hits or none rather than the least
	// bad ones. What a score means: README, section Recall.
	RecallMinScore = 0.1
	// RecallMaxScore is the top of the score scale (scores lie in 0..1), so also the largest
	// min_score.
	RecallMaxScore = 1
)

// RecallQuery is one recall. AsOf nil asks for what is current (knowmind_recall: superseded
// versions never appear); AsOf set asks for what was valid then (knowmind_recall_at_time:
// valid_from ≤ AsOf and valid_to unset or > AsOf, for memories and for relation edges).
type RecallQuery struct {
	Query string
	K     int // 1..RecallMaxK; handlers apply the default
	Hops  int // 0..RecallMaxHops; handlers apply the default (0 is a valid value)
	AsOf  *time.Time
	// AskedAt is when the question is asked: the times it names relative to that ("last
	// week", "gestern", "vor zwei Wochen") are resolved against it, on its zone's calendar.
	// Zero: AsOf when set (recall_at_time asks as of then), else the time of the call. The
	// tools leave it zero; a caller replaying a conversation sets the conversation's time.
	AskedAt time.Time
	// MinScore leaves out hits scoring below it (0..1; 0 keeps every hit). The tools pass
	// RecallMinScore unless the caller asks for another.
	MinScore float64
}

// Asked is the time q is asked at (AskedAt), now when neither AskedAt nor AsOf is set.
func (q RecallQuery) Asked(now time.Time) time.Time {
	switch {
	case !q.AskedAt.IsZero():
		return q.AskedAt
	case q.AsOf != nil:
		return *q.AsOf
	}
	return now
}

// Validate checks a recall's parameters, naming the one at fault (EINVALID, -32602).
func (q RecallQuery) Validate() error {
	query := strings.TrimSpace(q.Query)
	if query == "" {
		return InvalidParam("query", "query is required and must not be empty")
	}
	if utf8.RuneCountInString(query) > RecallMaxQueryChars {
		return InvalidParam("query", "query exceeds %d characters", RecallMaxQueryChars)
	}
	if q.K < 1 || q.K > RecallMaxK {
		return InvalidParam("k", "k must be between 1 and %d", RecallMaxK)
	}
	if q.Hops < 0 || q.Hops > RecallMaxHops {
		return InvalidParam("hops", "hops must be between 0 and %d", RecallMaxHops)
	}
	if !(q.MinScore >= 0 && q.MinScore <= RecallMaxScore) {
		return InvalidParam("min_score", "min_score must be between 0 and %d", RecallMaxScore)
	}
	return nil
}

// RecallHit is one memory or document a recall returns.
type RecallHit struct {
	MemoryID string `json:"memory_id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	// Content is the memory's content for a memory (cut at RecallMaxContentChars), and for a
	// document the text of its best-matching chunk (its first chunk when it was reached only
	// through the graph): a document can be a million characters, a chunk is what matched.
	Content string `json:"content"`
	// Score lies in 0..1 and never increases down the list. It is absolute, not relative to
	// the best hit: how much of the query the memory holds (README, section Recall).
	Score  float64 `json:"score"`
	Source string  `json:"source,omitempty"`
	// ValidFrom and ValidTo are reported by recall_at_time (ValidTo absent: still valid).
	ValidFrom *time.Time `json:"valid_from,omitempty"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	// Entities the memory names (seed 001: entities [{type, id}]); EntityType and EntityID
	// repeat the first one for compatibility, as the seed asks.
	Entities   []EntityRef `json:"entities"`
	EntityType string      `json:"entity_type,omitempty"`
	EntityID   string      `json:"entity_id,omitempty"`
}

// RecallMaxContentChars bounds a hit's content; longer content ends in "…".
const RecallMaxContentChars = 4000

// RecallResult is what knowmind_recall and knowmind_recall_at_time return.
type RecallResult struct {
	Hits      []RecallHit `json:"hits"`
	ElapsedMS int64       `json:"elapsed_ms"`
	// Rerank names the cross-encoder that reordered the hits, or "none" when no reranker is
	// configured (or it was switched off): recall never pretends to rerank.
	Rerank string `json:"rerank"`
}
