package graph

// knowmind_search and knowmind_context over notes: both run recall (recall.go: BM25 in German
// and English, vectors, graph hops) and keep what the caller may see — shared notes of the
// token's projects and the caller's own private memory, never the trash (recall returns only
// indexed memories). Without a usable embedder they fall back to full text, without error.
// Private memory (knowmind_remember_about_*) is written here too.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/search"
)

// SearchQuery is one knowmind_search.
type SearchQuery struct {
	Query   string
	Project string // "" = every project of the scope
	Path    string // folder; its subfolders included
	Tag     string
	Limit   int
}

// notesMetaQuery reads what search and context show of the hits' notes.
const notesMetaQuery = `{
  n(func: eq(Memory.id, [%s])) @filter(eq(Memory.kind, "note")) {
    Memory.id Memory.status Memory.tags Note.path Note.class Note.owner Note.project { uid Project.handle Project.aliases }
  }
}`

// recallVisible runs recall and returns its hits with each note's metadata (nil for memories
// and documents). Full text only when the embedder is missing or fails.
func (t *Tenant) recallVisible(ctx context.Context, query string, hops int) ([]knowmind.RecallHit, map[string]dgNote, bool, error) {
	q := knowmind.RecallQuery{Query: query, K: knowmind.RecallMaxK, Hops: hops}
	res, err := t.Recall(ctx, q)
	vector := true
	if e := knowmind.AsError(err); e != nil && e.Code == knowmind.EPROVIDER {
		vector = false
		o := search.Default()
		o.Plan.Vector = false
		res, err = t.RecallWith(ctx, q, o)
	}
	if err != nil {
		return nil, nil, false, err
	}
	var ids []string
	for _, h := range res.Hits {
		if h.Kind == knowmind.KindNote {
			ids = append(ids, strconv.Quote(h.MemoryID))
		}
	}
	meta := map[string]dgNote{}
	if len(ids) > 0 {
		var out struct{ N []dgNote }
		if err := t.queryVars(ctx, fmt.Sprintf(notesMetaQuery, strings.Join(ids, ", ")), nil, &out); err != nil {
			return nil, nil, false, fmt.Errorf("note details: %w", err)
		}
		for _, n := range out.N {
			meta[n.ID] = n
		}
	}
	return res.Hits, meta, vector, nil
}

// HideNotes drops from recall's hits the notes scope may not see (other principals' private
// memory, projects outside the token), so knowmind_recall shows notes as the notes tools do.
func (t *Tenant) HideNotes(ctx context.Context, scope knowmind.NoteScope, hits []knowmind.RecallHit) ([]knowmind.RecallHit, error) {
	var ids []string
	for _, h := range hits {
		if h.Kind == knowmind.KindNote {
			ids = append(ids, strconv.Quote(h.MemoryID))
		}
	}
	if len(ids) == 0 {
		return hits, nil
	}
	var out struct{ N []dgNote }
	if err := t.queryVars(ctx, fmt.Sprintf(notesMetaQuery, strings.Join(ids, ", ")), nil, &out); err != nil {
		return nil, fmt.Errorf("note details: %w", err)
	}
	visible := map[string]bool{}
	for _, n := range out.N {
		visible[n.ID] = n.visible(scope)
	}
	kept := hits[:0:0]
	for _, h := range hits {
		if h.Kind != knowmind.KindNote || visible[h.MemoryID] {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// SearchNotes is knowmind_search: ranked snippets of visible notes (shared and the caller's
// own memory), filtered by project, folder and tag.
func (t *Tenant) SearchNotes(ctx context.Context, scope knowmind.NoteScope, q SearchQuery) ([]knowmind.SearchHit, bool, error) {
	var puid string
	if q.Project != "" {
		var err error
		if puid, err = t.project(ctx, scope, q.Project); err != nil {
			return nil, false, err
		}
	}
	path, err := knowmind.CleanNotePath("path", q.Path)
	if err != nil {
		return nil, false, err
	}
	hits, meta, vector, err := t.recallVisible(ctx, q.Query, 0)
	if err != nil {
		return nil, false, err
	}
	out := []knowmind.SearchHit{}
	for _, h := range hits {
		n, ok := meta[h.MemoryID]
		if !ok || !n.visible(scope) {
			continue
		}
		if puid != "" && n.projectUID() != puid {
			continue
		}
		if path != "" && n.Path != path && !strings.HasPrefix(n.Path, path+"/") {
			continue
		}
		if q.Tag != "" && !containsFold(n.Tags, q.Tag) {
			continue
		}
		out = append(out, knowmind.SearchHit{ID: h.MemoryID, Title: h.Title, Project: n.projectHandle(), Path: n.Path,
			Class: n.Class, Kind: h.Kind, Tags: nonNil(n.Tags), Snippet: Snippet(h.Content, q.Query, 280), Score: h.Score})
		if len(out) == q.Limit {
			break
		}
	}
	return out, vector, nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Snippet is about n characters of text around the first query word (of three letters or
// more) it contains, or its beginning.
func Snippet(text, query string, n int) string {
	runes := []rune(text)
	if len(runes) <= n {
		return strings.TrimSpace(text)
	}
	lower := []rune(strings.ToLower(text))
	at := -1
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(w) < 3 {
			continue
		}
		if i := indexRunes(lower, []rune(w)); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := max(0, at-n/3)
	end := min(len(runes), start+n)
	s := strings.TrimSpace(string(runes[start:end]))
	if start > 0 {
		s = "…" + s
	}
	if end < len(runes) {
		s += "…"
	}
	return s
}

func indexRunes(s, w []rune) int {
outer:
	for i := 0; i+len(w) <= len(s); i++ {
		for j := range w {
			if s[i+j] != w[j] {
				continue outer
			}
		}
		return i
	}
	return -1
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

// minTruncatedTokens: a last item is cut to the rest of the budget only if that leaves it at
// least this much; otherwise the bundle ends before it.
const minTruncatedTokens = 40

// Context is the seed's recall: the visible notes, memories and documents recall ranks for
// query, with their graph neighbours (two hops), best first, fitted into budget tokens
// (knowmind.ApproxTokens of title and content).
func (t *Tenant) Context(ctx context.Context, scope knowmind.NoteScope, query, project string, budget int) (ContextBundle, error) {
	var puid string
	if project != "" {
		var err error
		if puid, err = t.project(ctx, scope, project); err != nil {
			return ContextBundle{}, err
		}
	}
	hits, meta, vector, err := t.recallVisible(ctx, query, knowmind.RecallDefaultHops)
	if err != nil {
		return ContextBundle{}, err
	}
	b := ContextBundle{Items: []ContextItem{}, BudgetTokens: budget, Vector: vector}
	for _, h := range hits {
		item := ContextItem{ID: h.MemoryID, Kind: h.Kind, Title: h.Title, Score: h.Score, Content: h.Content}
		if h.Kind == knowmind.KindNote {
			n, ok := meta[h.MemoryID]
			if !ok || !n.visible(scope) || (puid != "" && n.projectUID() != puid) {
				continue
			}
			item.Class, item.Project, item.Path = n.Class, n.projectHandle(), n.Path
		} else if project != "" || scope.Projects != nil {
			// Memories and documents belong to no project: a project-limited call skips them.
			continue
		}
		item.Tokens = knowmind.ApproxTokens(item.Title) + knowmind.ApproxTokens(item.Content)
		left := budget - b.TokensUsed
		if item.Tokens > left {
			room := left - knowmind.ApproxTokens(item.Title)
			if room < minTruncatedTokens {
				break
			}
			item.Content = string([]rune(item.Content)[:room*4]) + "…"
			item.Tokens, item.Truncated = knowmind.ApproxTokens(item.Title)+knowmind.ApproxTokens(item.Content), true
			if item.Tokens > left {
				item.Content = string([]rune(item.Content)[:(room-1)*4]) + "…"
				item.Tokens = knowmind.ApproxTokens(item.Title) + knowmind.ApproxTokens(item.Content)
			}
		}
		b.Items = append(b.Items, item)
		b.TokensUsed += item.Tokens
		if item.Truncated {
			break
		}
	}
	return b, nil
}

// Remember appends an observation to the caller's private memory note of a category (class
// agent-memory in a project, or user-profile without one), creating it on first use. The
// append retries on a version conflict: concurrent observations are all kept.
func (t *Tenant) Remember(ctx context.Context, scope knowmind.NoteScope, class, project, category, observation string, actor knowmind.Actor) (knowmind.NoteWriteResult, error) {
	if scope.Principal == "" {
		return knowmind.NoteWriteResult{}, knowmind.Errorf(knowmind.EFORBIDDEN, "private memory needs a principal: this token has no subject")
	}
	category = strings.TrimSpace(category)
	observation = strings.TrimSpace(observation)
	if category == "" || strings.ContainsAny(category, "\n\r[]") {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("category", "category must be one line without brackets")
	}
	if utf8.RuneCountInString(category) > knowmind.MaxCategoryChars {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("category", "category exceeds %d characters", knowmind.MaxCategoryChars)
	}
	if observation == "" || utf8.RuneCountInString(observation) > knowmind.MaxObservationChars {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("observation", "observation is required, at most %d characters", knowmind.MaxObservationChars)
	}
	var projectUID string
	if project != "" {
		var err error
		if projectUID, err = t.project(ctx, scope, project); err != nil {
			return knowmind.NoteWriteResult{}, err
		}
	}
	line := "- " + strings.ReplaceAll(observation, "\n", "\n  ")
	for attempt := 0; attempt < 8; attempt++ {
		var out struct{ N []dgNote }
		key := titleKey(class, scope.Principal, projectUID, "", category)
		if err := t.queryVars(ctx, `query q($key: string) { n(func: eq(Note.title_key, $key), first: 1) { `+noteFields+` } }`,
			map[string]string{"$key": key}, &out); err != nil {
			return knowmind.NoteWriteResult{}, fmt.Errorf("remember: %w", err)
		}
		var res knowmind.NoteWriteResult
		var err error
		if len(out.N) == 0 {
			res, err = t.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: project, Body: "# " + category + "\n\n" + line,
				Class: class, Owner: scope.Principal, Actor: actor})
		} else {
			res, err = t.EditNote(ctx, scope, knowmind.EditNoteInput{ID: out.N[0].ID, VersionToken: out.N[0].Version,
				Op: knowmind.EditAppend, Content: line, Actor: actor})
		}
		if e := knowmind.AsError(err); e != nil && e.Code == knowmind.ECONFLICT {
			continue // another observation won the race: read again and append to it
		}
		return res, err
	}
	return knowmind.NoteWriteResult{}, errors.New("remember: too many concurrent writes to one category")
}
