package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/conflict"
)

// Capture (knowmind_capture) runs the memory engine's pipeline on raw text:
// the extractor proposes candidate facts, each is routed by the tenant's
// calibrated thresholds for that extractor (stored, draft, dropped), the
// entities it names are created as needed, and each new fact is compared
// with the current memories about the same entities (package conflict).
// Stored facts become memories (chunked, embedded, recallable) pointing at
// their entities; drafts become Draft nodes (never recalled). A conflict is
// reported, and for a stored fact linked new -CONTRADICTS-> existing; the
// existing memory stays current (never silently superseded).
func (t *Tenant) Capture(ctx context.Context, in knowmind.CaptureInput, ex knowmind.Extractor) (knowmind.CaptureResult, error) {
	defer t.relationsWritten() // it may write a relation's first edge: recall asks again (linkedrelations.go)
	res := knowmind.CaptureResult{Stored: []knowmind.CapturedFact{}, Drafts: []knowmind.CapturedFact{},
		PMMatches: []knowmind.GoalMatch{}, Conflicts: []knowmind.Conflict{}, Extractor: ex.Name()}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return res, knowmind.Internal(knowmind.ReasonContentRequired, "text is required and must not be empty")
	}
	if utf8.RuneCountInString(in.Text) > knowmind.MaxCaptureChars {
		return res, knowmind.Internal(knowmind.ReasonTooLarge, "text exceeds %d characters", knowmind.MaxCaptureChars)
	}
	source, err := checkText("source", in.Source, knowmind.MaxSourceChars, false)
	if err != nil {
		return res, err
	}
	types, cats := in.EntityTypes, in.Categories
	if types == nil {
		types = t.c.cfg.Shapes.EntityTypes()
	}
	if cats == nil {
		cats = t.c.cfg.Shapes.Categories()
	}
	category, err := checkCategory(in.Category, cats)
	if err != nil {
		return res, err
	}
	// Two independent reads, in parallel.
	var known []knowmind.Entity
	var knownErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		known, knownErr = t.knownEntities(ctx)
	}()
	th, _, err := t.thresholds(ctx, ex.Name())
	<-done
	if err != nil {
		return res, err
	}
	if knownErr != nil {
		return res, knownErr
	}
	res.Thresholds = th
	cands, err := ex.Extract(ctx, knowmind.ExtractRequest{Text: in.Text, Known: known, EntityTypes: types, Categories: cats})
	if err != nil {
		if knowmind.AsError(err) != nil {
			return res, err
		}
		return res, knowmind.Errorf(knowmind.EPROVIDER, "extractor %s failed: %v", ex.Name(), err)
	}

	// Route, drop duplicates within the capture, collect entities.
	var facts []*capturedFact
	seenSHA := map[string]bool{}
	var ents []knowmind.CandidateEntity
	seenEnt := map[string]bool{}
	for _, c := range cands {
		route := th.Route(c.Confidence)
		if c.ForceDraft {
			route = knowmind.RouteDraft
		}
		sha := ContentSHA(c.Text)
		if route == knowmind.RouteDropped || strings.TrimSpace(c.Text) == "" || seenSHA[sha] {
			res.Dropped++
			continue
		}
		seenSHA[sha] = true
		f := &capturedFact{cand: c, route: route, sha: sha}
		for _, e := range c.Entities {
			if e.ID == "" {
				e.ID = knowmind.EntitySlug(e.Name)
			}
			if e.ID == "" || (len(types) > 0 && !slices.Contains(types, e.Type)) {
				continue
			}
			key := entityKey(e.Type, e.ID)
			if !slices.Contains(f.keys, key) {
				f.keys = append(f.keys, key)
				f.refs = append(f.refs, knowmind.EntityRef{Type: e.Type, ID: e.ID})
			}
			if !seenEnt[key] {
				seenEnt[key] = true
				ents = append(ents, e)
			}
		}
		// Key order, as memories list their entities when read back (entitiesOf): the
		// first entity is the same in every result.
		slices.Sort(f.keys)
		f.refs = f.refs[:0]
		for _, k := range f.keys {
			typ, id, _ := strings.Cut(k, "/")
			f.refs = append(f.refs, knowmind.EntityRef{Type: typ, ID: id})
		}
		facts = append(facts, f)
	}
	if len(facts) == 0 {
		return res, nil
	}

	// Conflicts with current memories about the same entities and the nearest by meaning (conflicts.go).
	var keys []string
	for k := range seenEnt {
		keys = append(keys, k)
	}
	current, err := t.currentFacts(ctx, keys)
	if err != nil {
		return res, err
	}
	for _, f := range facts {
		found, err := t.FindConflicts(ctx, f.cand.Text, f.keys, current, "")
		if err != nil {
			return res, err
		}
		for _, c := range found {
			f.conflicts = append(f.conflicts, c.Finding)
			f.conflictUIDs = append(f.conflictUIDs, c.UID)
		}
	}

	// Facts already held as current memories or open drafts are reported, not written again.
	held, err := t.heldFacts(ctx, facts)
	if err != nil {
		return res, err
	}
	for _, f := range facts {
		if id, ok := held[f.route+"/"+f.sha]; ok {
			f.id, f.unchanged = id, true
			if f.route == knowmind.RouteStored {
				f.conflicts, f.conflictUIDs = nil, nil
			}
			continue
		}
		if f.route != knowmind.RouteStored {
			continue
		}
		f.entry = newEntry(knowmind.KindMemory, "", strings.TrimSpace(f.cand.Text))
		f.entry.memoryType, f.entry.source, f.entry.category = knowmind.MemorySemantic, source, category
		if in.OccurredAt != nil {
			f.entry.at = *in.OccurredAt
		}
		f.entry.entityRefs = f.refs
		if err := f.entry.split(); err != nil {
			return res, err
		}
		if err := t.embed(ctx, f.entry); err != nil {
			t.c.log.Error("capture: embedding failed", "tenant", t.Name, "err", err)
			return res, knowmind.Internal(knowmind.ReasonIngestFailed, "the captured facts could not be indexed; nothing was stored")
		}
		f.id = f.entry.id
	}

	entityUIDs, err := t.ensureEntities(ctx, ents)
	if err != nil {
		return res, err
	}
	now := nowString()
	var nodes []any
	for i, f := range facts {
		refs := entityRefs(f.keys, entityUIDs)
		switch {
		case f.unchanged:
		case f.route == knowmind.RouteStored:
			m := f.entry.node(fmt.Sprintf("m%d", i), now, knowmind.StatusIndexed, "")
			setEngineFields(m, f.cand.Confidence, ex.Name(), category, refs)
			nodes = append(nodes, m)
		default:
			f.id = uuid.NewString()
			d := map[string]any{
				"uid": fmt.Sprintf("_:d%d", i), "dgraph.type": "Draft", "Draft.id": f.id,
				"Draft.text": strings.TrimSpace(f.cand.Text), "Draft.sha": f.sha, "Draft.confidence": f.cand.Confidence,
				"Draft.status": knowmind.DraftOpen, "Draft.extractor": ex.Name(), "Draft.created_at": now,
				"Draft.span_start": f.cand.Span.Start, "Draft.span_end": f.cand.Span.End,
			}
			setIf(d, "Draft.reason", f.cand.Reason)
			setIf(d, "Draft.source", source)
			setIf(d, "Draft.category", category)
			if in.OccurredAt != nil {
				// With its zone: an accepted draft resolves "gestern" on its writer's calendar.
				d["Draft.occurred_at"] = in.OccurredAt.Format(time.RFC3339Nano)
			}
			if len(refs) > 0 {
				d["Draft.entities"] = refs
			}
			if len(f.conflictUIDs) > 0 {
				d["Draft.conflicts_with"] = uidRefs(f.conflictUIDs)
			}
			nodes = append(nodes, d)
		}
	}
	if len(nodes) > 0 {
		body, err := json.Marshal(nodes)
		if err != nil {
			return res, err
		}
		err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
			resp, err := txn.Mutate(ctx, &api.Mutation{SetJson: body})
			if err != nil {
				return err
			}
			for i, f := range facts {
				if f.entry != nil {
					f.entry.committed(fmt.Sprintf("m%d", i), resp.Uids)
				}
			}
			return writeContradictions(ctx, txn, facts, resp.Uids)
		})
		if err != nil {
			t.c.log.Error("capture: write failed", "tenant", t.Name, "err", err)
			return res, knowmind.Internal(knowmind.ReasonIngestFailed, "the captured facts could not be written; nothing was stored")
		}
	}

	var written []*entry
	for _, f := range facts {
		if f.entry != nil {
			written = append(written, f.entry)
		}
	}
	if aw := t.afterWrite(ctx, written...); len(aw.matches) > 0 {
		res.PMMatches = aw.matches
	}
	for _, f := range facts {
		out := knowmind.CapturedFact{ID: f.id, Text: strings.TrimSpace(f.cand.Text), Confidence: f.cand.Confidence,
			Entities: f.refs, Span: f.cand.Span, Reason: f.cand.Reason, Unchanged: f.unchanged}
		if out.Entities == nil {
			out.Entities = []knowmind.EntityRef{}
		} else {
			out.EntityType, out.EntityID = out.Entities[0].Type, out.Entities[0].ID
		}
		status := knowmind.RouteStored
		if f.route == knowmind.RouteStored {
			res.Stored = append(res.Stored, out)
		} else {
			status = knowmind.RouteDraft
			res.Drafts = append(res.Drafts, out)
		}
		for _, c := range f.conflicts {
			res.Conflicts = append(res.Conflicts, knowmind.Conflict{NewID: f.id, NewStatus: status,
				ExistingID: c.ExistingID, ExistingText: c.ExistingText, Reason: c.Reason})
		}
	}
	return res, nil
}

// heldFactsQuery finds, in one request, the current memories and open drafts
// holding the texts of a capture (by ContentSHA).
const heldFactsQuery = `{
  same(func: eq(Memory.content_sha, [%s])) ` + sameMemoryFilter + ` { Memory.id Memory.content_sha }
  drafts(func: eq(Draft.sha, [%s])) @filter(eq(Draft.status, "draft")) { Draft.id Draft.sha }
}`

// heldFacts maps "<route>/<sha>" to the id of the memory (route stored) or
// open draft (route draft) already holding that text.
func (t *Tenant) heldFacts(ctx context.Context, facts []*capturedFact) (map[string]string, error) {
	var stored, drafts []string
	for _, f := range facts {
		if f.route == knowmind.RouteStored {
			stored = append(stored, f.sha)
		} else {
			drafts = append(drafts, f.sha)
		}
	}
	held := map[string]string{}
	if len(stored) == 0 {
		stored = []string{"-"}
	}
	if len(drafts) == 0 {
		drafts = []string{"-"}
	}
	var out struct {
		Same []struct {
			ID  string `json:"Memory.id"`
			SHA string `json:"Memory.content_sha"`
		}
		Drafts []struct {
			ID  string `json:"Draft.id"`
			SHA string `json:"Draft.sha"`
		}
	}
	if err := t.queryVars(ctx, fmt.Sprintf(heldFactsQuery, quoteAll(stored), quoteAll(drafts)), nil, &out); err != nil {
		return nil, fmt.Errorf("capture: look up held facts: %w", err)
	}
	for _, m := range out.Same {
		held[knowmind.RouteStored+"/"+m.SHA] = m.ID
	}
	for _, d := range out.Drafts {
		held[knowmind.RouteDraft+"/"+d.SHA] = d.ID
	}
	return held, nil
}

// writeContradictions links each new stored fact and the current memories it
// contradicts with CONTRADICTS both ways, in the capture's transaction, as
// knowmind_link writes a symmetric relation (facets id, created_at,
// valid_from, inverse). CONTRADICTS allows any classes at both ends
// (shapes/default.yaml), so there is nothing to check. Re-setting the
// existing memory's Memory.id makes this conflict with a concurrent update or
// link of it (see relations.go, "Concurrency").
func writeContradictions(ctx context.Context, txn *dgo.Txn, facts []*capturedFact, uids map[string]string) error {
	var nquads []string
	var locks []map[string]string
	now := time.Now().UTC()
	for i, f := range facts {
		newUID := uids[fmt.Sprintf("m%d", i)]
		if f.entry == nil || newUID == "" {
			continue
		}
		for j, c := range f.conflicts {
			old := f.conflictUIDs[j]
			if old == "" {
				continue
			}
			meta := contradictionMeta(c.Reason)
			nquads = append(nquads,
				edgeNQuadMeta(newUID, RelContradicts, old, EdgeID(f.id, RelContradicts, c.ExistingID), now, now, nil, false, meta),
				edgeNQuadMeta(old, RelContradicts, newUID, EdgeID(c.ExistingID, RelContradicts, f.id), now, now, nil, true, meta))
			locks = append(locks, map[string]string{"uid": old, "Memory.id": c.ExistingID})
		}
	}
	if len(nquads) == 0 {
		return nil
	}
	lock, err := json.Marshal(locks)
	if err != nil {
		return err
	}
	if _, err := txn.Mutate(ctx, &api.Mutation{SetJson: lock}); err != nil {
		return err
	}
	_, err = txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(strings.Join(nquads, "\n"))})
	return err
}

// capturedFact is a candidate on its way through Capture.
type capturedFact struct {
	cand         knowmind.Candidate
	route        string
	sha          string
	keys         []string // entity keys
	refs         []knowmind.EntityRef
	conflicts    []conflict.Finding
	conflictUIDs []string
	entry        *entry // stored facts to write
	id           string
	unchanged    bool
}

// linkContradiction links a new fact to the memory it contradicts. A failed
// link is logged: the conflict is reported all the same.
func (t *Tenant) linkContradiction(ctx context.Context, newID, existingID, reason string) {
	if _, err := t.LinkWith(ctx, newID, existingID, RelContradicts, contradictionMeta(reason)); err != nil {
		t.c.log.Warn("capture: linking a contradiction failed", "tenant", t.Name, "from", newID, "to", existingID, "err", err)
	}
}

// CreatedByCapture is the created_by facet of the CONTRADICTS edges conflict detection writes.
const CreatedByCapture = "capture"

// contradictionMeta is what a detected contradiction's edges record: the detector and its reason.
func contradictionMeta(reason string) knowmind.EdgeMeta {
	return knowmind.EdgeMeta{CreatedBy: CreatedByCapture, Reason: cleanReason(reason)}
}

// RelContradicts is the relation a detected conflict is linked with (shapes/default.yaml).
const RelContradicts = "CONTRADICTS"

// checkCategory accepts "" or a category the domain declares.
func checkCategory(category string, cats []string) (string, error) {
	category = strings.TrimSpace(category)
	if category == "" {
		return "", nil
	}
	if len(cats) > 0 && !slices.Contains(cats, category) {
		return "", knowmind.InvalidParam("category", "category must be one of %s", strings.Join(cats, ", "))
	}
	if utf8.RuneCountInString(category) > knowmind.MaxCategoryChars {
		return "", knowmind.InvalidParam("category", "category exceeds %d characters", knowmind.MaxCategoryChars)
	}
	return category, nil
}

// setEngineFields adds what the engine knows about a memory to its node.
func setEngineFields(m map[string]any, confidence float64, extractor, category string, entities []map[string]string) {
	m["Memory.confidence"] = confidence
	m["Memory.extractor"] = extractor
	setIf(m, "Memory.category", category)
	if len(entities) > 0 {
		m["Memory.entities"] = entities
	}
}

func setIf(m map[string]any, pred, v string) {
	if v != "" {
		m[pred] = v
	}
}

func entityRefs(keys []string, uids map[string]string) []map[string]string {
	var out []map[string]string
	for _, k := range keys {
		if u := uids[k]; u != "" {
			out = append(out, map[string]string{"uid": u})
		}
	}
	return out
}

func uidRefs(uids []string) []map[string]string {
	out := make([]map[string]string, 0, len(uids))
	for _, u := range uids {
		if u != "" {
			out = append(out, map[string]string{"uid": u})
		}
	}
	return out
}
