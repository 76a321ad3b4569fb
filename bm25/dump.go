package bm25

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Dump is a tenant's documents as an Index counts them, for persisting them (graph's snapshots)
// and counting them again without the texts or their analysis: per corpus its vocabulary and
// postings, per document its corpus, reference, length and distinct terms with their
// frequencies. Documents are held as columns (one slice per field, every document's terms in
// one slice) so that a dump is written and read back as a few flat arrays instead of a slice
// pair per document, and the postings are copied back in order instead of inverted again.
// Dump lists the documents in the index's order; SortByID puts them in id order, which lets
// Load leave the index of documents by id to its first use.
type Dump struct {
	Corpora []DumpCorpus
	// Per document, all of one length: its id, its corpus (an index in Corpora), reference,
	// length and number of distinct terms.
	IDs     []string
	Corpus  []uint32
	Refs    []uint64
	Lengths []uint32
	Counts  []uint32
	// Every document's distinct terms (ids in its corpus' vocabulary) and their frequencies,
	// document after document, Counts[i] of them for document i.
	Terms, Freqs []uint32
}

// DumpCorpus is one language's vocabulary, a term's id its index ("" an id not in use), and its
// postings: term after term, DF[id] documents hold term id, listed in Docs (indexes in
// Dump.IDs) with the term's frequency there in Freqs.
type DumpCorpus struct {
	Lang            string
	Terms           []string
	DF, Docs, Freqs []uint32
}

// Dump copies what the index holds for tenant.
func (ix *Index) Dump(tenant string) Dump {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t := ix.tenants[tenant]
	if t == nil {
		return Dump{}
	}
	var d Dump
	at := map[*corpus]uint32{}
	var corpora []*corpus
	for lang, c := range t.corpora {
		at[c] = uint32(len(d.Corpora))
		d.Corpora = append(d.Corpora, DumpCorpus{Lang: lang, Terms: append([]string(nil), c.terms...)})
		corpora = append(corpora, c)
	}
	n, held := t.len(), 0
	for _, s := range t.slots {
		held += len(s.terms)
	}
	d.IDs, d.Corpus, d.Refs = make([]string, 0, n), make([]uint32, 0, n), make([]uint64, 0, n)
	d.Lengths, d.Counts = make([]uint32, 0, n), make([]uint32, 0, n)
	d.Terms, d.Freqs = make([]uint32, 0, held), make([]uint32, 0, held)
	index := make([]uint32, len(t.slots)) // slot → the document's index in the dump
	for slot, s := range t.slots {
		if s.id == "" {
			continue
		}
		index[slot] = uint32(len(d.IDs))
		d.IDs, d.Corpus, d.Refs = append(d.IDs, s.id), append(d.Corpus, at[s.corpus]), append(d.Refs, s.ref)
		d.Lengths, d.Counts = append(d.Lengths, s.length), append(d.Counts, uint32(len(s.terms)))
		for _, tf := range s.terms {
			d.Terms, d.Freqs = append(d.Terms, tf.id), append(d.Freqs, tf.tf)
		}
	}
	for i, c := range corpora {
		dc := &d.Corpora[i]
		dc.DF = make([]uint32, len(c.post))
		held := 0
		for id, list := range c.post {
			dc.DF[id] = uint32(len(list))
			held += len(list)
		}
		dc.Docs, dc.Freqs = make([]uint32, 0, held), make([]uint32, 0, held)
		for _, list := range c.post {
			for _, p := range list {
				dc.Docs, dc.Freqs = append(dc.Docs, index[p.slot]), append(dc.Freqs, p.tf)
			}
		}
	}
	return d
}

// SortByID puts the documents of d, as Dump returned it, in id order (and renumbers the
// postings), for Load to install without indexing them by id. It is a copy's reordering that
// needs no lock: graph's snapshot writer calls it after the index's lock is released.
func (d *Dump) SortByID() {
	n := len(d.IDs)
	if slices.IsSorted(d.IDs) {
		return
	}
	order := make([]uint32, n) // position in id order → the document's index in d
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(d.IDs[a], d.IDs[b]) })
	start := make([]int, n+1) // a document's first term in d.Terms
	for i, count := range d.Counts {
		start[i+1] = start[i] + int(count)
	}
	moved := make([]uint32, n) // the document's index in d → its position in id order
	ids, corpus, refs := make([]string, n), make([]uint32, n), make([]uint64, n)
	lengths, counts := make([]uint32, n), make([]uint32, n)
	terms, freqs := make([]uint32, 0, len(d.Terms)), make([]uint32, 0, len(d.Freqs))
	for to, from := range order {
		moved[from] = uint32(to)
		ids[to], corpus[to], refs[to], lengths[to], counts[to] = d.IDs[from], d.Corpus[from], d.Refs[from], d.Lengths[from], d.Counts[from]
		terms = append(terms, d.Terms[start[from]:start[from+1]]...)
		freqs = append(freqs, d.Freqs[start[from]:start[from+1]]...)
	}
	d.IDs, d.Corpus, d.Refs, d.Lengths, d.Counts, d.Terms, d.Freqs = ids, corpus, refs, lengths, counts, terms, freqs
	for _, c := range d.Corpora {
		for i, doc := range c.Docs {
			c.Docs[i] = moved[doc]
		}
	}
}

// errDump reports a dump that does not describe a consistent index.
var errDump = errors.New("bm25: inconsistent dump")

// Load counts a dump's documents into b, which must be empty: the same statistics as adding
// every document's tokens again, without sorting, interning or inverting them. A dump in id
// order (SortByID) is installed without the index of documents by id, which the first Add,
// Remove, DocTerms or Ref builds: what a search needs is then all a tenant's open pays for. A
// dump in another order is indexed at once, to find an id held twice. A dump whose
// columns differ in length, whose ids are out of range, that names a document twice, or whose
// postings do not count each term as often as the documents hold it, is refused and leaves b
// empty. (That each posting names a document holding its term is the dump's writer's promise:
// graph's snapshots are authenticated.)
func (b *Builder) Load(d Dump) error {
	if b.t != nil && b.t.len() > 0 {
		return errors.New("bm25: Load into a builder that holds documents")
	}
	n := len(d.IDs)
	if len(d.Corpus) != n || len(d.Refs) != n || len(d.Lengths) != n || len(d.Counts) != n || len(d.Freqs) != len(d.Terms) {
		return fmt.Errorf("%w: columns of %d, %d, %d, %d, %d documents, %d terms and %d frequencies", errDump,
			n, len(d.Corpus), len(d.Refs), len(d.Lengths), len(d.Counts), len(d.Terms), len(d.Freqs))
	}
	t := newTenantIndex()
	corpora := make([]*corpus, len(d.Corpora))
	for i, dc := range d.Corpora {
		if _, dup := t.corpora[dc.Lang]; dup {
			return fmt.Errorf("%w: corpus %q twice", errDump, dc.Lang)
		}
		c := &corpus{lang: dc.Lang, ids: make(map[string]uint32, len(dc.Terms)), terms: dc.Terms,
			df: make([]int64, len(dc.Terms)), post: make([][]posting, len(dc.Terms))}
		t.corpora[dc.Lang] = c
		corpora[i] = c
	}
	// The documents' term lists and the postings come from one allocation each (a list that
	// grows later moves out of its slab).
	at := 0
	for i, count := range d.Counts {
		if d.Corpus[i] >= uint32(len(corpora)) || int(count) > len(d.Terms)-at || d.IDs[i] == "" {
			return fmt.Errorf("%w: document %q", errDump, d.IDs[i])
		}
		c := corpora[d.Corpus[i]]
		for _, id := range d.Terms[at : at+int(count)] {
			if int(id) >= len(c.terms) {
				return fmt.Errorf("%w: document %q: term %d", errDump, d.IDs[i], id)
			}
			c.df[id]++
		}
		at += int(count)
	}
	if at != len(d.Terms) {
		return fmt.Errorf("%w: %d terms for documents holding %d", errDump, len(d.Terms), at)
	}
	termSlab, postSlab := make([]termFreq, at), make([]posting, at)
	for i, c := range corpora {
		dc := d.Corpora[i]
		if len(dc.DF) != len(c.df) || len(dc.Freqs) != len(dc.Docs) {
			return fmt.Errorf("%w: corpus %q: %d terms, %d frequencies, %d postings, %d frequencies", errDump, dc.Lang,
				len(c.df), len(dc.DF), len(dc.Docs), len(dc.Freqs))
		}
		held := 0
		for id, df := range dc.DF {
			if int64(df) != c.df[id] || int(df) > len(dc.Docs)-held {
				return fmt.Errorf("%w: corpus %q: term %d in %d postings, %d documents", errDump, dc.Lang, id, df, c.df[id])
			}
			list := postSlab[:df:df]
			postSlab = postSlab[df:]
			for j := range list {
				doc, tf := dc.Docs[held+j], dc.Freqs[held+j]
				if int(doc) >= n || d.Corpus[doc] != uint32(i) || tf == 0 {
					return fmt.Errorf("%w: corpus %q: term %d: posting of document %d", errDump, dc.Lang, id, doc)
				}
				list[j] = posting{slot: doc, tf: tf}
			}
			c.post[id] = list
			held += int(df)
		}
		if held != len(dc.Docs) {
			return fmt.Errorf("%w: corpus %q: %d postings for terms held %d times", errDump, dc.Lang, len(dc.Docs), held)
		}
	}
	t.slots = make([]slotEntry, 0, n)
	t.docs = nil
	for i := 1; i < n; i++ {
		if d.IDs[i-1] >= d.IDs[i] {
			t.docs = make(map[string]uint32, n)
			break
		}
	}
	t.byRef = withRoom(n)
	at = 0
	for i, docID := range d.IDs {
		c, count := corpora[d.Corpus[i]], int(d.Counts[i])
		ids := termSlab[at : at+count : at+count]
		slot := uint32(len(t.slots))
		for j, id := range d.Terms[at : at+count] {
			tf := d.Freqs[at+j]
			if c.terms[id] == "" || tf == 0 {
				return fmt.Errorf("%w: document %q: term %d", errDump, docID, id)
			}
			ids[j] = termFreq{id: id, tf: tf}
		}
		at += count
		c.docs++
		c.totalLen += int64(d.Lengths[i])
		if t.docs != nil {
			t.docs[docID] = slot
			if len(t.docs) != i+1 {
				return fmt.Errorf("%w: document %q twice", errDump, docID)
			}
		}
		t.slots = append(t.slots, slotEntry{id: docID, ref: d.Refs[i], length: d.Lengths[i], corpus: c, terms: ids})
		if ref := d.Refs[i]; ref != 0 {
			t.byRef.put(ref, slot)
		}
	}
	for lang, c := range t.corpora {
		for id, term := range c.terms {
			switch {
			case term == "":
				c.free = append(c.free, uint32(id))
			case c.df[id] == 0: // a term no document holds: free, as a Remove would have left it
				c.terms[id] = ""
				c.free = append(c.free, uint32(id))
			default:
				if _, dup := c.ids[term]; dup {
					return fmt.Errorf("%w: term %q twice in corpus %q", errDump, term, lang)
				}
				c.ids[term] = uint32(id)
			}
		}
		if c.docs == 0 {
			delete(t.corpora, lang)
		}
	}
	b.t = t
	return nil
}

// Ref is the reference document id was added with (false: no such document).
func (b *Builder) Ref(id string) (uint64, bool) {
	if b.t == nil {
		return 0, false
	}
	slot, ok := b.t.slotsByID()[id]
	if !ok {
		return 0, false
	}
	return b.t.slots[slot].ref, true
}
