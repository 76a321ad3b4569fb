package graph

// Notes as of a time. A note is edited in place; every edit and rename keeps the former title,
// body and folder as a Revision with the interval it was current (valid_from, valid_to), and
// the words of that body as Revision.text, indexed like chunk text. So the time-travel tools
// read a note at an instant as the revision current then, or the note itself when no edit has
// replaced its body since:
//
//   - knowmind_recall_at_time leaves out notes whose present body is younger than as_of and
//     ranks the revisions current at as_of that hold the query's words (revisionHits);
//   - knowmind_replay lists the notes of the instant beside memories and documents
//     (notesAt), each with the title, folder and preview of then;
//   - knowmind_explore as_of shows the revision's title and body (explore.go, noteAsOf).
//
// A revision's searchable text is its chunks' texts as the chunker bounds them, so every run
// in it passes the write guard as Chunk.text does; Revision.body keeps the body as written.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	json "github.com/goccy/go-json"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/chunk"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/search"
)

// revisionNode is the JSON of the Revision that keeps n's present state (title, body, folder
// and the words they are found by), current from its last write until validTo; blank names
// the new node, noteRef the note's uid or uid(var).
func revisionNode(blank, noteRef string, n dgNote, validTo string) map[string]any {
	rev := map[string]any{
		"uid": "_:" + blank, "dgraph.type": "Revision", "Revision.note": map[string]any{"uid": noteRef},
		"Revision.revision": n.Revision, "Revision.version": n.Version, "Revision.title": n.Title,
		"Revision.body": n.Content, "Revision.valid_from": n.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"Revision.valid_to": validTo, "Revision.by": n.UpdatedBy,
	}
	if n.Path != "" {
		rev["Revision.path"] = n.Path
	}
	if pred, text := revisionText(n.Title, n.Content); text != "" {
		rev[pred] = text
	}
	return rev
}

// revisionText is what a former body is found by: the texts its chunks had (title and heading
// path first, every run bounded by the chunker), under Revision.text@de for German. A body the
// chunker refuses (it was stored, so it does not happen) gets its title only.
func revisionText(title, body string) (pred, text string) {
	e := newEntry(knowmind.KindNote, title, body)
	pred = "Revision.text"
	if err := e.split(); err != nil {
		return pred, runes.Truncate(title, maxChunkHeaderChars)
	}
	if e.lang == chunk.German {
		pred = "Revision.text@de"
	}
	return pred, strings.Join(e.texts, "\n\n")
}

// revisionTextSchemaVersion is the tenant schema version from which revisions carry their
// searchable text; a tenant recorded below it gets it written once (backfillRevisionText).
const revisionTextSchemaVersion = 9

// revisionBackfillBatch bounds one backfill transaction (each revision can hold a body of
// knowmind.MaxNoteBodyChars).
const revisionBackfillBatch = 20

const revisionsWithoutTextQuery = `{
  r(func: has(Revision.body), first: %d) @filter(NOT has(Revision.text) AND NOT has(Revision.text@de)) {
    uid Revision.title Revision.body
  }
}`

// backfillRevisionText writes Revision.text for the revisions written before it existed, a
// batch per transaction; it returns how many it wrote. Interrupted, the next open goes on.
func backfillRevisionText(ctx context.Context, dg *dgo.Dgraph) (int, error) {
	done := map[string]bool{}
	for {
		resp, err := dg.NewReadOnlyTxn().Query(ctx, fmt.Sprintf(revisionsWithoutTextQuery, revisionBackfillBatch))
		if err != nil {
			return len(done), fmt.Errorf("backfill revision text: %w", err)
		}
		var out struct {
			R []struct {
				UID   string `json:"uid"`
				Title string `json:"Revision.title"`
				Body  string `json:"Revision.body"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return len(done), err
		}
		if len(out.R) == 0 {
			return len(done), nil
		}
		set := make([]map[string]any, 0, len(out.R))
		for _, r := range out.R {
			if done[r.UID] {
				return len(done), fmt.Errorf("backfill revision text: revision %s still has none after it was written", r.UID)
			}
			done[r.UID] = true
			pred, text := revisionText(r.Title, r.Body)
			if text == "" {
				text = "-" // an empty title and body: something marks it done
			}
			set = append(set, map[string]any{"uid": r.UID, pred: text})
		}
		if err := commitBackfill(ctx, dg, set); err != nil {
			return len(done), fmt.Errorf("backfill revision text: %w", err)
		}
	}
}

// bodySince is when the note's present title and body became current: the end of its newest
// revision, or its creation. Read where the note was read with noteSinceField or
// recallNoteSinceField.
func (n dgNote) bodySince() time.Time {
	since := n.CreatedAt
	for _, r := range n.Since {
		if r.ValidTo.After(since) {
			since = r.ValidTo
		}
	}
	if n.NewestRevisionEnd != nil && n.NewestRevisionEnd.After(since) {
		since = *n.NewestRevisionEnd
	}
	return since
}

// noteSinceField reads what bodySince needs beside a note's fields (Memory.created_at too).
const noteSinceField = `since: ~Revision.note (orderdesc: Revision.valid_to, first: 1) { Revision.valid_to }`

// currentAt wraps keep for a recall as of at: a note whose present body is younger than at is
// not what it said then (its revision is ranked instead, revisionHits).
func currentAt(at time.Time, keep hitFilter) hitFilter {
	return func(h knowmind.RecallHit, n *dgNote) bool {
		if h.Kind == knowmind.KindNote && n != nil && n.bodySince().After(at) {
			return false
		}
		return keep == nil || keep(h, n)
	}
}

// revisionCandidates bounds the former bodies one recall as of a time reads and scores.
const revisionCandidates = 50

// revisionFilterAt keeps the revisions current at $at.
const revisionFilterAt = `le(Revision.valid_from, $at) AND gt(Revision.valid_to, $at)`

// revisionNoteFields are what decides who sees a revision's note.
const revisionNoteFields = `uid Memory.id Memory.kind Memory.status Memory.tags Memory.created_at Note.path Note.class Note.owner
      Note.project { uid Project.handle Project.aliases }`

// revisionsAtQuery finds the revisions current at $at that hold any of the query's words,
// German and English analysis, with their notes, at most revisionCandidates per analysis;
// for a caller with a scope (scopeDQL) only revisions of notes it may see count toward them.
func revisionsAtQuery(scope *knowmind.NoteScope) (string, map[string]string) {
	n := strconv.Itoa(revisionCandidates)
	blocks, filter, vars := scopeDQL(scope)
	roots := `  RD as var(func: anyoftext(Revision.text@de, $q), first: ` + n + `) @filter(` + revisionFilterAt + `)
  RE as var(func: anyoftext(Revision.text, $q), first: ` + n + `) @filter(` + revisionFilterAt + `)
`
	if filter != "" {
		roots = blocks + `  RA as var(func: anyoftext(Revision.text@de, $q)) @filter(` + revisionFilterAt + `)
  RB as var(func: anyoftext(Revision.text, $q)) @filter(` + revisionFilterAt + `)
  var(func: uid(RA, RB)) { RN as Revision.note }
  VN as var(func: uid(RN)) @filter(` + filter + `)
  var(func: uid(VN)) { VR as ~Revision.note }
  RD as var(func: uid(RA), first: ` + n + `) @filter(uid(VR))
  RE as var(func: uid(RB), first: ` + n + `) @filter(uid(VR))
`
	}
	return `query q($at: string, $q: string` + ownerParam(vars) + `) {
` + roots + `  r(func: uid(RD, RE), first: ` + strconv.Itoa(2*revisionCandidates) + `) {
    uid Revision.title Revision.path Revision.body Revision.valid_from Revision.valid_to
    note: Revision.note { ` + revisionNoteFields + ` }
  }
}`, vars
}

// dgRevision is a revision with its note, as revisionsAtQuery and replay read it.
type dgRevision struct {
	UID       string    `json:"uid"`
	Title     string    `json:"Revision.title"`
	Path      string    `json:"Revision.path"`
	Body      string    `json:"Revision.body"`
	ValidFrom time.Time `json:"Revision.valid_from"`
	ValidTo   time.Time `json:"Revision.valid_to"`
	Note      *dgNote   `json:"note"`
}

// revisionHits ranks the former note bodies current at q.AsOf that hold the query's words:
// each scores the share of the query's weight (BM25's idf of each analysed term, from the
// tenant's text statistics) its title and body hold, the scale of recall's text signal, and
// those keep accepts and scoring at least floor (recall's, search.Floor) come back best first,
// at most q.K.
func (t *Tenant) revisionHits(ctx context.Context, q knowmind.RecallQuery, floor float64, keep hitFilter) ([]knowmind.RecallHit, error) {
	scope := callerScope(ctx)
	if q.AsOf == nil || strings.TrimSpace(q.Query) == "" || (scope != nil && !scope.ReachesNotes()) {
		return nil, nil
	}
	var out struct {
		R []dgRevision `json:"r"`
	}
	dql, vars := revisionsAtQuery(scope)
	if vars == nil {
		vars = map[string]string{}
	}
	vars["$at"], vars["$q"] = formatTime(*q.AsOf), q.Query
	if err := t.queryVars(ctx, dql, vars, &out); err != nil {
		return nil, fmt.Errorf("recall at time: note revisions: %w", err)
	}
	var hits []knowmind.RecallHit
	for _, r := range out.R {
		if r.Note == nil || r.Note.ID == "" || r.Note.Kind != knowmind.KindNote {
			continue
		}
		lang := "" // the text index's tag: untagged English, "de" German
		if chunk.DetectLanguage(r.Body) == chunk.German {
			lang = "de"
		}
		score := search.RoundScore(t.queryShare(lang, q.Query, r.Title+"\n\n"+r.Body))
		if score == 0 || score < floor {
			continue
		}
		validFrom, validTo := r.ValidFrom, r.ValidTo
		h := knowmind.RecallHit{MemoryID: r.Note.ID, Kind: knowmind.KindNote, Title: r.Title,
			Content: runes.Truncate(r.Body, knowmind.RecallMaxContentChars), Score: score,
			ValidFrom: &validFrom, ValidTo: &validTo, Entities: []knowmind.EntityRef{}}
		if keep != nil && !keep(h, r.Note) {
			continue
		}
		hits = append(hits, h)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(len(hits), q.K)], nil
}

// queryShare is the share of the query's idf weight the text holds (0..1), analysed in lang
// as the tenant's text index analyses its chunks.
func (t *Tenant) queryShare(lang, query, text string) float64 {
	terms := slices.Compact(slices.Sorted(slices.Values(bm25.Analyze(lang, query))))
	if len(terms) == 0 {
		return 0
	}
	held := map[string]bool{}
	for _, w := range bm25.Analyze(lang, text) {
		held[w] = true
	}
	st := t.text.ix.Stats(t.Name, lang, terms...)
	var all, got float64
	for _, term := range terms {
		w := bm25.IDF(st.Docs, st.DF[term])
		all += w
		if held[term] {
			got += w
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// mergeRevisionHits adds the former note bodies to a recall's hits, best first, at most k.
func mergeRevisionHits(hits, revs []knowmind.RecallHit, k int) []knowmind.RecallHit {
	if len(revs) == 0 {
		return hits
	}
	merged := append(slices.Clone(hits), revs...)
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].Score > merged[j].Score })
	return merged[:min(len(merged), k)]
}

// replayNoteScan bounds the notes and revisions one replay reads; for a caller with a scope
// only what it may see counts toward it (scopeDQL).
const replayNoteScan = 4 * knowmind.RetrieveMaxLimit

// notesAtQuery lists the notes as they stood at $at: the notes whose present body was current
// then (created by then, and no revision of theirs ended after it), and the revisions current
// then; %[1]s holds the blocks that narrow both to the query's words (notesAtWords) or none,
// %[2]s and %[3]s the roots of the two lists, %[4]s the variables' declarations, %[5]d the cap,
// %[6]s scopeDQL's blocks (and VR: the revisions of the edited notes it keeps), %[7]s and
// %[8]s its filters on the notes and the revisions, or none.
const notesAtQuery = `query q($at: string%[4]s) {
  LATER as var(func: gt(Revision.valid_to, $at)) { EDITED as Revision.note }
%[1]s%[6]s
  N as var(func: %[2]s) @filter(eq(Memory.kind, "note") AND eq(Memory.status, "indexed") AND le(Memory.created_at, $at) AND NOT uid(EDITED)%[7]s)
  notes(func: uid(N), orderdesc: Memory.updated_at, first: %[5]d) {
    ` + revisionNoteFields + ` Memory.title Memory.preview ` + noteSinceField + `
  }
  R as var(func: %[3]s) @filter(uid(LATER) AND le(Revision.valid_from, $at)%[8]s)
  revs(func: uid(R), orderdesc: Revision.valid_from, first: %[5]d) {
    uid Revision.title Revision.path Revision.valid_from Revision.valid_to
    note: Revision.note { ` + revisionNoteFields + ` }
  }
}`

const notesAtWords = `  var(func: anyoftext(Chunk.text@de, $q)) { ND as ~Memory.chunks }
  var(func: anyoftext(Chunk.text, $q)) { NE as ~Memory.chunks }
  RD as var(func: anyoftext(Revision.text@de, $q))
  RE as var(func: anyoftext(Revision.text, $q))`

// revisionPreviewQuery reads the bodies of the revisions a replay shows (%s: their uids).
const revisionPreviewQuery = `{ r(func: uid(%s)) { uid Revision.body } }`

// notesAt lists the notes the caller (callerScope) may see as they stood at f.At, holding any
// of f.Query's words, newest valid first, at most f.Limit, and whether more matched: a note
// edited since shows the title, folder and body of its revision current then, with the
// valid_to the edit gave it. Notes name no category or entity: a listing filtered by one holds
// none.
func (t *Tenant) notesAt(ctx context.Context, f memoryFilter) ([]knowmind.RetrievedMemory, bool, error) {
	scope := callerScope(ctx)
	if f.At == nil || f.Category != "" || f.EntityType != "" || f.EntityKey != "" || (scope != nil && !scope.ReachesNotes()) {
		return nil, false, nil
	}
	blocks, filter, vars := scopeDQL(scope)
	if vars == nil {
		vars = map[string]string{}
	}
	vars["$at"] = formatTime(*f.At)
	words, params, noteRoot, revRoot := "", ownerParam(vars), `eq(Memory.kind, "note")`, "uid(LATER)"
	if f.Query != "" {
		vars["$q"] = f.Query
		words, params, noteRoot, revRoot = notesAtWords, params+", $q: string", "uid(ND, NE)", "uid(RD, RE)"
	}
	noteFilter, revFilter := "", ""
	if filter != "" {
		blocks += `  VN as var(func: uid(EDITED)) @filter(` + filter + `)
  var(func: uid(VN)) { VR as ~Revision.note }
`
		noteFilter, revFilter = " AND "+filter, " AND uid(VR)"
	}
	var out struct {
		Notes []dgNote     `json:"notes"`
		Revs  []dgRevision `json:"revs"`
	}
	dql := fmt.Sprintf(notesAtQuery, words, noteRoot, revRoot, params, replayNoteScan, blocks, noteFilter, revFilter)
	if err := t.queryVars(ctx, dql, vars, &out); err != nil {
		return nil, false, fmt.Errorf("notes at %s: %w", vars["$at"], err)
	}
	more := len(out.Notes) == replayNoteScan || len(out.Revs) == replayNoteScan
	type listed struct {
		m   knowmind.RetrievedMemory
		rev string // the revision whose body is the preview, "" for a present note
	}
	var ls []listed
	for _, n := range out.Notes {
		if n.ID == "" || n.hiddenFrom(scope) || n.bodySince().After(*f.At) {
			continue
		}
		ls = append(ls, listed{m: knowmind.RetrievedMemory{ID: n.ID, Kind: knowmind.KindNote, Title: n.Title, Content: n.Preview,
			Tags: n.Tags, Path: n.Path, CreatedAt: n.CreatedAt, ValidFrom: n.bodySince(), Entities: []knowmind.EntityRef{}}})
	}
	for _, r := range out.Revs {
		if r.Note == nil || r.Note.ID == "" || r.Note.Kind != knowmind.KindNote || r.Note.hiddenFrom(scope) || !uidPattern.MatchString(r.UID) {
			continue
		}
		validTo := r.ValidTo
		ls = append(ls, listed{rev: r.UID, m: knowmind.RetrievedMemory{ID: r.Note.ID, Kind: knowmind.KindNote, Title: r.Title,
			Tags: r.Note.Tags, Path: r.Path, CreatedAt: r.Note.CreatedAt, ValidFrom: r.ValidFrom, ValidTo: &validTo,
			Entities: []knowmind.EntityRef{}}})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].m.ValidFrom.After(ls[j].m.ValidFrom) })
	if len(ls) > f.Limit {
		ls, more = ls[:f.Limit], true
	}
	var uids []string
	for _, l := range ls {
		if l.rev != "" {
			uids = append(uids, l.rev)
		}
	}
	body := map[string]string{}
	if len(uids) > 0 {
		var bodies struct {
			R []struct {
				UID  string `json:"uid"`
				Body string `json:"Revision.body"`
			} `json:"r"`
		}
		if err := t.queryVars(ctx, fmt.Sprintf(revisionPreviewQuery, strings.Join(uids, ", ")), nil, &bodies); err != nil {
			return nil, false, fmt.Errorf("notes at %s: %w", vars["$at"], err)
		}
		for _, b := range bodies.R {
			body[b.UID] = previewOf(b.Body)
		}
	}
	ms := make([]knowmind.RetrievedMemory, len(ls))
	for i, l := range ls {
		ms[i] = l.m
		if l.rev != "" {
			ms[i].Content = body[l.rev]
		}
	}
	return ms, more, nil
}
