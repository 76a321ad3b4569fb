package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/textdoc"
	"github.com/knowmind/knowmind/wordvec"
)

// BM25 corpus statistics of a tenant, kept in this process.
//
// Dgraph's full-text index finds the chunks that share a term with a query but cannot rank
// them; recall ranks them with BM25 (package bm25), which needs the corpus' document count,
// total length and each term's document frequency. Those live here, per tenant, one corpus per
// stored language tag ("de" for Chunk.text@de, "" for untagged English Chunk.text).
//
// The same structure holds the tenant's chunk vectors for recall's exact vector search
// (vecindex.go, textIndex.vec): they are read by the same scan, carried by the same hook calls
// and syncs, so everything said here about the statistics' lifecycle holds for them too.
//
// What counts: every chunk of every memory with status indexed — superseded versions included,
// since recall_at_time searches them; failed ingests and deleted memories not. A chunk is the
// BM25 document, keyed "<Memory.id>#<Chunk.position>", so that the ingest code can report a
// memory without knowing Dgraph's chunk uids.
//
// Lifecycle: the statistics of a tenant are loaded from a scan of the tenant's chunks
// (textIndex.ensure, loadTexts) — at startup by WarmTextStats, one tenant after another, or else
// by the first recall that needs them — and then kept current by the ingest code, which calls
// indexText after committing a memory with status indexed and unindexText after deleting
// memories. A load reads, analyses and counts without holding the index's lock and swaps the
// result in at the end; a hook call that arrives meanwhile is queued and replayed after the swap
// (Add and Remove are idempotent, so replaying one the scan already saw is harmless).
//
// Several replicas: the hooks only see writes made by this process. Writes of other service
// replicas on the same Dgraph are picked up by a reconcile (textsync.go), which adds the
// indexed memories created since the previous one and, when the store's count of indexed
// memories disagrees with the number held, diffs all ids to drop deleted ones. A recall starts
// one when the tenant's change watermark moved (watermark.go: one indexed query, at most every
// watermarkInterval, 1 s) and waits for it briefly, and in any case when the last one is older
// than textSyncInterval (60 s). So another replica's writes reach a recall that begins about a
// second after they were acknowledged; a tenant nobody recalls is not synced, as nobody reads
// its statistics. A sync never loses or undoes this process's own concurrent
// writes. Until the next sync the ranking is only approximately the one a single replica would
// compute — BM25 degrades gracefully, bm25.Score clamps unknown document frequencies.
//
// Cost (BenchmarkTextStatsSync, BenchmarkTextStatsLoad; the numbers are in docs/dgraph-notes.md
// "BM25 statistics"): a sync that finds nothing new reads three counts and an empty window, the
// count(uid) over the status index being most of it. A full id diff, only when the counts
// disagree (a deletion by another replica, in practice a document re-upload), lists every
// Memory.id, in the background. Memories created in the last ~6 minutes (textSyncSlack plus an
// interval) are in every sync's window, so right after a bulk import (by this replica or
// another) a sync lists every memory, costing about a diff, until the import leaves the window.
//
// A full load overlaps the analysis and counting with reading the pages from Dgraph, so it is
// bound by Dgraph's reading (most of it Dgraph's own processing and encoding), and holds the
// index's lock only for the swap, so ingest hooks do not wait for the analysis and counting.
type textIndex struct {
	mu       sync.Mutex
	ix       bm25.Index
	state    textState
	ready    chan struct{}       // closed when a load finishes (state loaded or failed)
	pending  []textOp            // hook calls that arrived during a load
	memories map[string][]string // Memory.id → its chunks' document ids, every indexed memory
	tokens   textdoc.TokenCache  // analysed chunk texts, for scoring candidates
	// seq holds the memories' places in sequences (graph/sequence.go), kept by the same scan,
	// hooks and syncs as ix, from the places their chunks carry (textdoc.Doc.Place).
	seq textdoc.Sequences
	vec vectorSet // chunk vectors for exact vector search (vecindex.go), when on
	// words are the tenant's co-occurrence word vectors (package wordvec), counted from the
	// same chunks' terms by the same scan and hooks, for recall's semantic signal.
	words wordvec.Model
	// titles is the title field: each chunk's memory title (analysed in the chunk's language) as a
	// document of its own, same id and reference as the chunk's, so that recall scores a chunk's
	// title apart from its text (rank.Signals.Title). Chunks of untitled memories have none.
	// Counted by the same scan, hooks and syncs as ix.
	titles bm25.Index
	// sem is the semantic model derived from ix and the tenant's links (graph/semantic.go), a
	// cache; semPlain the same without the links, only for search.Plan.SemanticLinks off.
	sem, semPlain semCache

	// Reconcile with the store (textsync.go).
	gen         uint64          // counts loads; a sync started under an older one is dropped
	syncedFrom  time.Time       // start of the last successful load or sync
	syncTried   time.Time       // start of the last sync attempt (or load)
	syncing     chan struct{}   // non-nil while a sync runs; closed when it ends
	syncAdded   map[string]bool // memories the hooks added while a sync runs
	syncRemoved map[string]bool // memories the hooks removed while a sync runs
	countOffset int             // indexed nodes the store counts but memories cannot hold
	// shas are the Memory.content_sha a sync read a held memory's chunks at: a memory updated
	// since with another sha is read again (textsync.go). Absent: not read by a sync.
	shas map[string]string
	// watch is the change watermark that tells a ranked read when to sync (watermark.go).
	watch freshness

	// snap is the bookkeeping of the tenant's snapshot on disk (snapshot.go).
	snap snapshotState
	// used is when the caches were last asked for (UnixNano): the memory budget drops the least
	// recently used tenants' caches first (budget.go).
	used atomic.Int64
	// readers counts the recalls using the caches now: the memory budget never drops a tenant
	// under a running recall (it would see empty statistics half-way).
	readers atomic.Int32
}

type textState int

const (
	textUnloaded textState = iota
	textLoading
	textLoaded
)

// textOp is a hook call: add (memoryID and its analysed chunks set) or remove (memory ids).
type textOp struct {
	memoryID string
	sha      string // Memory.content_sha of the added memory, when known
	docs     []analysedDoc
	remove   []string
}

// textChunk is one chunk's searchable text as stored in Chunk.text(@de), with its uid and
// vector for the exact vector search (uid 0 or vec nil: not known, not held).
type textChunk struct {
	Position int
	Text     string
	UID      uint64
	Vec      []float32
}

// indexText records the chunks of a memory the caller has just committed with status indexed.
// lang is the memory's language as stored: "de" for German (Chunk.text@de), anything else for
// untagged English text; sha its Memory.content_sha. Call it after the commit, never for a
// failed ingest. title is the memory's title (the title field, textIndex.titles).
func (t *Tenant) indexText(memoryID, lang, sha, title string, place textdoc.Place, chunks []textChunk) {
	lang = textdoc.StoredLang(lang)
	// Analysed before the index's lock is taken: recalls' reads and a load's swap wait for it.
	docs := make([]analysedDoc, len(chunks))
	titleTokens := t.analyzeText(lang, title)
	for i, c := range chunks {
		docs[i] = analysedDoc{ID: textdoc.DocID(memoryID, c.Position), Lang: lang, UID: c.UID, Title: titleTokens, Place: place}
		docs[i].Tokens, docs[i].Length = t.analyzeDoc(lang, c.Text)
		if c.UID != 0 && c.Vec != nil && t.exactVectors() {
			docs[i].Vec = c.Vec
		}
	}
	t.text.apply(t.Name, textOp{memoryID: memoryID, sha: sha, docs: docs})
	t.snapshotDue()
}

// unindexText forgets deleted memories. Call it after the delete is committed.
func (t *Tenant) unindexText(memoryIDs ...string) {
	if len(memoryIDs) > 0 {
		t.text.apply(t.Name, textOp{remove: memoryIDs})
		t.snapshotDue()
	}
}

// analyzeText is the analysis of the tenant's text index: bm25.AnalyzeForSearch with the
// client's Config.Analysis, without a vocabulary (a document's terms must not depend on the
// documents indexed before it).
func (t *Tenant) analyzeText(lang, text string) []string {
	return t.c.cfg.Analysis.Analyze(lang, text, nil)
}

// analyzeDoc is analyzeText with the document's length for BM25 (bm25.Analysis.AnalyzeDoc).
func (t *Tenant) analyzeDoc(lang, text string) ([]string, int) {
	return t.c.cfg.Analysis.AnalyzeDoc(lang, text, nil)
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
		x.removeMemoryLocked(tenant, id)
	}
	if op.memoryID != "" {
		x.addMemoryLocked(tenant, op.memoryID, op.docs)
		x.setSHALocked(op.memoryID, op.sha)
	}
}

// setSHALocked records the content sha a held memory's chunks were read or written at ("":
// unknown, so a sync that sees the memory updated reads it once).
func (x *textIndex) setSHALocked(memoryID, sha string) {
	if x.shas == nil {
		x.shas = map[string]string{}
	}
	if sha == "" {
		delete(x.shas, memoryID)
		return
	}
	x.shas[memoryID] = sha
}

// addMemoryLocked counts a memory's chunks into the statistics and holds their vectors,
// replacing what was held for that memory id.
func (x *textIndex) addMemoryLocked(tenant, memoryID string, docs []analysedDoc) {
	if x.memories == nil {
		x.memories = map[string][]string{}
	}
	for _, doc := range x.memories[memoryID] {
		x.forgetDocLocked(tenant, doc)
	}
	ids := make([]string, len(docs))
	var vecs []chunkVector
	for i, d := range docs {
		x.forgetDocLocked(tenant, d.ID) // held under another memory id: counted once
		x.ix.AddRefLen(tenant, d.ID, d.Lang, d.UID, d.Tokens, d.Length)
		if len(d.Title) > 0 {
			x.titles.AddRef(tenant, d.ID, d.Lang, d.UID, d.Title)
		}
		x.words.Add(d.Tokens)
		ids[i] = d.ID
		if d.Vec != nil {
			vecs = append(vecs, chunkVector{uid: d.UID, vec: d.Vec})
		}
	}
	x.memories[memoryID] = ids
	x.vec.add(memoryID, vecs)
	x.seq.Set(memoryID, placeOf(docs), chunkRefs(docs))
}

// placeOf is the place in a sequence a memory's chunks carry (zero: none).
func placeOf(docs []analysedDoc) textdoc.Place {
	if len(docs) == 0 {
		return textdoc.Place{}
	}
	return docs[0].Place
}

// chunkRefs are the uids of a memory's chunks.
func chunkRefs(docs []analysedDoc) []uint64 {
	refs := make([]uint64, 0, len(docs))
	for _, d := range docs {
		if d.UID != 0 {
			refs = append(refs, d.UID)
		}
	}
	return refs
}

// removeMemoryLocked forgets a memory's chunks and vectors.
func (x *textIndex) removeMemoryLocked(tenant, memoryID string) {
	for _, doc := range x.memories[memoryID] {
		x.forgetDocLocked(tenant, doc)
	}
	delete(x.memories, memoryID)
	delete(x.shas, memoryID)
	x.vec.remove(memoryID)
	x.seq.Remove(memoryID)
}

// forgetDocLocked removes one chunk document from the statistics and the word vectors (the
// terms the statistics hold for it are what the word vectors counted).
func (x *textIndex) forgetDocLocked(tenant, doc string) {
	if terms := x.ix.DocTerms(tenant, doc); terms != nil {
		x.words.Remove(terms)
	}
	x.ix.Remove(tenant, doc)
	x.titles.Remove(tenant, doc)
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
	t.text.snap.rescan = true
	t.text.mu.Unlock()
	return t.text.ensure(ctx, t)
}

// ensure loads the statistics once; concurrent callers wait for the one load. A failed load
// is not cached: the next recall tries again. The load outlives a caller that gives up: other
// recalls wait for it.
func (x *textIndex) ensure(ctx context.Context, t *Tenant) error {
	return x.ensureWith(ctx, t, context.WithoutCancel(ctx))
}

// ensureWith is ensure with the context a load it starts runs under: WarmTextStats's load stops
// with the service, and a recall that was waiting for it then starts its own.
func (x *textIndex) ensureWith(ctx context.Context, t *Tenant, loadCtx context.Context) error {
	x.touch()
	for {
		x.mu.Lock()
		switch x.state {
		case textLoaded:
			opening := x.snap.opening
			x.mu.Unlock()
			if opening == nil {
				return nil
			}
			select { // a snapshot being caught up: loaded once that ends
			case <-opening:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		case textLoading:
			ready := x.ready
			x.mu.Unlock()
			select {
			case <-ready:
				continue // loaded, or failed: then load again
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		x.state, x.ready, x.pending = textLoading, make(chan struct{}), nil
		x.mu.Unlock()
		return x.load(loadCtx, t)
	}
}

// load reads and analyses the tenant's chunks without the lock — the hooks meanwhile queue
// their calls in pending — and swaps the result in under it, then replays the queue.
func (x *textIndex) load(ctx context.Context, t *Tenant) error {
	if x.openSnapshot(ctx, t) {
		x.mu.Lock()
		close(x.ready)
		x.mu.Unlock()
		t.c.enforceIndexBudget(t)
		return nil
	}
	started := time.Now()
	built, titles, words, memories, shas, vecs, seqs, read, err := loadTexts(ctx, t)

	x.mu.Lock()
	chunks := 0
	if err != nil {
		x.state = textUnloaded
		x.pending = nil
	} else {
		chunks = built.Len()
		x.ix.Replace(t.Name, built)
		x.titles.Replace(t.Name, titles)
		x.words.Replace(words)
		x.memories = memories
		x.shas = shas
		x.vec.replace(vecs)
		x.seq.Replace(seqs)
		x.state = textLoaded
		// Writes committed before the scan began are in it; the next sync looks from there.
		x.gen++
		x.syncedFrom, x.syncTried, x.countOffset = started, started, 0
		for _, op := range x.pending {
			x.applyLocked(t.Name, op)
		}
		x.pending = nil
	}
	close(x.ready)
	x.mu.Unlock()
	if err != nil {
		return fmt.Errorf("load full-text statistics of tenant %q: %w", t.Name, err)
	}
	t.c.log.Info("bm25 statistics loaded", "tenant", t.Name, "memories", len(memories), "chunks", chunks,
		"vectors", vecs.len(),
		"took", time.Since(started).Round(time.Millisecond), "reading", read.Round(time.Millisecond))
	t.snapshotSoon()
	t.c.enforceIndexBudget(t)
	return nil
}

// WarmTextStats loads the BM25 statistics of every tenant, one tenant at a time, so that the
// first recall after a start does not wait for its tenant's load (seconds for a large tenant;
// see textIndex). Call it in the background once the service is up: a recall arriving
// meanwhile waits for its tenant's load as it would anyway, and writes are queued and replayed
// as during any load. It never fails the service: an error is logged and leaves that tenant to
// the lazy load of its first recall. Cancelling ctx stops it, including a load in progress,
// which a recall waiting for it then does itself.
func (c *Client) WarmTextStats(ctx context.Context) {
	started := time.Now()
	names, err := c.Tenants(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("bm25 statistics warm-up: cannot list tenants", "err", err)
		}
		return
	}
	loaded := 0
	for _, name := range names {
		if c.overIndexBudget() {
			// The rest load on their first recall: warming them would only drop others.
			c.log.Info("bm25 statistics warm-up stopped at the index memory budget", "loaded", loaded, "tenants", len(names))
			return
		}
		t, err := c.Tenant(ctx, name, false)
		if err == nil {
			err = t.text.ensureWith(ctx, t, ctx)
		}
		if ctx.Err() != nil {
			c.log.Info("bm25 statistics warm-up stopped", "loaded", loaded, "tenants", len(names))
			return
		}
		if err != nil {
			c.log.Warn("bm25 statistics warm-up: tenant left to its first recall", "tenant", name, "err", err)
			continue
		}
		// The semantic model (graph/semantic.go) too: its first build (17 s at 100k chunks
		// with 400k links) would otherwise be the first recall's.
		t.semModel(true)
		loaded++
	}
	c.log.Info("bm25 statistics warm-up done", "loaded", loaded, "tenants", len(names),
		"took", time.Since(started).Round(time.Millisecond))
}

// scanPage is how many memories one scan query reads: 1000 one-chunk memories are ~0.5 MB of
// JSON; pages of 2000 were no faster at 100k, and a page carries all chunks of its memories, so
// long documents make it bigger. A variable so that tests can page a small corpus.
var scanPage = 1000

// scanTextQuery reads one page of indexed memories with their content shas and chunk texts (and,
// with exact vectors on, the vectors or whether one is stored: %[3]s), in uid order.
const scanTextQuery = `{
  m(func: eq(Memory.status, "indexed"), first: %[1]d%[2]s) {
    uid
    Memory.id
    Memory.content_sha
    Memory.title
    Memory.sequence
    Memory.position
    Memory.chunks { uid  p: Chunk.position  de: Chunk.text@de  en: Chunk.text%[3]s }
  }
}`

// chunkVectorFields are the chunk fields a scan adds for the exact vector search; with
// recomputed vectors only whether a vector is stored (count of a scalar: 0 or 1), as a chunk
// stored without one (a note whose embedding failed) must stay without one.
const (
	chunkVectorFields      = "  v: Chunk.embedding"
	recomputedVectorFields = "  e: count(Chunk.embedding)"
)

// vectorFields is what a scan reads of a chunk for the exact vector search: nothing when the
// tenant holds no vectors, only whether one is stored when it recomputes them.
func (t *Tenant) vectorFields() string {
	switch {
	case !t.exactVectors():
		return ""
	case t.recomputeVectors() != nil:
		return recomputedVectorFields
	}
	return chunkVectorFields
}

// exactVectors tells whether recall searches this process's copy of the vectors (vecindex.go).
func (t *Tenant) exactVectors() bool { return !t.c.cfg.NoExactVectors }

// recomputeVectors is the embedder a scan computes the chunk vectors with instead of reading
// them, or nil to read them (RecomputableEmbedder). Reading is most of a load's time: each
// vector is dim numbers of JSON that Dgraph encodes and this process parses. The tenant's vectors
// are the configured embedder's (checkEmbedder refuses to open it otherwise), and ingest, bulk
// import and reembed all embed exactly the text they store as the chunk's text, so the vector
// of the text read is the vector stored.
func (t *Tenant) recomputeVectors() Embedder {
	if !t.exactVectors() {
		return nil
	}
	if r, ok := t.c.cfg.Embedder.(RecomputableEmbedder); ok && r.Recomputable() {
		return t.c.cfg.Embedder
	}
	return nil
}

// scanTexts reads every chunk of the tenant's indexed memories page by page, all in one
// read-only transaction (one snapshot), and hands each page to page until it returns false.
func scanTexts(ctx context.Context, t *Tenant, page func([]scannedMemory) bool) error {
	txn := t.dg.NewReadOnlyTxn()
	defer txn.Discard(ctx)
	after := ""
	for {
		resp, err := txn.Query(ctx, fmt.Sprintf(scanTextQuery, scanPage, afterClause(after), t.vectorFields()))
		if err != nil {
			return fmt.Errorf("scan chunk texts: %w", err)
		}
		var out struct {
			M []scannedMemory `json:"m"`
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return fmt.Errorf("scan chunk texts: %w", err)
		}
		n := len(out.M)
		if n == 0 {
			return nil
		}
		last := out.M[n-1].UID
		if textLoadTestHook != nil {
			textLoadTestHook(t.Name)
		}
		// A memory committed after the snapshot can show up in the status index's page with
		// none of its values (seen with Dgraph v25): it has no id to key it by, and the hooks
		// or the next sync add it.
		out.M = slices.DeleteFunc(out.M, func(m scannedMemory) bool { return m.ID == "" })
		if len(out.M) > 0 && !page(out.M) {
			return nil
		}
		if n < scanPage {
			return nil
		}
		after = last
	}
}

// textLoadTestHook, when set by a test, is called with the tenant's name after each page a scan
// has read, with the index unlocked.
var textLoadTestHook func(tenant string)

// analyseBatch is how many memories a load's worker analyses at a time: small enough that a
// page feeds every core, large enough that the hand-over costs nothing.
const analyseBatch = 100

// loadBatch is a slice of a scanned page on its way through a load: read, then analysed (docs,
// one entry per memory), then counted.
type loadBatch struct {
	seq      int
	memories []scannedMemory
	docs     [][]analysedDoc
}

// loadTexts reads every chunk of the tenant's indexed memories and counts them into a
// bm25.Builder, and their vectors into a vectorSet when the tenant holds them, with nothing
// locked. Reading and analysis overlap: one goroutine pages through
// the store (scanTexts) while GOMAXPROCS workers analyse what it has read (bm25.Analyze, the
// bleve tokenizer and stemmer, is most of the CPU time), and the caller's goroutine counts the
// analysed batches in the order they were read, so that a memory id the store holds twice ends
// as it would in a sequential load. It returns the statistics, the word vectors, the memories'
// document ids and content shas (so that a sync re-reads only what was edited since), the
// vectors and the time spent in scan queries.
func loadTexts(ctx context.Context, t *Tenant) (*bm25.Builder, *bm25.Builder, *wordvec.Model, map[string][]string, map[string]string, *vectorSet, *textdoc.Sequences, time.Duration, error) {
	workers := runtime.GOMAXPROCS(0)
	read := make(chan loadBatch, 2*workers) // read ahead by a page or so while the workers are busy
	analysed := make(chan loadBatch, workers)

	var readErr error
	var reading time.Duration
	recompute := t.recomputeVectors()
	go func() {
		defer close(read)
		seq := 0
		last := time.Now()
		err := scanTexts(ctx, t, func(page []scannedMemory) bool {
			reading += time.Since(last)
			defer func() { last = time.Now() }()
			for start := 0; start < len(page); start += analyseBatch {
				b := loadBatch{seq: seq, memories: page[start:min(start+analyseBatch, len(page))]}
				seq++
				select {
				case read <- b:
				case <-ctx.Done():
					readErr = fmt.Errorf("scan chunk texts: %w", ctx.Err())
					return false
				}
			}
			return true
		})
		if readErr == nil {
			readErr = err
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range read {
				b.docs = make([][]analysedDoc, len(b.memories))
				for i, m := range b.memories {
					b.docs[i] = m.Analyse(ctx, t.c.log, recompute, t.analyzeDoc)
				}
				analysed <- b
			}
		})
	}
	go func() {
		wg.Wait()
		close(analysed)
	}()

	// Batches arrive in any order; early ones wait in ahead until their turn.
	var built, titles bm25.Builder
	var words wordvec.Model
	var vecs vectorSet
	var seqs textdoc.Sequences
	memories := map[string][]string{}
	shas := map[string]string{}
	ahead := map[int]loadBatch{}
	next := 0
	for b := range analysed {
		ahead[b.seq] = b
		for {
			b, ok := ahead[next]
			if !ok {
				break
			}
			delete(ahead, next)
			next++
			for i, m := range b.memories {
				ids := make([]string, len(b.docs[i]))
				var mv []chunkVector
				for j, d := range b.docs[i] {
					if old := built.DocTerms(d.ID); old != nil {
						words.Remove(old) // the same document again: counted once
					}
					built.AddRefLen(d.ID, d.Lang, d.UID, d.Tokens, d.Length)
					if len(d.Title) > 0 {
						titles.AddRef(d.ID, d.Lang, d.UID, d.Title)
					} else {
						titles.Remove(d.ID)
					}
					words.Add(d.Tokens)
					ids[j] = d.ID
					if d.Vec != nil {
						mv = append(mv, chunkVector{uid: d.UID, vec: d.Vec})
					}
				}
				memories[m.ID] = ids
				if m.SHA != "" {
					shas[m.ID] = m.SHA
				} else {
					delete(shas, m.ID)
				}
				vecs.addLocked(m.ID, mv) // not shared yet: no lock needed
				seqs.Set(m.ID, placeOf(b.docs[i]), chunkRefs(b.docs[i]))
			}
		}
	}
	// The reader has finished: read is closed before the workers, and they before analysed.
	if readErr != nil {
		return nil, nil, nil, nil, nil, nil, nil, reading, readErr
	}
	return &built, &titles, &words, memories, shas, &vecs, &seqs, reading, nil
}

// scannedMemory is a memory with its chunk texts as scanTextQuery and syncFetchQuery read it
// (textdoc.Memory).
type scannedMemory = textdoc.Memory
