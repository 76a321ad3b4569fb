package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// The bulk path (knowmind import / export, knowmind_store_memories): many
// memories, documents or relations per transaction, best-effort per item.
//
//   - WriteEntries validates each record on its own (a bad one fails alone),
//     drops what is already stored (same id; or, without an id, the same
//     content as a current indexed entry, as store_memory decides), embeds the
//     rest in embedder-sized batches across records and writes them in one
//     transaction. The times of a record (created_at, valid_from, valid_to)
//     are kept, so an export imports with its history.
//   - WriteRelations writes each link and its materialised inverse with the
//     record's validity (the facets link writes), unless the edge is stored so
//     already (the same times; a record without times: an edge open or closed
//     as the record says); classes are checked against the shapes, max_count
//     is not (a bulk load is not a sequence of links).
//   - Both may commit an import cursor (Import.key / Import.cursor) in the
//     same transaction, so an interrupted import resumes after the last
//     committed batch and never writes a batch twice.

// importCursorQuery reads the cursor of one import.
const importCursorQuery = `query q($k: string) { c(func: eq(Import.key, $k)) { Import.cursor } }`

// importCursorUpsert finds the cursor node the batch's cursor mutation updates (or creates).
const importCursorUpsert = `query q($k: string) { c as var(func: eq(Import.key, $k)) }`

// ImportCursor returns how many items of the import named key are committed (0 if none).
func (t *Tenant) ImportCursor(ctx context.Context, key string) (int, error) {
	var out struct {
		C []struct {
			Cursor int `json:"Import.cursor"`
		}
	}
	if err := t.queryVars(ctx, importCursorQuery, map[string]string{"$k": key}, &out); err != nil {
		return 0, fmt.Errorf("read import cursor: %w", err)
	}
	if len(out.C) == 0 {
		return 0, nil
	}
	return out.C[0].Cursor, nil
}

// checkCursor bounds a cursor key: it is spliced into N-Quads.
func checkCursor(c knowmind.BatchCursor) error {
	if c.Key == "" {
		return nil
	}
	if len(c.Key) > knowmind.MaxIDChars || strings.Trim(c.Key, "0123456789abcdefghijklmnopqrstuvwxyz:_-") != "" {
		return fmt.Errorf("import cursor key %q: want at most %d of [0-9a-z:_-]", c.Key, knowmind.MaxIDChars)
	}
	return nil
}

// commitBatch sends the batch's mutations, plus the cursor when one is named, in txn.
func commitBatch(ctx context.Context, txn *dgo.Txn, c knowmind.BatchCursor, muts []*api.Mutation) (*api.Response, error) {
	req := &api.Request{Mutations: muts}
	if c.Key != "" {
		req.Query = importCursorUpsert
		req.Vars = map[string]string{"$k": c.Key}
		req.Mutations = append(req.Mutations, &api.Mutation{SetNquads: []byte(fmt.Sprintf(
			"uid(c) <Import.key> %q .\nuid(c) <Import.cursor> \"%d\" .\nuid(c) <Import.updated_at> %q .\nuid(c) <dgraph.type> \"Import\" .",
			c.Key, c.Done, nowString()))})
	}
	if len(req.Mutations) == 0 {
		return &api.Response{}, nil
	}
	return txn.Do(ctx, req)
}

// bulkEntry is one record of WriteEntries on its way in.
type bulkEntry struct {
	*entry
	index     int    // in the batch
	givenID   bool   // the record named its id
	status    string // indexed or failed
	createdAt string
	updatedAt string
	validFrom string
	validTo   string
	engine    *knowmind.MemoryEngine // what the memory engine recorded (export of a captured fact)
}

// WriteEntries writes memory and document records (see the top of this file) and returns one
// result per record, in order. The error is for the batch as a whole (Dgraph unreachable, the
// transaction failed): then nothing of it, and no cursor, was committed.
func (t *Tenant) WriteEntries(ctx context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	if err := checkCursor(cur); err != nil {
		return nil, err
	}
	var projects, notes, memories []int
	for i, r := range recs {
		switch r.Type {
		case knowmind.RecordProject:
			projects = append(projects, i)
		case knowmind.RecordNote:
			notes = append(notes, i)
		default:
			memories = append(memories, i)
		}
	}
	if len(projects)+len(notes) == 0 {
		return t.writeMemoryEntries(ctx, recs, cur)
	}
	// Projects before the notes that name them, both by key and unchanged when present, so
	// writing them before the batch's cursor commits is safe to repeat after an interruption.
	results := make([]knowmind.ItemResult, len(recs))
	if err := t.writeProjects(ctx, recs, projects, results); err != nil {
		return nil, fmt.Errorf("import projects: %w", err)
	}
	if err := t.writeNotes(ctx, recs, notes, results); err != nil {
		return nil, err
	}
	if len(memories) == 0 {
		return results, t.commitCursorOnly(ctx, cur)
	}
	sub := make([]knowmind.Record, len(memories))
	for j, i := range memories {
		sub[j] = recs[i]
	}
	got, err := t.writeMemoryEntries(ctx, sub, cur)
	if err != nil {
		return nil, err
	}
	for j, i := range memories {
		results[i] = got[j]
	}
	return results, nil
}

// writeMemoryEntries writes the memory and document records of a batch (WriteEntries).
func (t *Tenant) writeMemoryEntries(ctx context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	results := make([]knowmind.ItemResult, len(recs))
	var todo []*bulkEntry
	byID := map[string]*bulkEntry{}
	for i, r := range recs {
		b, err := checkRecord(r)
		if err != nil {
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: strings.TrimSpace(r.ID), Title: r.Title, Err: err}
			continue
		}
		b.index = i
		if prev := byID[b.id]; prev != nil {
			results[i] = sameOrConflict(b, prev.id, prev.sha, prev.title)
			continue
		}
		byID[b.id] = b
		todo = append(todo, b)
	}

	// Checked before embedding, so stored records cost no embedding; checked again in the
	// transaction, which decides.
	started := time.Now()
	todo, err := t.dropStored(ctx, t.dg.NewReadOnlyTxn(), todo, results)
	if err != nil {
		return nil, err
	}
	entries := make([]*entry, len(todo))
	for i, b := range todo {
		entries[i] = b.entry
	}
	if err := t.placeInSequences(ctx, t.dg.NewReadOnlyTxn(), entries); err != nil {
		return nil, err
	}
	if err := t.engineEntities(ctx, todo); err != nil {
		return nil, err
	}
	looked := time.Now()
	var indexed []*bulkEntry
	keep := todo[:0:0]
	for _, b := range todo {
		if b.status == knowmind.StatusIndexed {
			if err := b.split(); err != nil { // too_large: refused before anything is embedded
				results[b.index] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: b.id, Title: b.title, Err: err}
				continue
			}
			indexed = append(indexed, b)
		}
		keep = append(keep, b)
	}
	todo = keep
	if err := t.embedEntries(ctx, indexed); err != nil {
		t.c.log.Error("bulk write: embedding failed", "tenant", t.Name, "entries", len(indexed), "err", err)
		kerr := knowmind.Internal(knowmind.ReasonIngestFailed, "the batch could not be embedded; nothing of it was written")
		for _, b := range indexed {
			results[b.index] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: b.id, Title: b.title, Err: kerr}
		}
		return results, kerr
	}

	embedded := time.Now()
	var written []*bulkEntry
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		again := make([]knowmind.ItemResult, len(recs))
		write, err := t.dropStored(ctx, txn, todo, again)
		if err != nil {
			return err
		}
		nodes := make([]map[string]any, len(write))
		for i, b := range write {
			nodes[i] = b.bulkNode(fmt.Sprintf("b%d", i))
		}
		var muts []*api.Mutation
		if len(nodes) > 0 {
			body, err := json.Marshal(nodes)
			if err != nil {
				return err
			}
			muts = append(muts, &api.Mutation{SetJson: body})
		}
		resp, err := commitBatch(ctx, txn, cur, muts)
		if err != nil {
			return err
		}
		for i, b := range write {
			b.committed(fmt.Sprintf("b%d", i), resp.Uids)
		}
		for i := range again {
			if again[i].Status != "" {
				results[i] = again[i]
			}
		}
		written = write
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bulk write of %d entries: %w", len(todo), err)
	}
	t.c.log.Debug("bulk write", "tenant", t.Name, "records", len(recs), "written", len(written),
		"lookup", looked.Sub(started), "embed", embedded.Sub(looked), "write", time.Since(embedded))
	var current []*entry
	for _, b := range written {
		res := knowmind.ItemResult{Status: knowmind.ItemStored, ID: b.id, Title: b.title}
		if b.status == knowmind.StatusIndexed {
			current = append(current, b.entry)
			res.Status, res.ChunksWritten = knowmind.ItemIndexed, len(b.chunks)
		}
		results[b.index] = res
	}
	for _, m := range t.afterWrite(ctx, current...).matches {
		for i := range results {
			if results[i].ID == m.MemoryID && results[i].Status == knowmind.ItemIndexed {
				results[i].PMMatches = append(results[i].PMMatches, m)
			}
		}
	}
	return results, nil
}

// checkRecord validates a memory or document record with the rules of store_memory and
// upload_document and turns it into an entry (a new UUID when it names no id).
func checkRecord(r knowmind.Record) (*bulkEntry, error) {
	kind := r.Type
	if kind != knowmind.RecordMemory && kind != knowmind.RecordDocument {
		return nil, knowmind.InvalidParam("type", "type must be memory or document here, not %q", r.Type)
	}
	content, err := checkContent(r.Content)
	if err != nil {
		return nil, err
	}
	title, err := checkText("title", r.Title, knowmind.MaxTitleChars, false)
	if err != nil {
		return nil, err
	}
	memoryType := ""
	if kind == knowmind.KindMemory || r.MemoryType != "" {
		if memoryType, err = checkMemoryType(r.MemoryType); err != nil {
			return nil, err
		}
	}
	tags, err := checkTags(r.Tags)
	if err != nil {
		return nil, err
	}
	source, err := checkText("source", r.Source, knowmind.MaxSourceChars, false)
	if err != nil {
		return nil, err
	}
	reason, err := checkText("update_reason", r.UpdateReason, knowmind.MaxUpdateReasonChars, false)
	if err != nil {
		return nil, err
	}
	sequence, position, err := checkSequence(r.Sequence, r.Position)
	if err != nil {
		return nil, err
	}
	id, err := checkText("id", r.ID, knowmind.MaxIDChars, false)
	if err != nil {
		return nil, err
	}
	status := r.Status
	switch status {
	case "":
		status = knowmind.StatusIndexed
	case knowmind.StatusIndexed, knowmind.StatusFailed:
	default:
		return nil, knowmind.InvalidParam("status", "status must be indexed or failed")
	}
	e := newEntry(kind, title, content)
	e.memoryType, e.tags, e.source, e.updateReason = memoryType, tags, source, reason
	e.sequence = sequence
	if position != nil {
		e.position, e.positioned = *position, true
	}
	b := &bulkEntry{entry: e, givenID: id != "", status: status}
	if r.Engine != nil {
		if err := r.Engine.Validate(); err != nil {
			return nil, err
		}
		b.engine = r.Engine
		e.category = r.Engine.Category
	}
	if id != "" {
		e.id = id
	}
	now := time.Now().UTC()
	stamp := func(t *time.Time, def time.Time) time.Time {
		if t == nil || t.IsZero() {
			return def
		}
		return t.UTC()
	}
	created := stamp(r.CreatedAt, now)
	validFrom := stamp(r.ValidFrom, created)
	b.createdAt = created.Format(time.RFC3339Nano)
	b.updatedAt = stamp(r.UpdatedAt, created).Format(time.RFC3339Nano)
	b.validFrom = validFrom.Format(time.RFC3339Nano)
	e.at = validFrom // the times its text names are resolved against its own time
	if r.ValidTo != nil && !r.ValidTo.IsZero() {
		if r.ValidTo.Before(validFrom) {
			return nil, knowmind.InvalidParam("valid_to", "valid_to must not be before valid_from")
		}
		b.validTo = r.ValidTo.UTC().Format(time.RFC3339Nano)
	}
	return b, nil
}

// sameOrConflict is the result for a record whose id is already taken: unchanged when the
// stored entry has the same content and title, a conflict otherwise (nothing is overwritten).
func sameOrConflict(b *bulkEntry, id, sha, title string) knowmind.ItemResult {
	if sha == b.sha && title == b.title {
		return knowmind.ItemResult{Status: knowmind.ItemUnchanged, ID: id, Title: title}
	}
	return knowmind.ItemResult{Status: knowmind.ItemFailed, ID: b.id, Title: b.title,
		Err: knowmind.Errorf(knowmind.ECONFLICT, "id %q is already stored with other content or title; nothing was overwritten", b.id)}
}

// dropStored looks the entries up by id and, those without one, by content (one query for the
// batch), fills results for the stored ones and returns the others.
func (t *Tenant) dropStored(ctx context.Context, q querier, todo []*bulkEntry, results []knowmind.ItemResult) ([]*bulkEntry, error) {
	var ids, shas []string
	for _, b := range todo {
		if b.givenID {
			ids = append(ids, b.id)
		} else {
			shas = append(shas, b.sha)
		}
	}
	if len(ids)+len(shas) == 0 {
		return todo, nil
	}
	var decl []string
	vars := map[string]string{}
	list := func(prefix string, vals []string) string {
		names := make([]string, len(vals))
		for i, v := range vals {
			names[i] = fmt.Sprintf("$%s%d", prefix, i)
			vars[names[i]] = v
			decl = append(decl, names[i]+": string")
		}
		return "[" + strings.Join(names, ", ") + "]"
	}
	var blocks strings.Builder
	if len(ids) > 0 {
		fmt.Fprintf(&blocks, "  ids(func: eq(Memory.id, %s)) { Memory.id Memory.title Memory.content_sha }\n", list("i", ids))
	}
	if len(shas) > 0 {
		fmt.Fprintf(&blocks, "  shas(func: eq(Memory.content_sha, %s)) @filter(eq(Memory.status, \"indexed\") AND NOT has(Memory.valid_to)) { Memory.id Memory.kind Memory.title Memory.content_sha }\n", list("s", shas))
	}
	query := "query q(" + strings.Join(decl, ", ") + ") {\n" + blocks.String() + "}"
	resp, err := q.QueryWithVars(ctx, query, vars)
	if err != nil {
		return nil, fmt.Errorf("bulk write: look up stored entries: %w", err)
	}
	var out struct {
		IDs  []dgMemory `json:"ids"`
		SHAs []dgMemory `json:"shas"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, err
	}
	storedByID := map[string]dgMemory{}
	for _, m := range out.IDs {
		storedByID[m.ID] = m
	}
	type contentKey struct{ kind, sha, title string }
	storedByContent := map[contentKey]dgMemory{}
	for _, m := range out.SHAs {
		title := "" // memories are the same by content alone; documents by title and content
		if m.Kind == knowmind.KindDocument {
			title = m.Title
		}
		storedByContent[contentKey{m.Kind, m.ContentSHA, title}] = m
	}
	keep := todo[:0:0]
	seen := map[contentKey]*bulkEntry{}
	for _, b := range todo {
		if b.givenID {
			if m, ok := storedByID[b.id]; ok {
				results[b.index] = sameOrConflict(b, m.ID, m.ContentSHA, m.Title)
				continue
			}
			keep = append(keep, b)
			continue
		}
		key := contentKey{b.kind, b.sha, ""}
		if b.kind == knowmind.KindDocument {
			key.title = b.title
		}
		if m, ok := storedByContent[key]; ok {
			results[b.index] = knowmind.ItemResult{Status: knowmind.ItemUnchanged, ID: m.ID, Title: m.Title}
			continue
		}
		if first := seen[key]; first != nil { // the same content twice in one batch
			results[b.index] = knowmind.ItemResult{Status: knowmind.ItemUnchanged, ID: first.id, Title: first.title}
			continue
		}
		seen[key] = b
		keep = append(keep, b)
	}
	return keep, nil
}

// embedEntries embeds the chunks of all entries, embedBatch texts per call across entries (short
// memories are one chunk each, so a batch of them is a few calls, not one per memory).
func (t *Tenant) embedEntries(ctx context.Context, entries []*bulkEntry) error {
	emb := t.c.cfg.Embedder
	if emb == nil {
		return fmt.Errorf("no embedder configured")
	}
	var texts []string
	for _, b := range entries {
		texts = append(texts, b.texts...)
	}
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		end := min(start+embedBatch, len(texts))
		got, err := emb.EmbedPassages(ctx, texts[start:end])
		if err != nil {
			return fmt.Errorf("embed chunks %d-%d with %s: %w", start, end-1, emb.ID(), err)
		}
		if len(got) != end-start {
			return fmt.Errorf("embedder %s returned %d vectors for %d texts", emb.ID(), len(got), end-start)
		}
		for _, v := range got {
			if len(v) != emb.Dim() {
				return fmt.Errorf("embedder %s returned a vector of %d dimensions, want %d", emb.ID(), len(v), emb.Dim())
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("embedder %s returned a non-finite vector", emb.ID())
				}
			}
		}
		vecs = append(vecs, got...)
	}
	for _, b := range entries {
		b.vectors, vecs = vecs[:len(b.texts)], vecs[len(b.texts):]
	}
	return nil
}

// bulkNode is the entry's node as ingest writes it, with the record's times.
func (b *bulkEntry) bulkNode(blank string) map[string]any {
	m := b.node(blank, b.createdAt, b.status, "")
	m["Memory.updated_at"] = b.updatedAt
	m["Memory.valid_from"] = b.validFrom
	if b.validTo != "" {
		m["Memory.valid_to"] = b.validTo
	}
	if g := b.engine; g != nil {
		m["Memory.confidence"] = g.Confidence
		setIf(m, "Memory.extractor", g.Extractor)
		setIf(m, "Memory.reviewed_by", g.ReviewedBy)
		if g.ReviewedAt != nil {
			m["Memory.reviewed_at"] = formatTime(*g.ReviewedAt)
		}
	}
	return m
}

// engineEntities creates the entities the entries' engine fields name (as needed, once each)
// and points the entries at them.
func (t *Tenant) engineEntities(ctx context.Context, entries []*bulkEntry) error {
	var ents []knowmind.CandidateEntity
	seen := map[string]bool{}
	for _, b := range entries {
		if b.engine == nil {
			continue
		}
		for _, e := range b.engine.Entities {
			if k := entityKey(e.Type, e.ID); !seen[k] {
				seen[k] = true
				ents = append(ents, knowmind.CandidateEntity{Type: e.Type, ID: e.ID, Name: cmp.Or(e.Name, e.ID)})
			}
		}
	}
	if len(ents) == 0 {
		return nil
	}
	uids, err := t.ensureEntities(ctx, ents)
	if err != nil {
		return err
	}
	for _, b := range entries {
		if b.engine == nil {
			continue
		}
		b.entityUIDs = nil
		for _, e := range b.engine.Entities {
			if u := uids[entityKey(e.Type, e.ID)]; u != "" {
				b.entityUIDs = append(b.entityUIDs, u)
			}
		}
	}
	return nil
}

// WriteRelations writes relation records (see the top of this file), one result per record in
// order; a result's ID is the edge id. The error is for the batch as a whole.
func (t *Tenant) WriteRelations(ctx context.Context, recs []knowmind.Record, cur knowmind.BatchCursor) ([]knowmind.ItemResult, error) {
	defer t.relationsWritten() // it may write a relation's first edge: recall asks again (linkedrelations.go)
	if err := checkCursor(cur); err != nil {
		return nil, err
	}
	results := make([]knowmind.ItemResult, len(recs))
	type link struct {
		index                  int
		rel, inverse, from, to string
		created, validFrom     time.Time
		validTo                *time.Time
		timed                  bool // the record gave created_at or valid_from
		meta                   knowmind.EdgeMeta
	}
	var links []link
	idSet := map[string]bool{}
	now := time.Now().UTC()
	var engineRecs []int // goals and drafts (engineimport.go)
	var noteRecs []int   // revisions, forward links and visits (noteexport.go)
	var stateRecs []int  // entities, calibration, capture settings (enginestate.go)
	for i, r := range recs {
		fail := func(err error) { results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err} }
		switch r.Type {
		case knowmind.RecordGoal, knowmind.RecordDraft:
			engineRecs = append(engineRecs, i)
			continue
		case knowmind.RecordRevision, knowmind.RecordForward, knowmind.RecordVisit:
			noteRecs = append(noteRecs, i)
			continue
		case knowmind.RecordEntity, knowmind.RecordCalibration, knowmind.RecordCaptureSettings:
			stateRecs = append(stateRecs, i)
			continue
		}
		if r.Type != knowmind.RecordRelation {
			fail(knowmind.InvalidParam("type", "type must be relation here, not %q", r.Type))
			continue
		}
		rel, err := t.relationFor(r.From, r.To, r.RelType)
		if err != nil {
			fail(err)
			continue
		}
		if c := r.Confidence; c != nil && (*c < 0 || *c > 1) {
			fail(knowmind.InvalidParam("confidence", "confidence must lie in 0..1"))
			continue
		}
		if utf8.RuneCountInString(r.Reason) > knowmind.MaxEdgeReasonChars || utf8.RuneCountInString(r.CreatedBy) > knowmind.MaxIDChars {
			fail(knowmind.InvalidParam("reason", "reason exceeds %d characters or created_by %d", knowmind.MaxEdgeReasonChars, knowmind.MaxIDChars))
			continue
		}
		l := link{index: i, rel: rel.Name, inverse: rel.Inverse, from: r.From, to: r.To, created: now,
			meta: knowmind.EdgeMeta{Confidence: r.Confidence, CreatedBy: cleanReason(r.CreatedBy), Reason: cleanReason(r.Reason)}}
		if r.CreatedAt != nil && !r.CreatedAt.IsZero() {
			l.created, l.timed = r.CreatedAt.UTC(), true
		}
		l.validFrom = l.created
		if r.ValidFrom != nil && !r.ValidFrom.IsZero() {
			l.validFrom, l.timed = r.ValidFrom.UTC(), true
		}
		if r.ValidTo != nil && !r.ValidTo.IsZero() {
			if r.ValidTo.Before(l.validFrom) {
				fail(knowmind.InvalidParam("valid_to", "valid_to must not be before valid_from"))
				continue
			}
			vt := r.ValidTo.UTC()
			l.validTo = &vt
		}
		links = append(links, l)
		idSet[r.From], idSet[r.To] = true, true
	}
	// Goals and drafts are written by id and unchanged when present, so writing them before
	// the batch's cursor commits is safe to repeat after an interruption.
	if err := t.writeGoalsAndDrafts(ctx, recs, engineRecs, results); err != nil {
		return nil, err
	}
	if err := t.writeNoteHistory(ctx, recs, noteRecs, results); err != nil {
		return nil, fmt.Errorf("import note history: %w", err)
	}
	if err := t.writeEngineState(ctx, recs, stateRecs, results); err != nil {
		return nil, fmt.Errorf("import engine state: %w", err)
	}
	if len(links) == 0 {
		return results, t.commitCursorOnly(ctx, cur)
	}
	ids := make([]string, 0, len(idSet))
	for id := range idSet {
		ids = append(ids, id)
	}
	names := make([]string, len(ids))
	decl := make([]string, len(ids))
	vars := make(map[string]string, len(ids))
	for i, id := range ids {
		names[i] = "$i" + strconv.Itoa(i)
		decl[i] = names[i] + ": string"
		vars[names[i]] = id
	}
	// Each end with its edges of the batch's relation types to the batch's other ends, so an
	// edge already stored as the record says is left alone (unchanged).
	idList := "[" + strings.Join(names, ", ") + "]"
	var edgeBlocks strings.Builder
	var rels []string
	for _, l := range links {
		if !slices.Contains(rels, l.rel) {
			rels = append(rels, l.rel) // validated by relationFor: UPPER_SNAKE only
			fmt.Fprintf(&edgeBlocks, "    <%s> @filter(eq(Memory.id, %s)) @facets(created_at: created_at, valid_from: valid_from, valid_to: valid_to, inverse: inverse) { Memory.id }\n", l.rel, idList)
		}
	}
	query := "query q(" + strings.Join(decl, ", ") + ") {\n  ends(func: eq(Memory.id, " + idList +
		")) {\n    uid Memory.id Memory.kind Memory.memory_type Memory.tags\n" + edgeBlocks.String() + "  }\n}"
	set := t.c.cfg.Shapes
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, query, vars)
		if err != nil {
			return err
		}
		var out struct {
			Ends []json.RawMessage
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		ends := map[string]*linkEnd{}
		stored := map[[3]string]edgeFacets{} // from id, rel, to id -> the stored edge
		for _, raw := range out.Ends {
			var end struct {
				linkEnd
				ID string `json:"Memory.id"`
			}
			var edges map[string]json.RawMessage
			if err := json.Unmarshal(raw, &end); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &edges); err != nil {
				return err
			}
			ends[end.ID] = &end.linkEnd
			for _, rel := range rels {
				var peers []struct {
					edgeFacets
					PeerID string `json:"Memory.id"`
				}
				if raw, ok := edges[rel]; ok {
					if err := json.Unmarshal(raw, &peers); err != nil {
						return err
					}
				}
				for _, p := range peers {
					stored[[3]string{end.ID, rel, p.PeerID}] = p.edgeFacets
				}
			}
		}
		same := func(l link) bool {
			e, ok := stored[[3]string{l.from, l.rel, l.to}]
			if !ok || e.Inverse || (e.ValidTo == nil) != (l.validTo == nil) || (l.validTo != nil && !e.ValidTo.Equal(*l.validTo)) {
				return false
			}
			if !l.timed { // no times given: an edge that is there, as open or closed as asked, will do
				return true
			}
			return e.CreatedAt != nil && e.CreatedAt.Equal(l.created) && e.ValidFrom != nil && e.ValidFrom.Equal(l.validFrom)
		}
		var nquads []string
		for _, l := range links {
			src, dst := ends[l.from], ends[l.to]
			res := knowmind.ItemResult{Status: knowmind.ItemStored, ID: EdgeID(l.from, l.rel, l.to)}
			switch {
			case src == nil:
				res = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "from",
					Message: fmt.Sprintf("memory %q (from) not found", l.from)}}
			case dst == nil:
				res = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "to",
					Message: fmt.Sprintf("memory %q (to) not found", l.to)}}
			default:
				if err := set.Check(l.rel, src.classes(), dst.classes(), 0); err != nil {
					res = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err}
					break
				}
				if same(l) {
					res.Status = knowmind.ItemUnchanged
					break
				}
				nquads = append(nquads,
					edgeNQuadMeta(src.UID, l.rel, dst.UID, res.ID, l.created, l.validFrom, l.validTo, false, l.meta),
					edgeNQuadMeta(dst.UID, l.inverse, src.UID, EdgeID(l.to, l.inverse, l.from), l.created, l.validFrom, l.validTo, true, l.meta))
			}
			results[l.index] = res
		}
		var muts []*api.Mutation
		if len(nquads) > 0 {
			muts = append(muts, &api.Mutation{SetNquads: []byte(strings.Join(nquads, "\n"))})
		}
		_, err = commitBatch(ctx, txn, cur, muts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bulk write of %d relations: %w", len(links), err)
	}
	return results, nil
}

// commitCursorOnly advances the cursor past a batch that wrote nothing.
func (t *Tenant) commitCursorOnly(ctx context.Context, cur knowmind.BatchCursor) error {
	if cur.Key == "" {
		return nil
	}
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := commitBatch(ctx, txn, cur, nil)
		return err
	})
}

// StoreMemories is knowmind_store_memories: each input stored as store_memory would (same
// validation, same idempotency by content), all in one transaction, one result per input.
func (t *Tenant) StoreMemories(ctx context.Context, ins []knowmind.StoreMemoryInput) ([]knowmind.ItemResult, error) {
	if len(ins) == 0 || len(ins) > knowmind.MaxStoreMemoriesItems {
		return nil, knowmind.InvalidParam("memories", "memories must hold 1 to %d items", knowmind.MaxStoreMemoriesItems)
	}
	recs := make([]knowmind.Record, len(ins))
	for i, in := range ins {
		recs[i] = knowmind.Record{Type: knowmind.RecordMemory, Title: in.Title, Content: in.Content,
			MemoryType: in.MemoryType, Tags: in.Tags, Source: in.Source, ValidFrom: in.OccurredAt,
			Sequence: in.Sequence, Position: in.Position}
	}
	if err := t.implicitSequences(ctx, ins, recs, time.Now()); err != nil {
		return nil, err
	}
	return t.WriteEntries(ctx, recs, knowmind.BatchCursor{})
}

// Provider is the embedding provider's name, as results report it.
func (t *Tenant) Provider() string { return t.provider() }
