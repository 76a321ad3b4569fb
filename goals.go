package knowmind

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Prospective memory (seed 001, memory_set_goal): a goal is a future-directed
// reminder. A time goal comes due at DueAt; an event goal fires when a write
// (store, capture, upload, update) brings a memory its trigger matches. Both
// may expire. Open goals stay open when they fire (each match is recorded)
// until knowmind_close_goal closes them done or cancelled.

// Statuses of a goal.
const (
	GoalOpen      = "open"
	GoalDone      = "done"
	GoalCancelled = "cancelled"
)

// Kinds of a goal.
const (
	GoalTime  = "time"
	GoalEvent = "event"
)

// Bounds of goals.
const (
	MaxGoalChars       = 2000
	MaxGoalWords       = 20
	MaxGoalTags        = 20
	MaxGoalWordChars   = 100 // one trigger word
	MaxGoalsListed     = 500
	MaxGoalMatchesKept = 50 // matches a goal lists (the count goes on)
)

// GoalTrigger is an event goal's trigger. Every part given must match: all
// Words appear in the memory's text as whole words (case-insensitive), the
// memory names Entity, carries at least one of Tags, is of Category.
type GoalTrigger struct {
	Words    []string   `json:"words,omitempty"`
	Entity   *EntityRef `json:"entity,omitempty"`
	Tags     []string   `json:"tags,omitempty"`
	Category string     `json:"category,omitempty"`
}

// Empty says the trigger has no part.
func (g GoalTrigger) Empty() bool {
	return len(g.Words) == 0 && g.Entity == nil && len(g.Tags) == 0 && g.Category == ""
}

// Goal is a reminder (the seed's goal).
type Goal struct {
	ID          string       `json:"id"`
	Text        string       `json:"text"`
	Kind        string       `json:"kind"` // time or event
	Status      string       `json:"status"`
	DueAt       *time.Time   `json:"due_at,omitempty"`
	Due         bool         `json:"due"` // a time goal whose due_at has passed while open
	Trigger     *GoalTrigger `json:"trigger,omitempty"`
	ExpiresAt   *time.Time   `json:"expires_at,omitempty"`
	Expired     bool         `json:"expired"`
	CreatedAt   time.Time    `json:"created_at"`
	ClosedAt    *time.Time   `json:"closed_at,omitempty"`
	FiredCount  int          `json:"fired_count"`
	LastFiredAt *time.Time   `json:"last_fired_at,omitempty"`
	MatchedIDs  []string     `json:"matched_memory_ids"` // newest first, at most MaxGoalMatchesKept
}

// GoalMatch is an event goal fired by a write (the seed's pm_matches[]).
type GoalMatch struct {
	GoalID   string `json:"goal_id"`
	GoalText string `json:"goal_text"`
	MemoryID string `json:"memory_id"`
	Reason   string `json:"reason"` // which trigger parts matched
}

// WrittenMemory is what goal matching sees of a memory a write stored.
type WrittenMemory struct {
	ID       string
	Text     string
	Tags     []string
	Category string
	Entities []EntityRef
}

// Words splits text into lower-case words (letters and digits).
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// GoalIndex finds the open event goals a written memory may fire without
// looking at every goal: each goal is posted under one key of its trigger
// (its first word, its entity, each tag, its category) and only the goals
// posted under a key of the memory are checked in full.
type GoalIndex struct {
	goals map[string]Goal
	post  map[string][]string // key → goal ids
}

// NewGoalIndex indexes the open, unexpired event goals among goals.
func NewGoalIndex(goals []Goal, now time.Time) *GoalIndex {
	ix := &GoalIndex{goals: map[string]Goal{}, post: map[string][]string{}}
	for _, g := range goals {
		ix.Add(g, now)
	}
	return ix
}

// Len is the number of goals indexed.
func (ix *GoalIndex) Len() int { return len(ix.goals) }

// Add indexes one goal (ignored unless open, unexpired and event-triggered).
func (ix *GoalIndex) Add(g Goal, now time.Time) {
	if g.Status != GoalOpen || g.Trigger == nil || g.Trigger.Empty() || (g.ExpiresAt != nil && !now.Before(*g.ExpiresAt)) {
		return
	}
	ix.goals[g.ID] = g
	tr := g.Trigger
	switch {
	case tr.Entity != nil:
		ix.post["e:"+tr.Entity.Type+"/"+tr.Entity.ID] = append(ix.post["e:"+tr.Entity.Type+"/"+tr.Entity.ID], g.ID)
	case len(tr.Words) > 0:
		w := Words(tr.Words[0])
		if len(w) > 0 {
			ix.post["w:"+w[0]] = append(ix.post["w:"+w[0]], g.ID)
		}
	case tr.Category != "":
		ix.post["c:"+tr.Category] = append(ix.post["c:"+tr.Category], g.ID)
	default:
		for _, tag := range tr.Tags {
			ix.post["t:"+strings.ToLower(tag)] = append(ix.post["t:"+strings.ToLower(tag)], g.ID)
		}
	}
}

// Match returns the goals the memory fires, each once, in goal id order of discovery.
func (ix *GoalIndex) Match(m WrittenMemory, now time.Time) []GoalMatch {
	words := map[string]bool{}
	for _, w := range Words(m.Text) {
		words[w] = true
	}
	keys := make([]string, 0, len(words)+len(m.Tags)+len(m.Entities)+1)
	for w := range words {
		keys = append(keys, "w:"+w)
	}
	for _, e := range m.Entities {
		keys = append(keys, "e:"+e.Type+"/"+e.ID)
	}
	for _, tag := range m.Tags {
		keys = append(keys, "t:"+strings.ToLower(tag))
	}
	if m.Category != "" {
		keys = append(keys, "c:"+m.Category)
	}
	seen := map[string]bool{}
	var out []GoalMatch
	for _, k := range keys {
		for _, id := range ix.post[k] {
			if seen[id] {
				continue
			}
			seen[id] = true
			g := ix.goals[id]
			if g.ExpiresAt != nil && !now.Before(*g.ExpiresAt) {
				continue
			}
			if reason, ok := matchTrigger(*g.Trigger, m, words); ok {
				out = append(out, GoalMatch{GoalID: g.ID, GoalText: g.Text, MemoryID: m.ID, Reason: reason})
			}
		}
	}
	return out
}

func matchTrigger(tr GoalTrigger, m WrittenMemory, words map[string]bool) (string, bool) {
	var why []string
	if len(tr.Words) > 0 {
		for _, phrase := range tr.Words {
			for _, w := range Words(phrase) {
				if !words[w] {
					return "", false
				}
			}
		}
		why = append(why, "words "+strings.Join(tr.Words, ", "))
	}
	if tr.Entity != nil {
		ok := false
		for _, e := range m.Entities {
			ok = ok || (e.Type == tr.Entity.Type && e.ID == tr.Entity.ID)
		}
		if !ok {
			return "", false
		}
		why = append(why, "entity "+tr.Entity.Type+"/"+tr.Entity.ID)
	}
	if len(tr.Tags) > 0 {
		hit := ""
		for _, want := range tr.Tags {
			for _, have := range m.Tags {
				if hit == "" && strings.EqualFold(want, have) {
					hit = have
				}
			}
		}
		if hit == "" {
			return "", false
		}
		why = append(why, "tag "+hit)
	}
	if tr.Category != "" {
		if m.Category != tr.Category {
			return "", false
		}
		why = append(why, "category "+tr.Category)
	}
	return strings.Join(why, "; "), true
}

// Validate checks a whole goal record (an imported one) by the bounds knowmind_set_goal applies
// to a new one, naming the record's parameter, goal.
func (g Goal) Validate() error {
	switch {
	case strings.TrimSpace(g.ID) == "" || utf8.RuneCountInString(g.ID) > MaxIDChars:
		return InvalidParam("goal", "goal.id is required (at most %d characters)", MaxIDChars)
	case strings.TrimSpace(g.Text) == "" || utf8.RuneCountInString(g.Text) > MaxGoalChars:
		return InvalidParam("goal", "goal.text is required (at most %d characters)", MaxGoalChars)
	case !slices.Contains([]string{GoalOpen, GoalDone, GoalCancelled}, g.Status):
		return InvalidParam("goal", "goal.status must be open, done or cancelled")
	case g.Kind == GoalTime && g.DueAt == nil:
		return InvalidParam("goal", "a time goal needs goal.due_at")
	case g.Kind == GoalEvent && (g.Trigger == nil || g.Trigger.Empty()):
		return InvalidParam("goal", "an event goal needs goal.trigger")
	case g.Kind != GoalTime && g.Kind != GoalEvent:
		return InvalidParam("goal", "goal.kind must be time or event")
	case len(g.MatchedIDs) > MaxGoalMatchesKept || g.FiredCount < 0:
		return InvalidParam("goal", "goal.matched_memory_ids holds at most %d ids", MaxGoalMatchesKept)
	}
	if tr := g.Trigger; tr != nil && (len(tr.Words) > MaxGoalWords || len(tr.Tags) > MaxGoalTags) {
		return InvalidParam("goal", "goal.trigger holds at most %d words and %d tags", MaxGoalWords, MaxGoalTags)
	}
	return nil
}
