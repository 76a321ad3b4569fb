package bm25

import (
	"errors"
	"fmt"
)

// Dump is a tenant's documents as an Index counts them, for persisting them (graph's snapshots)
// and counting them again without the texts or their analysis: per corpus its vocabulary, per
// document its corpus, reference, length and distinct terms with their frequencies.
type Dump struct {
	Corpora []DumpCorpus
	Docs    []DumpDoc
}

// DumpCorpus is one language's vocabulary: a term's id is its index ("" an id not in use).
type DumpCorpus struct {
	Lang  string
	Terms []string
}

// DumpDoc is one document: Terms are ids in its corpus' vocabulary, Freqs their frequencies.
type DumpDoc struct {
	ID     string
	Corpus int
	Ref    uint64
	Length uint32
	Terms  []uint32
	Freqs  []uint32
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
	at := map[*corpus]int{}
	for lang, c := range t.corpora {
		at[c] = len(d.Corpora)
		d.Corpora = append(d.Corpora, DumpCorpus{Lang: lang, Terms: append([]string(nil), c.terms...)})
	}
	d.Docs = make([]DumpDoc, 0, len(t.docs))
	for _, s := range t.slots {
		if s.id == "" {
			continue
		}
		doc := DumpDoc{ID: s.id, Corpus: at[s.corpus], Ref: s.ref, Length: s.length,
			Terms: make([]uint32, len(s.terms)), Freqs: make([]uint32, len(s.terms))}
		for i, tf := range s.terms {
			doc.Terms[i], doc.Freqs[i] = tf.id, tf.tf
		}
		d.Docs = append(d.Docs, doc)
	}
	return d
}

// errDump reports a dump that does not describe a consistent index.
var errDump = errors.New("bm25: inconsistent dump")

// Load counts a dump's documents into b, which must be empty: the same statistics as adding
// every document's tokens again, without sorting or interning them. A dump whose ids are out
// of range, or that names a document twice, is refused and leaves b empty.
func (b *Builder) Load(d Dump) error {
	if b.t != nil && len(b.t.docs) > 0 {
		return errors.New("bm25: Load into a builder that holds documents")
	}
	t := newTenantIndex()
	corpora := make([]*corpus, len(d.Corpora))
	langs := make([]string, len(d.Corpora))
	for i, dc := range d.Corpora {
		if _, dup := t.corpora[dc.Lang]; dup {
			return fmt.Errorf("%w: corpus %q twice", errDump, dc.Lang)
		}
		c := &corpus{ids: make(map[string]uint32, len(dc.Terms)), terms: dc.Terms,
			df: make([]int64, len(dc.Terms)), post: make([][]posting, len(dc.Terms))}
		t.corpora[dc.Lang] = c
		corpora[i], langs[i] = c, dc.Lang
	}
	// Sized before counting: every posting list gets the capacity of its term's document
	// frequency, and the documents' term lists and the postings come from one allocation each
	// (a list that grows later moves out of its slab).
	t.slots = make([]slotEntry, 0, len(d.Docs))
	t.docs = make(map[string]docEntry, len(d.Docs))
	t.byRef = make(map[uint64]uint32, len(d.Docs))
	held := 0
	for _, doc := range d.Docs {
		if doc.Corpus < 0 || doc.Corpus >= len(corpora) || len(doc.Freqs) != len(doc.Terms) || doc.ID == "" {
			return fmt.Errorf("%w: document %q", errDump, doc.ID)
		}
		c := corpora[doc.Corpus]
		for _, id := range doc.Terms {
			if int(id) >= len(c.terms) {
				return fmt.Errorf("%w: document %q: term %d", errDump, doc.ID, id)
			}
			c.df[id]++
		}
		held += len(doc.Terms)
	}
	termSlab, postSlab := make([]termFreq, held), make([]posting, held)
	for _, c := range corpora {
		for id, df := range c.df {
			c.post[id], postSlab = postSlab[:0:df], postSlab[df:]
			c.df[id] = 0
		}
	}
	for _, doc := range d.Docs {
		if _, dup := t.docs[doc.ID]; dup {
			return fmt.Errorf("%w: document %q twice", errDump, doc.ID)
		}
		c := corpora[doc.Corpus]
		ids := termSlab[:len(doc.Terms):len(doc.Terms)]
		termSlab = termSlab[len(doc.Terms):]
		slot := uint32(len(t.slots))
		for i, id := range doc.Terms {
			if c.terms[id] == "" || doc.Freqs[i] == 0 {
				return fmt.Errorf("%w: document %q: term %d", errDump, doc.ID, id)
			}
			ids[i] = termFreq{id: id, tf: doc.Freqs[i]}
			c.df[id]++
			c.post[id] = append(c.post[id], posting{slot: slot, tf: doc.Freqs[i]})
		}
		c.docs++
		c.totalLen += int64(doc.Length)
		t.docs[doc.ID] = docEntry{lang: langs[doc.Corpus], length: doc.Length, terms: ids, slot: slot}
		t.slots = append(t.slots, slotEntry{id: doc.ID, ref: doc.Ref, length: doc.Length, corpus: c, terms: ids})
		if doc.Ref != 0 {
			t.byRef[doc.Ref] = slot
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
