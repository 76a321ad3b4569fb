package bm25

import (
	"iter"
	"slices"
	"sync"
	"sync/atomic"
)

// Index keeps BM25's corpus statistics correct per tenant and language while documents come and
// go, and an inverted index over them (Search, ScoreRefs). It stores no text: per document its
// language, its length, the ids of its distinct terms (what Remove needs to undo Add) and an
// optional reference the caller gives (recall: the chunk's uid in Dgraph); per term the
// postings, one (document, term frequency) pair per document holding it.
//
// Memory: per document about 150 bytes (map slot, id string, slot entry, reference table)
// plus 16 bytes per distinct term in it (its id and frequency, and its posting); per distinct
// term of a corpus one vocabulary entry (the term's bytes + ~100 B). TestIndexMemoryPerDoc
// measures about 800 B/doc, 80 MB in all, for 100k docs of 40 tokens (30 distinct) over a
// 50k-term vocabulary — about a tenth of the same chunks' vectors (384 float32s, 1.5 kB each).
//
// Corpora are keyed by the language tag as stored ("de", "en", "" for untagged): Dgraph keeps
// pred@en and untagged pred apart, and anyoftext searches one of them, so their statistics are
// kept apart too even though both are analysed as English.
//
// The zero value is ready to use; all methods are safe for concurrent use.
type Index struct {
	mu      sync.RWMutex
	tenants map[string]*tenantIndex
}

type tenantIndex struct {
	// docs maps a document's id to its slot. Only writes (Add, Remove) and DocTerms look
	// documents up by id, so an index loaded from a dump in id order (Builder.Load) builds it
	// on the first of those (slotsByID), not while the tenant is opened; nil until then.
	docs     map[string]uint32
	docsOnce sync.Once
	corpora  map[string]*corpus
	slots    []slotEntry // slot → document, for Search's answers; id "" = free
	free     []uint32    // free slots, reused before slots grows
	byRef    refTable    // reference → slot, for ScoreRefs (references other than 0)
	// gen tells this tenant index apart from any other (a Replace swaps in another one);
	// changes counts its Adds and Removes. Together: Version.
	gen, changes uint64
}

// gens numbers tenant indexes, for Version.
var gens atomic.Uint64

// termFreq is a term of a document and how often the document holds it.
type termFreq struct {
	id, tf uint32
}

// slotEntry is a document: what a posting's slot stands for.
type slotEntry struct {
	id     string
	ref    uint64
	length uint32     // tokens, repeats included
	corpus *corpus    // the document's language's
	terms  []termFreq // distinct terms (ids in the corpus vocabulary) with their frequency
}

// posting is one document holding a term, with the term's frequency in it.
type posting struct {
	slot, tf uint32
}

// corpus interns terms as uint32 ids so each document stores 4 bytes per distinct term instead
// of a string header per term.
type corpus struct {
	lang     string // its key in tenantIndex.corpora
	docs     int64
	totalLen int64
	ids      map[string]uint32
	terms    []string    // id → term, "" when the id is free
	df       []int64     // id → document frequency
	post     [][]posting // id → the documents holding the term, in no particular order
	free     []uint32    // ids whose df fell to 0, reused before the vocabulary grows
}

// Source is one stored text for Rebuild: the caller's id, its language tag and its raw text.
type Source struct {
	ID, Lang, Text string
}

// Add records document id of tenant with its analysed tokens (Analyze(lang, text)). Adding an id
// that is already there replaces it, so an update is one Add.
func (ix *Index) Add(tenant, id, lang string, tokens []string) {
	ix.AddRef(tenant, id, lang, 0, tokens)
}

// AddRef is Add with a reference (non-zero) that Search reports and ScoreRefs looks documents up
// by.
func (ix *Index) AddRef(tenant, id, lang string, ref uint64, tokens []string) {
	ix.AddRefLen(tenant, id, lang, ref, tokens, len(tokens))
}

// AddRefLen is AddRef with the document's length for BM25 given (Analysis.AnalyzeDoc: the
// terms analysis adds beside the text's words do not count); at most len(tokens).
func (ix *Index) AddRefLen(tenant, id, lang string, ref uint64, tokens []string, length int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.tenants == nil {
		ix.tenants = map[string]*tenantIndex{}
	}
	t := ix.tenants[tenant]
	if t == nil {
		t = newTenantIndex()
		ix.tenants[tenant] = t
	}
	t.add(id, lang, ref, tokens, length)
}

// Remove forgets document id of tenant; removing an unknown id does nothing.
func (ix *Index) Remove(tenant, id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.tenants[tenant]
	if t == nil {
		return
	}
	t.remove(id)
	if t.len() == 0 {
		delete(ix.tenants, tenant)
	}
}

// Stats returns the statistics of tenant's corpus in language lang. With terms, DF holds only
// those terms (the ones a query needs; absent means 0) — the cheap call for ranking. Without,
// DF is a full copy of the vocabulary. The result is a snapshot the caller owns.
func (ix *Index) Stats(tenant, lang string, terms ...string) Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st := Stats{DF: map[string]int64{}}
	t := ix.tenants[tenant]
	if t == nil {
		return st
	}
	c := t.corpora[lang]
	if c == nil {
		return st
	}
	st.Docs, st.TotalLen = c.docs, c.totalLen
	if len(terms) == 0 {
		for term, id := range c.ids {
			st.DF[term] = c.df[id]
		}
		return st
	}
	for _, term := range terms {
		if id, ok := c.ids[term]; ok {
			st.DF[term] = c.df[id]
		}
	}
	return st
}

// Has tells whether a document of tenant in language lang holds term.
func (ix *Index) Has(tenant, lang, term string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if t := ix.tenants[tenant]; t != nil {
		if c := t.corpora[lang]; c != nil {
			_, ok := c.ids[term]
			return ok
		}
	}
	return false
}

// DocTerms returns the distinct terms of document id of tenant (nil: not held), e.g. to undo
// what another structure counted for it.
func (ix *Index) DocTerms(tenant, id string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.tenants[tenant].docTerms(id)
}

// RefTerms returns the distinct terms of tenant's documents by their references (AddRef), one
// list per reference (nil: not held).
func (ix *Index) RefTerms(tenant string, refs []uint64) [][]string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([][]string, len(refs))
	t := ix.tenants[tenant]
	if t == nil {
		return out
	}
	// One backing array for all the documents' terms (a recall asks for a few hundred).
	var flat []string
	ends := make([]int, len(refs))
	for i, ref := range refs {
		if slot, ok := t.byRef.get(ref); ok {
			e := &t.slots[slot]
			for _, term := range e.terms {
				flat = append(flat, e.corpus.terms[term.id])
			}
		}
		ends[i] = len(flat)
	}
	start := 0
	for i, end := range ends {
		if end > start {
			out[i] = flat[start:end:end]
		}
		start = end
	}
	return out
}

func (t *tenantIndex) docTerms(id string) []string {
	if t == nil {
		return nil
	}
	slot, ok := t.slotsByID()[id]
	if !ok {
		return nil
	}
	return t.slots[slot].termStrings()
}

func (s *slotEntry) termStrings() []string {
	out := make([]string, len(s.terms))
	for i, term := range s.terms {
		out[i] = s.corpus.terms[term.id]
	}
	return out
}

// slotsByID returns the map of document ids to slots, building it if a Load left it to the first
// call. Readers call it under the Index's read lock: the Once makes the one build race-free.
func (t *tenantIndex) slotsByID() map[string]uint32 {
	t.docsOnce.Do(func() {
		if t.docs != nil {
			return
		}
		t.docs = make(map[string]uint32, t.len())
		for slot, s := range t.slots {
			if s.id != "" {
				t.docs[s.id] = uint32(slot)
			}
		}
	})
	return t.docs
}

// len is the number of documents held: every slot but the free ones.
func (t *tenantIndex) len() int {
	return len(t.slots) - len(t.free)
}

// Version identifies the state of tenant's documents: gen changes when the tenant's index is
// replaced (Replace, or emptied and started again), changes counts the Adds and Removes since
// (an update is a Remove and an Add). Equal versions mean the same documents; a derived cache
// (graph's semantic model) compares them to know whether, and by how much, it is stale.
func (ix *Index) Version(tenant string) (gen, changes uint64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if t := ix.tenants[tenant]; t != nil {
		return t.gen, t.changes
	}
	return 0, 0
}

// Each calls fn with every document of tenant that has a reference (AddRef), its distinct
// terms, under the index's read lock (fn must not call the index), and returns the Version it
// saw.
func (ix *Index) Each(tenant string, fn func(ref uint64, terms []string)) (gen, changes uint64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t := ix.tenants[tenant]
	if t == nil {
		return 0, 0
	}
	for i := range t.slots {
		s := &t.slots[i]
		if s.id == "" || s.ref == 0 {
			continue
		}
		fn(s.ref, s.termStrings())
	}
	return t.gen, t.changes
}

// Len returns the number of documents held for tenant, all languages together.
func (ix *Index) Len(tenant string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if t := ix.tenants[tenant]; t != nil {
		return t.len()
	}
	return 0
}

// Rebuild replaces everything held for tenant with the documents docs yields, analysing each
// text with AnalyzeForSearch (as the service's text index does), one after another. A caller
// with many documents can analyse them in parallel and count them into a Builder instead; Rebuild is that done sequentially. An Add or
// Remove for the same tenant that lands during a rebuild is lost, so rebuild before serving
// writes (at startup, from a full scan) or replay them after it.
func (ix *Index) Rebuild(tenant string, docs iter.Seq[Source]) {
	var b Builder
	for d := range docs {
		tokens, length := AnalyzeDocForSearch(d.Lang, d.Text)
		b.AddRefLen(d.ID, d.Lang, 0, tokens, length)
	}
	ix.Replace(tenant, &b)
}

// Builder counts a tenant's documents apart from any Index, for Replace: a full load of many
// documents is counted without holding the Index's lock (or the caller's), and swapped in at
// once. The zero value is ready to use; it is not safe for concurrent use (analyse in parallel,
// Add from one goroutine).
type Builder struct {
	t *tenantIndex
}

// Add records document id with its analysed tokens (Analyze(lang, text)), as Index.Add does:
// adding an id again replaces it.
func (b *Builder) Add(id, lang string, tokens []string) {
	b.AddRef(id, lang, 0, tokens)
}

// AddRef is Add with a reference, as Index.AddRef.
func (b *Builder) AddRef(id, lang string, ref uint64, tokens []string) {
	b.AddRefLen(id, lang, ref, tokens, len(tokens))
}

// AddRefLen is AddRef with the document's length given, as Index.AddRefLen.
func (b *Builder) AddRefLen(id, lang string, ref uint64, tokens []string, length int) {
	if b.t == nil {
		b.t = newTenantIndex()
	}
	b.t.add(id, lang, ref, tokens, length)
}

// Remove forgets document id, as Index.Remove does (an unknown id does nothing).
func (b *Builder) Remove(id string) {
	if b.t != nil {
		b.t.remove(id)
	}
}

// DocTerms is Index.DocTerms for the documents added so far.
func (b *Builder) DocTerms(id string) []string { return b.t.docTerms(id) }

// Len returns the number of documents added, all languages together.
func (b *Builder) Len() int {
	if b.t == nil {
		return 0
	}
	return b.t.len()
}

// Replace replaces everything held for tenant with b's documents, and empties b (the Index
// owns what b counted). Queries keep being answered from the old statistics until the swap.
func (ix *Index) Replace(tenant string, b *Builder) {
	t := b.t
	b.t = nil
	if t != nil {
		t.trim()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if t == nil || t.len() == 0 {
		delete(ix.tenants, tenant)
		return
	}
	if ix.tenants == nil {
		ix.tenants = map[string]*tenantIndex{}
	}
	ix.tenants[tenant] = t
}

func newTenantIndex() *tenantIndex {
	return &tenantIndex{docs: map[string]uint32{}, corpora: map[string]*corpus{},
		gen: gens.Add(1)}
}

func (t *tenantIndex) add(id, lang string, ref uint64, tokens []string, length int) {
	length = min(max(length, 0), len(tokens))
	t.remove(id)
	t.changes++
	c := t.corpora[lang]
	if c == nil {
		c = &corpus{lang: lang, ids: map[string]uint32{}}
		t.corpora[lang] = c
	}
	var slot uint32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		slot = uint32(len(t.slots))
		t.slots = append(t.slots, slotEntry{})
	}
	sorted := slices.Clone(tokens)
	slices.Sort(sorted)
	ids := make([]termFreq, 0, len(sorted))
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		tid := c.intern(sorted[i])
		ids = append(ids, termFreq{id: tid, tf: uint32(j - i)})
		c.df[tid]++
		c.post[tid] = append(c.post[tid], posting{slot: slot, tf: uint32(j - i)})
		i = j
	}
	c.docs++
	c.totalLen += int64(length)
	t.slotsByID()[id] = slot
	t.slots[slot] = slotEntry{id: id, ref: ref, length: uint32(length), corpus: c, terms: ids}
	if ref != 0 {
		t.byRef.put(ref, slot)
	}
}

// trim gives the posting lists of a finished load back the room their appends left (up to half
// of each list).
func (t *tenantIndex) trim() {
	for _, c := range t.corpora {
		for i, list := range c.post {
			if cap(list) > len(list)+len(list)/8 {
				c.post[i] = slices.Clone(list)
			}
		}
	}
}

func (t *tenantIndex) remove(id string) {
	slot, ok := t.slotsByID()[id]
	if !ok {
		return
	}
	e := t.slots[slot]
	t.changes++
	delete(t.docs, id)
	c := e.corpus
	c.docs--
	c.totalLen -= int64(e.length)
	for _, term := range e.terms {
		tid := term.id
		c.df[tid]--
		// The posting list is unordered: swap the document's posting with the last. The cost is
		// the term's document frequency, paid only by removals (deletions, updates).
		list := c.post[tid]
		for i := range list {
			if list[i].slot == slot {
				list[i] = list[len(list)-1]
				list = list[:len(list)-1]
				break
			}
		}
		c.post[tid] = list
		if c.df[tid] == 0 {
			delete(c.ids, c.terms[tid])
			c.terms[tid] = ""
			c.post[tid] = nil
			c.free = append(c.free, tid)
		}
	}
	if c.docs == 0 {
		delete(t.corpora, c.lang)
	}
	t.byRef.deleteSlot(e.ref, slot)
	t.slots[slot] = slotEntry{}
	t.free = append(t.free, slot)
}

func (c *corpus) intern(term string) uint32 {
	if id, ok := c.ids[term]; ok {
		return id
	}
	var id uint32
	if n := len(c.free); n > 0 {
		id = c.free[n-1]
		c.free = c.free[:n-1]
		c.terms[id] = term
	} else {
		id = uint32(len(c.terms))
		c.terms = append(c.terms, term)
		c.df = append(c.df, 0)
		c.post = append(c.post, nil)
	}
	c.ids[term] = id
	return id
}

// Bytes estimates the memory the index holds for tenant: per document its entry, slot, id and
// per distinct term its id, frequency and posting (16 bytes); per vocabulary term its bytes and
// map entry. TestIndexMemoryPerDoc measures what this estimates.
func (ix *Index) Bytes(tenant string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t := ix.tenants[tenant]
	if t == nil {
		return 0
	}
	b := 48 * len(t.slots)
	for _, s := range t.slots {
		if s.id != "" {
			b += 150 + len(s.id) + 16*len(s.terms)
		}
	}
	for _, c := range t.corpora {
		b += 40 * len(c.terms)
		for id := range c.ids {
			b += len(id) + 60
		}
	}
	return b
}
