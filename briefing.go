package knowmind

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Briefing (seed 001, memory_briefing): what an agent should know now, from
// due and fired goals, open conflicts, open drafts and active memories. The
// extractive briefing quotes them (no model writes anything): sections of
// bullet items, each citing the memory ids it comes from, filled in that
// order of priority until the token budget (ApproxTokens) is spent.

// Briefing modes: extractive (quotes, offline) or llm (written by the configured model from
// the extractive briefing's items, citing their ids).
const (
	BriefingExtractive = "extractive"
	BriefingLLM        = "llm"
)

// BriefingWriter writes a briefing's text with a language model from the extractive briefing
// (its sections and Markdown, every item citing its ids). An error is the provider's or an
// answer that failed validation; the caller then answers the extractive briefing and says why.
type BriefingWriter interface {
	Model() string
	WriteBriefing(ctx context.Context, extractive Briefing) (string, error)
}

// Bounds and defaults of a briefing.
const (
	DefaultBriefingTokens = 1500
	MinBriefingTokens     = 100
	MaxBriefingTokens     = 20_000
	MaxBriefingItemChars  = 400 // an item quotes at most this much of a memory or draft
	BriefingSourceLimit   = 200 // memories, drafts, conflicts read per section
)

// Section kinds of a briefing, in order of priority.
const (
	SectionDueGoals   = "due_goals"
	SectionFiredGoals = "fired_goals"
	SectionConflicts  = "open_conflicts"
	SectionDrafts     = "open_drafts"
	SectionMemories   = "memories"
)

// BriefingItem is one bullet: its text and what it cites.
type BriefingItem struct {
	Text      string     `json:"text"`
	MemoryIDs []string   `json:"memory_ids"`
	GoalID    string     `json:"goal_id,omitempty"`
	DraftID   string     `json:"draft_id,omitempty"`
	At        *time.Time `json:"at,omitempty"`
}

// BriefingSection is one heading with its items; omitted items did not fit the budget.
type BriefingSection struct {
	Kind    string         `json:"kind"`
	Title   string         `json:"title"`
	Items   []BriefingItem `json:"items"`
	Omitted int            `json:"omitted"`
}

// Briefing is knowmind_briefing's answer.
type Briefing struct {
	Mode  string `json:"mode"`            // extractive or llm
	Model string `json:"model,omitempty"` // llm: the model that wrote text
	// Fallback says why an extractive briefing was answered although a model is configured
	// (the provider failed or its answer failed validation).
	Fallback    string            `json:"fallback,omitempty"`
	Note        string            `json:"note"`
	GeneratedAt time.Time         `json:"generated_at"`
	Since       *time.Time        `json:"since,omitempty"`
	Entity      *EntityRef        `json:"entity,omitempty"`
	MaxTokens   int               `json:"max_tokens"`
	Tokens      int               `json:"tokens"` // approximate tokens of text
	Truncated   bool              `json:"truncated"`
	Sections    []BriefingSection `json:"sections"`
	Text        string            `json:"text"` // the sections as Markdown, or the model's briefing (mode llm)
}

// BriefingMemory is an active memory, draft side or conflict end as the briefing sees it.
type BriefingMemory struct {
	ID        string
	Title     string
	Content   string
	CreatedAt time.Time
	Entities  []EntityRef
}

// BriefingConflict is a CONTRADICTS relation between two current memories.
type BriefingConflict struct {
	A, B BriefingMemory
}

// BriefingInput is what a briefing is made from (already filtered by since and entity).
type BriefingInput struct {
	Since     *time.Time
	Entity    *EntityRef
	MaxTokens int
	Now       time.Time
	Goals     []Goal // open goals
	Conflicts []BriefingConflict
	Drafts    []Draft
	Memories  []BriefingMemory // newest first
}

// BuildBriefing makes the extractive briefing.
func BuildBriefing(in BriefingInput) Briefing {
	b := Briefing{Mode: BriefingExtractive, GeneratedAt: in.Now, Since: in.Since, Entity: in.Entity, MaxTokens: in.MaxTokens,
		Note:     "extractive briefing: every item quotes a stored goal, draft or memory and cites its ids; no language model wrote it",
		Sections: []BriefingSection{}}
	budget := in.MaxTokens
	var md strings.Builder
	add := func(kind, title string, items []BriefingItem) {
		sec := BriefingSection{Kind: kind, Title: title, Items: []BriefingItem{}}
		head := "## " + title + "\n"
		headCost := ApproxTokens(head)
		for _, it := range items {
			line := "- " + it.Text + cite(it) + "\n"
			cost := ApproxTokens(line)
			if len(sec.Items) == 0 {
				cost += headCost
			}
			if b.Tokens+cost > budget {
				sec.Omitted++
				b.Truncated = true
				continue
			}
			if len(sec.Items) == 0 {
				md.WriteString(head)
			}
			md.WriteString(line)
			b.Tokens += cost
			sec.Items = append(sec.Items, it)
		}
		if len(items) > 0 {
			b.Sections = append(b.Sections, sec)
		}
	}

	var due, fired []BriefingItem
	for _, g := range in.Goals {
		if g.Due {
			at := g.DueAt
			due = append(due, BriefingItem{Text: fmt.Sprintf("Due %s: %s", g.DueAt.Format(time.RFC3339), clip(g.Text)), GoalID: g.ID,
				MemoryIDs: []string{}, At: at})
		}
		if g.FiredCount > 0 && !g.Expired && (in.Since == nil || (g.LastFiredAt != nil && !g.LastFiredAt.Before(*in.Since))) {
			ids := append([]string{}, g.MatchedIDs...)
			fired = append(fired, BriefingItem{Text: fmt.Sprintf("Goal fired %d×: %s", g.FiredCount, clip(g.Text)), GoalID: g.ID,
				MemoryIDs: ids, At: g.LastFiredAt})
		}
	}
	add(SectionDueGoals, "Due goals", due)
	add(SectionFiredGoals, "Fired goals", fired)

	var conflicts []BriefingItem
	for _, c := range in.Conflicts {
		conflicts = append(conflicts, BriefingItem{Text: fmt.Sprintf("%q contradicts %q", clip(summary(c.A)), clip(summary(c.B))),
			MemoryIDs: []string{c.A.ID, c.B.ID}})
	}
	add(SectionConflicts, "Open conflicts", conflicts)

	var drafts []BriefingItem
	for _, d := range in.Drafts {
		at := d.CreatedAt
		ids := append([]string{}, d.ConflictsWith...)
		text := fmt.Sprintf("Draft (confidence %.2f) waiting for review: %s", d.Confidence, clip(d.Text))
		drafts = append(drafts, BriefingItem{Text: text, DraftID: d.ID, MemoryIDs: ids, At: &at})
	}
	add(SectionDrafts, "Open drafts", drafts)

	var mems []BriefingItem
	for _, m := range in.Memories {
		at := m.CreatedAt
		mems = append(mems, BriefingItem{Text: clip(summary(m)), MemoryIDs: []string{m.ID}, At: &at})
	}
	title := "Memories"
	if in.Entity != nil {
		title = "Memories about " + in.Entity.Type + "/" + in.Entity.ID
	}
	if in.Since != nil {
		title += " since " + in.Since.Format(time.RFC3339)
	}
	add(SectionMemories, title, mems)
	b.Text = md.String()
	return b
}

func cite(it BriefingItem) string {
	var refs []string
	for _, id := range it.MemoryIDs {
		refs = append(refs, "memory "+id)
	}
	if it.GoalID != "" {
		refs = append(refs, "goal "+it.GoalID)
	}
	if it.DraftID != "" {
		refs = append(refs, "draft "+it.DraftID)
	}
	if len(refs) == 0 {
		return ""
	}
	return " [" + strings.Join(refs, "; ") + "]"
}

func summary(m BriefingMemory) string {
	c := strings.Join(strings.Fields(m.Content), " ")
	t := strings.TrimSpace(m.Title)
	if t == "" || strings.HasPrefix(c, t) {
		return c
	}
	return t + ": " + c
}

func clip(s string) string {
	r := []rune(s)
	if len(r) <= MaxBriefingItemChars {
		return s
	}
	return string(r[:MaxBriefingItemChars-1]) + "…"
}

// CitedIDs are the ids a briefing's items cite (memories, goals, drafts), each once.
func (b Briefing) CitedIDs() map[string]bool {
	ids := map[string]bool{}
	for _, s := range b.Sections {
		for _, it := range s.Items {
			for _, id := range it.MemoryIDs {
				ids[id] = true
			}
			if it.GoalID != "" {
				ids[it.GoalID] = true
			}
			if it.DraftID != "" {
				ids[it.DraftID] = true
			}
		}
	}
	return ids
}
