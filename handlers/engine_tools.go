package handlers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
	"github.com/knowmind/knowmind/graph"
)

// Extractors are knowmind_capture's extractors by name and the one used when
// a call names none, and the model that writes knowmind_briefing (nil: the
// extractive briefing only). The zero value offers the offline rules extractor
// and the extractive briefing.
type Extractors struct {
	ByName   map[string]knowmind.Extractor
	Default  string
	Briefing knowmind.BriefingWriter
}

// engine is the memory engine's configuration inside the service.
type engine struct {
	extractors map[string]knowmind.Extractor
	def        string
	vocab      *vocabulary
	// described are the engine tools whose description ends in the vocabulary, with
	// the description before it.
	described map[string]string
	briefing  knowmind.BriefingWriter // nil: extractive briefings only
}

func newEngine(x Extractors, v *vocabulary) engine {
	e := engine{extractors: map[string]knowmind.Extractor{}, def: x.Default, vocab: v, described: map[string]string{}, briefing: x.Briefing}
	for name, ex := range x.ByName {
		e.extractors[name] = ex
	}
	if _, ok := e.extractors["rules"]; !ok {
		e.extractors["rules"] = extract.Rules{}
	}
	if _, ok := e.extractors[e.def]; !ok {
		e.def = "rules"
	}
	return e
}

// extractor is the one named, or the default for "".
func (e engine) extractor(name string) (knowmind.Extractor, error) {
	if name == "" {
		name = e.def
	}
	ex, ok := e.extractors[name]
	if !ok {
		return nil, knowmind.InvalidParam("extractor", "extractor must be one of %s", strings.Join(e.names(), ", "))
	}
	return ex, nil
}

func (e engine) names() []string {
	var out []string
	for n := range e.extractors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// registerEngineTools is the memory engine's toolset (seed 001). Their
// descriptions name the domain's categories and entity types from the shape
// files (configuration, read at start), never from stored content.
func (s *service) registerEngineTools(srv *mcp.Server) {
	if s.engine.extractors == nil {
		s.engine = newEngine(Extractors{}, newVocabulary(Deps{Graph: s.graph}))
	}
	vocab := s.engine.vocabSuffix()
	for _, name := range []string{"knowmind_capture", "knowmind_list_drafts", "knowmind_list_entities", "knowmind_retrieve", "knowmind_replay"} {
		s.engine.described[name] = ""
	}
	addTool(s, srv, tool{
		Name:  "knowmind_capture",
		Title: "Capture facts from text",
		Description: "Learns from raw text (a conversation turn, meeting notes): extracts facts (extractors: " +
			strings.Join(s.engine.names(), ", ") + "; default " + s.engine.def + "), routes them by confidence — at or above " +
			"the store threshold (default 0.85) stored as memories, down to the draft threshold (default 0.40) kept as drafts " +
			"for knowmind_review_draft, below dropped — and reports facts that contradict current memories about the same " +
			"entity. Answers {stored, drafts, pm_matches, conflicts}; each fact with id, text, confidence, entities [{type, id}] " +
			"and the span of the text it came from. Capturing the same text again writes nothing (unchanged)." + vocab,
		Scope:      knowmind.ScopeWrite,
		Idempotent: true,
	}, s.capture)
	addTool(s, srv, tool{
		Name:  "knowmind_list_drafts",
		Title: "List drafts",
		Description: "Drafts waiting for review (or accepted / rejected ones), newest first: facts knowmind_capture was not " +
			"sure enough about to store. Drafts never appear in recall." + vocab,
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.listDrafts)
	addTool(s, srv, tool{
		Name:  "knowmind_review_draft",
		Title: "Review a draft",
		Description: "Accepts a draft (it becomes a memory, with the reviewer and time as provenance), rejects it, or edits " +
			"its text and accepts it. Reviews calibrate routing: when drafts of a confidence bucket are accepted at least 90% " +
			"over at least 20 reviews, that bucket is stored directly from then on.",
		Scope: knowmind.ScopeWrite,
	}, s.reviewDraft)
	addTool(s, srv, tool{
		Name:        "knowmind_list_entities",
		Title:       "List entities",
		Description: "The entities facts are about (type, id slug, name, aliases) with the number of current facts naming each." + vocab,
		Scope:       knowmind.ScopeRead,
		ReadOnly:    true,
	}, s.listEntities)
	addTool(s, srv, tool{
		Name:  "knowmind_capture_calibration",
		Title: "Capture routing calibration",
		Description: "How knowmind_capture routes an extractor's facts in this workspace: the base thresholds, the thresholds " +
			"after reviews moved them, and the accept/reject counts per confidence bucket.",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.captureCalibration)
	addTool(s, srv, tool{
		Name:        "knowmind_set_capture_thresholds",
		Title:       "Set capture thresholds",
		Description: "Sets the workspace's base routing thresholds for knowmind_capture (store and draft); reviews move them from there.",
		Scope:       knowmind.ScopeAdmin,
		Idempotent:  true,
		Destructive: true, // replaces the thresholds set before
	}, s.setCaptureThresholds)
	addTool(s, srv, tool{
		Name:  "knowmind_set_goal",
		Title: "Set a goal",
		Description: "Prospective memory: remembers something to do or watch for. A time goal (due_at) comes due and shows in " +
			"knowmind_list_goals and knowmind_briefing; an event goal (trigger: words that must all appear, an entity the memory " +
			"names, one of some tags, a category — every part given must match) fires when knowmind_store_memory, " +
			"knowmind_store_memories, knowmind_capture, knowmind_upload_document or knowmind_update_fact stores a matching memory: " +
			"that write answers the goal in pm_matches and the goal records the match. expires_at stops it.",
		Scope: knowmind.ScopeWrite,
	}, s.setGoal)
	addTool(s, srv, tool{
		Name:        "knowmind_list_goals",
		Title:       "List goals",
		Description: "Goals (open by default, or done, cancelled, all): due time goals first, then newest first; each with due, expired, fired_count and the matched memory ids.",
		Scope:       knowmind.ScopeRead,
		ReadOnly:    true,
	}, s.listGoals)
	addTool(s, srv, tool{
		Name:        "knowmind_close_goal",
		Title:       "Close a goal",
		Description: "Closes an open goal as done (default) or cancelled; it no longer fires or comes due. Closing a closed goal is 409.",
		Scope:       knowmind.ScopeWrite,
	}, s.closeGoal)
	addTool(s, srv, tool{
		Name:  "knowmind_briefing",
		Title: "Briefing",
		Description: "What to know now: due goals, fired goals, open conflicts, open drafts and current memories (newest " +
			"first) — since a time, about an entity, within a token budget (default 1,500). mode extractive: structured " +
			"sections whose items quote stored goals, drafts and memories and cite their ids; mode llm (when a model is " +
			"configured, the default then): the model writes text from those items, citing the ids; if it fails the answer is " +
			"extractive and fallback says why.",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.briefing)
	addTool(s, srv, tool{
		Name:  "knowmind_retrieve",
		Title: "Retrieve memories four ways",
		Description: "Finds memories by sort_by: relevance (default; knowmind_recall's hybrid ranking of query), chronological " +
			"(current memories newest valid first; query, category, entity_type, entity filter), profile (per entity a condensed " +
			"profile of its current facts, entities with most facts first) or graph (from start_memory_id over open relations to " +
			"max_depth 1–5, default 3; relation_types narrows it; symmetric relations both ways; answers relations [{source_id, " +
			"target_id, type, confidence, created_by, depth}]). Every answer: memories [{id, content, entities [{type, id}], " +
			"entity_type, entity_id, …}], semantic_profiles of the entities they name, context_tokens." + vocab,
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.retrieve)
	addTool(s, srv, tool{
		Name:  "knowmind_replay",
		Title: "Replay a moment",
		Description: "Time travel: the workspace's knowledge as it stood at timestamp (ISO 8601) — memories stored by then and " +
			"valid then, including facts superseded later (with the valid_to they got), newest valid first; query (any of its " +
			"words), category and entity_type narrow it; limit default 50. Same answer as knowmind_retrieve; semantic profiles " +
			"show the entities' current state." + vocab,
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.replay)
	for name := range s.engine.described {
		s.engine.described[name] = strings.TrimSuffix(s.tools[name].Description, vocab)
	}
}

// vocabSuffix is what the engine tools' descriptions end in.
func (e engine) vocabSuffix() string {
	types, cats := e.vocab.get()
	return fmt.Sprintf(" Entity types: %s. Categories: %s.", listOrNone(types), listOrNone(cats))
}

// describeEngineTools gives the engine tools of a tools/list answer the
// current vocabulary (copies: the server's own tool records stay as registered).
func (s *service) describeEngineTools(tools []*mcp.Tool) {
	vocab := ""
	for i, mt := range tools {
		base, ok := s.engine.described[mt.Name]
		if !ok {
			continue
		}
		if base == "" {
			continue // registered before the vocabulary was known
		}
		if vocab == "" {
			vocab = s.engine.vocabSuffix()
		}
		c := *mt
		c.Description = base + vocab
		tools[i] = &c
	}
}

// vocabulary caches the domain's entity types and categories for a while, so
// tools/list shows a changed shape file within the TTL without reading it per request.
type vocabulary struct {
	load func() ([]string, []string, error)
	ttl  time.Duration

	mu          sync.Mutex
	at          time.Time
	types, cats []string
}

func newVocabulary(d Deps) *vocabulary {
	v := &vocabulary{load: d.Vocabulary, ttl: d.VocabularyTTL}
	if v.ttl == 0 {
		v.ttl = 5 * time.Minute
	}
	if v.load == nil && d.Graph != nil {
		set := d.Graph.Shapes()
		v.load = func() ([]string, []string, error) { return set.EntityTypes(), set.Categories(), nil }
	}
	return v
}

// get returns the vocabulary, reloading it when older than the TTL; a failed
// reload keeps the last good one.
func (v *vocabulary) get() (types, cats []string) {
	if v == nil || v.load == nil {
		return nil, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.at.IsZero() || time.Since(v.at) >= v.ttl {
		if t, c, err := v.load(); err == nil || v.at.IsZero() {
			v.types, v.cats = t, c
		}
		v.at = time.Now()
	}
	return slices.Clone(v.types), slices.Clone(v.cats)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none declared"
	}
	return strings.Join(slices.Clone(names), ", ")
}

// attachRecentEntities gives list_recent's items their entities (seed 001:
// every memory in every result carries entities).
func attachRecentEntities(ctx context.Context, t *graph.Tenant, items []knowmind.RecentItem) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	refs, err := t.EntitiesOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Entities = refs[items[i].ID]
		if items[i].Entities == nil {
			items[i].Entities = []knowmind.EntityRef{}
		} else {
			items[i].EntityType, items[i].EntityID = items[i].Entities[0].Type, items[i].Entities[0].ID
		}
	}
	return nil
}
