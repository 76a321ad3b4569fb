package graph

// knowmind_search and knowmind_context: both run recall (recall.go: BM25 in German and
// English, vectors, graph hops) and keep what the caller may see — shared notes of the token's
// projects, the caller's own private memory, and the tenant's memories and documents unless the
// call or the token is limited to projects; never the trash (recall returns only indexed
// memories). Without a usable embedder they fall back to full text, without error. Private
// memory (knowmind_remember_about_*) is written here too.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/search"
)

// notesMetaQuery reads what the notes tools show of notes by id.
const notesMetaQuery = `{
  n(func: eq(Memory.id, [%s])) @filter(eq(Memory.kind, "note")) {
    Memory.id Memory.status Memory.tags Note.path Note.class Note.owner Note.project { uid Project.handle Project.aliases }
  }
}`

// visibleTo is the rule every ranked tool applies to a hit for scope: a note is visible when
// it is shared (or the caller's own private memory) in a project the scope reaches; memories
// and documents belong to the tenant. extra (nil: none) narrows it further.
func visibleTo(scope knowmind.NoteScope, extra hitFilter) hitFilter {
	return func(h knowmind.RecallHit, n *dgNote) bool {
		if h.Kind == knowmind.KindNote && (n == nil || !n.visible(scope)) {
			return false
		}
		return extra == nil || extra(h, n)
	}
}

// RecallVisible is knowmind_recall and knowmind_recall_at_time for
// scope: the hits it may see, k of them when k pass the floor. A failing embedder is the
// caller's error (EPROVIDER), as the spec asks of recall.
func (t *Tenant) RecallVisible(ctx context.Context, scope knowmind.NoteScope, q knowmind.RecallQuery) (knowmind.RecallResult, error) {
	res, _, err := t.recall(ctx, q, search.Default(), nil, recallFilter{keep: visibleTo(scope, nil)})
	return res, err
}

// recallVisible runs recall for scope with keep applied before k, and returns the hits with each
// note's metadata by memory id. Full text only when the embedder is missing or fails (vector
// false): the notes tools answer without vectors rather than not at all.
func (t *Tenant) recallVisible(ctx context.Context, scope knowmind.NoteScope, q knowmind.RecallQuery, keep hitFilter) (knowmind.RecallResult, map[string]dgNote, bool, error) {
	o := search.Default()
	res, notes, err := t.recall(ctx, q, o, nil, recallFilter{keep: visibleTo(scope, keep)})
	vector := true
	if e := knowmind.AsError(err); e != nil && e.Code == knowmind.EPROVIDER {
		vector, o.Plan.Vector = false, false
		res, notes, err = t.recall(ctx, q, o, nil, recallFilter{keep: visibleTo(scope, keep)})
	}
	if err != nil {
		return knowmind.RecallResult{}, nil, false, err
	}
	return res, notes, vector, nil
}

// SearchNotes is knowmind_search: ranked snippets of what scope may see — notes (shared and
// the caller's own memory), memories and documents; a project, folder or tag filter, or a
// project-limited scope, keeps notes only.
func (t *Tenant) SearchNotes(ctx context.Context, scope knowmind.NoteScope, q knowmind.SearchQuery) ([]knowmind.SearchHit, bool, error) {
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
	// Notes match the filters; memories and documents hold no project, folder or note tag, so
	// a search naming one finds notes only, as does a project-limited token.
	filtered := puid != "" || path != "" || q.Tag != "" || scope.Projects != nil
	keep := func(h knowmind.RecallHit, n *dgNote) bool {
		if h.Kind != knowmind.KindNote {
			return !filtered
		}
		return (puid == "" || n.projectUID() == puid) &&
			(path == "" || n.Path == path || strings.HasPrefix(n.Path, path+"/")) &&
			(q.Tag == "" || containsFold(n.Tags, q.Tag))
	}
	res, meta, vector, err := t.recallVisible(ctx, scope,
		knowmind.RecallQuery{Query: q.Query, K: q.Limit, Hops: 0, MinScore: q.MinScore}, keep)
	if err != nil {
		return nil, false, err
	}
	out := make([]knowmind.SearchHit, 0, len(res.Hits))
	for _, h := range res.Hits {
		hit := knowmind.SearchHit{ID: h.MemoryID, Title: h.Title, Kind: h.Kind, Tags: []string{},
			Snippet: Snippet(h.Content, q.Query, 280), Score: h.Score}
		if n, ok := meta[h.MemoryID]; ok {
			hit.Project, hit.Path, hit.Class, hit.Tags = n.projectHandle(), n.Path, n.Class, nonNil(n.Tags)
		}
		out = append(out, hit)
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

// minTruncatedTokens: a last item is cut to the rest of the budget only if that leaves it at
// least this much; otherwise the bundle ends before it.
const minTruncatedTokens = 40

// Context is the seed's recall: the visible notes, memories and documents recall ranks for
// query, with their graph neighbours (two hops), best first, fitted into budget tokens
// (knowmind.ApproxTokens of title and content).
func (t *Tenant) Context(ctx context.Context, scope knowmind.NoteScope, query, project string, budget int, minScore float64) (knowmind.ContextBundle, error) {
	var puid string
	if project != "" {
		var err error
		if puid, err = t.project(ctx, scope, project); err != nil {
			return knowmind.ContextBundle{}, err
		}
	}
	// Memories and documents belong to no project: a project-limited call leaves them out.
	keep := func(h knowmind.RecallHit, n *dgNote) bool {
		if h.Kind != knowmind.KindNote {
			return project == "" && scope.Projects == nil
		}
		return puid == "" || n.projectUID() == puid
	}
	res, meta, vector, err := t.recallVisible(ctx, scope,
		knowmind.RecallQuery{Query: query, K: knowmind.RecallMaxK, Hops: knowmind.RecallDefaultHops, MinScore: minScore}, keep)
	if err != nil {
		return knowmind.ContextBundle{}, err
	}
	b := knowmind.ContextBundle{Items: []knowmind.ContextItem{}, BudgetTokens: budget, Vector: vector}
	for _, h := range res.Hits {
		item := knowmind.ContextItem{ID: h.MemoryID, Kind: h.Kind, Title: h.Title, Score: h.Score, Content: h.Content}
		if n, ok := meta[h.MemoryID]; ok {
			item.Class, item.Project, item.Path = n.Class, n.projectHandle(), n.Path
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
