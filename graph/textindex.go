package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/knowmind/knowmind/bm25"
)

// BM25 corpus statistics of a tenant, kept in this process.
//
// Dgraph's full-text index finds the chunks that share a term with a query but cannot rank
// them; recall ranks them with BM25 (package bm25), which needs the corpus' document count,
// total length and each term's document frequency. Those live here, per tenant, one corpus per
// stored language tag ("de" for Chunk.text@de, "" for untagged English Chunk.text).
//
// What counts: every chunk of every memory with status indexed — superseded versions included,
// since recall_at_time searches them; failed ingests and deleted memories not. A chunk is the
// BM25 document, keyed "<Memory.id>#<Chunk.position>", so that the ingest code can report a
// memory without knowing Dgraph's chunk uids.
//
// Lifecycle: the statistics of a tenant are built lazily by the first recall that needs them,
// from a scan of the tenant's chunks (textIndex.ensure), and then kept current by the ingest
// code, which calls indexText after committing a memory with status indexed and unindexText
// after deleting memories. A hook call that arrives while the scan runs is queued and replayed
// after it (Add and Remove are idempotent, so replaying one the scan already saw is harmless).
//
// Several replicas: the hooks only see writes made by this process. Writes of other service
// replicas on the same Dgraph are picked up by a periodic reconcile (textsync.go): a recall
// that finds the last one older than textSyncInterval (60 s) starts one in the background, which
// adds the indexed memories created since the previous one and, when the store's count of
// indexed memories disagrees with the number held, diffs all ids to drop deleted ones. So
// while a tenant is being recalled, another replica's writes reach these statistics within
// about textSyncInterval (plus one sync's duration); a tenant nobody recalls is not synced, as
// nobody reads its statistics. A sync never loses or undoes this process's own concurrent
// writes. Until the next sync the ranking is only approximately the one a single replica would
// compute — BM25 degrades gracefully, bm25.Score clamps unknown document frequencies.
//
// Cost (BenchmarkTextStatsSync: one alpha, memories of one 40-word chunk, a 2-core machine
// busy with other work, so upper bounds): a sync that finds nothing new reads a count and an
// empty window — 2 ms at 5k memories, 85 ms at 100k (the count(uid) over the status index is
// most of it). A full id diff, only when the counts disagree (a deletion by another replica,
// in practice a document re-upload), lists every Memory.id: 40 ms at 5k, 2.2 s at 100k, in the
// background. Memories created in the last ~6 minutes (textSyncSlack plus an interval) are
// listed by every sync, so right after a bulk import by another replica a sync costs about a
// diff until the import leaves the window. A full rescan (the first load, RebuildTextStats)
// takes 28 s at 100k.
type textIndex struct {
	mu       sync.Mutex
	ix       bm25.Index
	state    textState
	ready    chan struct{}       // closed when a load finishes (state loaded or failed)
	pending  []textOp            // hook calls that arrived during a load
	memories map[string][]string // Memory.id → its chunks' document ids, every indexed memory
	tokens   tokenCache          // analysed chunk texts, for scoring candidates

	// Reconcile with the store (textsync.go).
	gen         uint64          // counts loads; a sync started under an older one is dropped
	syncedFrom  time.Time       // start of the last successful load or sync
	syncTried   time.Time       // start of the last sync attempt (or load)
	syncing     chan struct{}   // non-nil while a sync runs; closed when it ends
	syncAdded   map[string]bool // memories the hooks added while a sync runs
	syncRemoved map[string]bool // memories the hooks removed while a sync runs
	countOffset int             // indexed nodes the store counts but memories cannot hold
}

type textState int

const (
	textUnloaded textState = iota
	textLoading
	textLoaded
)

// textOp is a queued hook call: add (chunks set) or remove (memory ids).
type textOp struct {
	memoryID string
	lang     string
	chunks   []textChunk
	remove   []string
}

// textChunk is one chunk's searchable text as stored in Chunk.text(@de).
type textChunk struct {
	Position int
	Text     string
}

// indexText records the chunks of a memory the caller has just committed with status indexed.
// lang is the memory's language as stored: "de" for German (Chunk.text@de), anything else for
// untagged English text. Call it after the commit, never for a failed ingest.
func (t *Tenant) indexText(memoryID, lang string, chunks []textChunk) {
	t.text.apply(t.Name, textOp{memoryID: memoryID, lang: storedTextLang(lang), chunks: chunks})
}

// unindexText forgets deleted memories. Call it after the delete is committed.
func (t *Tenant) unindexText(memoryIDs ...string) {
	if len(memoryIDs) > 0 {
		t.text.apply(t.Name, textOp{remove: memoryIDs})
	}
}

// storedTextLang is the language tag a memory's chunk text is stored under: "de" for German,
// "" (untagged, English analysis) for everything else — the rule ingest writes by.
func storedTextLang(lang string) string {
	if lang == "de" {
		return "de"
	}
	return ""
}

func textDocID(memoryID string, position int) string {
	return memoryID + "#" + strconv.Itoa(position)
}

func (x *textIndex) apply(tenant string, op textOp) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch x.state {
	case textUnloaded:
		// Nothing to keep current yet: the first load scans what is committed, this included.
	case textLoading:
		x.pending = append(x.pending, op)
	case textLoaded:
		x.applyLocked(tenant, op)
	}
}

func (x *textIndex) applyLocked(tenant string, op textOp) {
	if x.memories == nil {
		x.memories = map[string][]string{}
	}
	if x.syncing != nil {
		for _, id := range op.remove {
			x.syncRemoved[id] = true
		}
		if op.memoryID != "" {
			x.syncAdded[op.memoryID] = true
		}
	}
	for _, id := range op.remove {
		for _, doc := range x.memories[id] {
			x.ix.Remove(tenant, doc)
		}
		delete(x.memories, id)
	}
	if op.memoryID == "" {
		return
	}
	for _, doc := range x.memories[op.memoryID] {
		x.ix.Remove(tenant, doc)
	}
	docs := make([]string, 0, len(op.chunks))
	for _, c := range op.chunks {
		doc := textDocID(op.memoryID, c.Position)
		x.ix.Add(tenant, doc, op.lang, bm25.Analyze(op.lang, c.Text))
		docs = append(docs, doc)
	}
	x.memories[op.memoryID] = docs
}

// textStats returns the tenant's statistics for lang and the given query terms, loading them
// first if this process has not yet, and starting a background sync with the store when the
// last one is due (textsync.go).
func (t *Tenant) textStats(ctx context.Context, lang string, terms []string) (bm25.Stats, error) {
	if err := t.text.ensure(ctx, t); err != nil {
		return bm25.Stats{}, err
	}
	t.text.maybeSync(ctx, t)
	return t.text.ix.Stats(t.Name, lang, terms...), nil
}

// RebuildTextStats rescans the tenant's chunks and replaces its BM25 statistics. Recall does
// this by itself on first use, and picks up other replicas' writes by its periodic sync; a
// rebuild is the exact, expensive way to the same (a sync running meanwhile is dropped).
func (t *Tenant) RebuildTextStats(ctx context.Context) error {
	t.text.mu.Lock()
	if t.text.state == textLoading {
		ready := t.text.ready
		t.text.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.text.mu.Lock()
	}
	t.text.state = textUnloaded
	t.text.mu.Unlock()
	return t.text.ensure(ctx, t)
}

// ensure loads the statistics once; concurrent callers wait for the one load. A failed load
// is not cached: the next recall tries again.
func (x *textIndex) ensure(ctx context.Context, t *Tenant) error {
	x.mu.Lock()
	switch x.state {
	case textLoaded:
		x.mu.Unlock()
		return nil
	case textLoading:
		ready := x.ready
		x.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		return x.ensure(ctx, t)
	}
	x.state, x.ready, x.pending = textLoading, make(chan struct{}), nil
	ready := x.ready
	x.mu.Unlock()

	// The load outlives a caller that gives up: other recalls wait for it.
	started := time.Now()
	docs, memories, err := scanTexts(context.WithoutCancel(ctx), t)

	x.mu.Lock()
	if err != nil {
		x.state = textUnloaded
		x.pending = nil
	} else {
		x.ix.Rebuild(t.Name, func(yield func(bm25.Source) bool) {
			for _, d := range docs {
				if !yield(d) {
					return
				}
			}
		})
		x.memories = memories
		x.state = textLoaded
		// Writes committed before the scan began are in it; the next sync looks from there.
		x.gen++
		x.syncedFrom, x.syncTried, x.countOffset = started, started, 0
		for _, op := range x.pending {
			x.applyLocked(t.Name, op)
		}
		x.pending = nil
	}
	close(ready)
	x.mu.Unlock()
	if err != nil {
		return fmt.Errorf("load full-text statistics of tenant %q: %w", t.Name, err)
	}
	t.c.log.Info("bm25 statistics loaded", "tenant", t.Name, "chunks", len(docs), "memories", len(memories))
	return nil
}

// scanPage is how many memories one scan query reads.
const scanPage = 500

// scanTextQuery reads one page of indexed memories with their chunk texts, in uid order.
const scanTextQuery = `{
  m(func: eq(Memory.status, "indexed"), first: %d%s) {
    uid
    Memory.id
    Memory.chunks { p: Chunk.position  de: Chunk.text@de  en: Chunk.text }
  }
}`

// scanTexts reads every chunk of the tenant's indexed memories in pages.
func scanTexts(ctx context.Context, t *Tenant) ([]bm25.Source, map[string][]string, error) {
	var docs []bm25.Source
	memories := map[string][]string{}
	after := ""
	for {
		page := ""
		if after != "" {
			page = ", after: " + after
		}
		resp, err := t.dg.NewReadOnlyTxn().Query(ctx, fmt.Sprintf(scanTextQuery, scanPage, page))
		if err != nil {
			return nil, nil, fmt.Errorf("scan chunk texts: %w", err)
		}
		var out struct {
			M []scannedMemory `json:"m"`
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return nil, nil, fmt.Errorf("scan chunk texts: %w", err)
		}
		for _, m := range out.M {
			srcs := m.sources()
			ids := make([]string, len(srcs))
			for i, src := range srcs {
				ids[i] = src.ID
			}
			docs = append(docs, srcs...)
			memories[m.ID] = ids
		}
		if len(out.M) < scanPage {
			return docs, memories, nil
		}
		after = out.M[len(out.M)-1].UID
	}
}

// scannedMemory is a memory with its chunk texts, as scanTextQuery and syncFetchQuery read it.
type scannedMemory struct {
	UID    string `json:"uid"`
	ID     string `json:"Memory.id"`
	Chunks []struct {
		P  int    `json:"p"`
		DE string `json:"de"`
		EN string `json:"en"`
	} `json:"Memory.chunks"`
}

// sources are the memory's chunks as BM25 documents: German text from Chunk.text@de, English
// from the untagged Chunk.text.
func (m scannedMemory) sources() []bm25.Source {
	out := make([]bm25.Source, 0, len(m.Chunks))
	for _, c := range m.Chunks {
		lang, text := "", c.EN
		if c.DE != "" {
			lang, text = "de", c.DE
		}
		out = append(out, bm25.Source{ID: textDocID(m.ID, c.P), Lang: lang, Text: text})
	}
	return out
}

// maxCachedTokens bounds a tenant's token cache (about 25 bytes a token: ~50 MB).
const maxCachedTokens = 2_000_000

// tokenCache keeps the analysed tokens of chunks recall has scored. A chunk's text never
// changes (a new version or a re-upload writes new chunks), so the entries never go stale; the
// analysis (bleve tokenizer and stemmer, ~50-100 µs a chunk) is most of recall's own CPU time,
// and popular chunks are scored by many queries. Oldest entries are evicted first.
type tokenCache struct {
	mu     sync.Mutex
	tokens map[string][]string
	order  []string // keys in insertion order; order[head:] are live
	head   int
	total  int
}

// analyze returns bm25.Analyze(lang, text) for the chunk with this uid, from the cache when it
// can.
func (c *tokenCache) analyze(uid, lang, text string) []string {
	c.mu.Lock()
	toks, ok := c.tokens[uid]
	c.mu.Unlock()
	if ok {
		return toks
	}
	toks = bm25.Analyze(lang, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil {
		c.tokens = map[string][]string{}
	}
	if _, ok := c.tokens[uid]; ok || len(toks) > maxCachedTokens/100 {
		return toks // raced with another query, or too long to be worth a slot
	}
	c.tokens[uid] = toks
	c.order = append(c.order, uid)
	c.total += len(toks)
	for c.total > maxCachedTokens && c.head < len(c.order) {
		old := c.order[c.head]
		c.order[c.head] = ""
		c.head++
		c.total -= len(c.tokens[old])
		delete(c.tokens, old)
	}
	if c.head > len(c.order)/2 && c.head > 1024 {
		c.order = append([]string(nil), c.order[c.head:]...)
		c.head = 0
	}
	return toks
}
