package graph

import (
	"slices"
	"sync"
	"time"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/textdoc"
	"github.com/knowmind/knowmind/wordvec"
)

// The index memory budget (Config.IndexMemoryBytes): the sum of the open tenants' derived caches
// (textIndex: BM25 statistics and title field, vectors, word vectors, semantic models, token
// cache), each estimating its own bytes, is held under the budget by dropping the caches of the
// least recently used tenants after a load pushed the sum over it. A dropped tenant's snapshot is
// written first when its caches changed since the last one (snapshot.go), so its next recall
// reads it back at disk speed and catches up what was written meanwhile. The tenant just loaded
// is never dropped, so one tenant larger than the budget still works (alone).

// DefaultIndexMemoryMB is serve's --index-memory-mb unless told otherwise (the benchmarks use it
// too): a tenant of 100k memories holds about a gigabyte of derived indexes (README,
// "Benchmarks"), and the managed alpha needs its own few gigabytes beside them on a machine of
// 8 GB or more.
const DefaultIndexMemoryMB = 1536

// indexBudget is the Client's bookkeeping of the budget.
type indexBudget struct {
	mu      sync.Mutex // one enforcement at a time
	running sync.WaitGroup
	evicted int // tenants' caches dropped, for the tests and the benchmark
}

// touch records a use of the tenant's caches (its place in the LRU order).
func (x *textIndex) touch() { x.used.Store(time.Now().UnixNano()) }

// indexBytes estimates the memory the tenant's derived caches hold (0 when not loaded).
func (t *Tenant) indexBytes() int {
	x := &t.text
	x.mu.Lock()
	loaded := x.state == textLoaded
	memories := 0
	for id, docs := range x.memories {
		memories += 100 + 2*len(id) + 24*len(docs)
		for _, d := range docs {
			memories += len(d)
		}
	}
	memories += 120 * len(x.shas)
	x.mu.Unlock()
	if !loaded {
		return 0
	}
	b := memories + x.ix.Bytes(t.Name) + x.titles.Bytes(t.Name) + x.words.Bytes() + x.vec.bytes() + x.tokens.Bytes()
	for _, s := range []*semCache{&x.sem, &x.semPlain} {
		s.mu.Lock()
		if s.model != nil {
			b += s.model.Bytes()
		}
		s.mu.Unlock()
	}
	return b
}

// bytes estimates the vector set's memory: the vectors and, per vector, its uid, slot and
// memory entry.
func (s *vectorSet) bytes() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return (4*s.dim + 80) * len(s.uids)
}

// IndexBytes is the estimated memory of every open tenant's derived caches together.
func (c *Client) IndexBytes() int {
	total := 0
	for _, t := range c.openTenants() {
		total += t.indexBytes()
	}
	return total
}

// IndexEvictions counts the tenants whose caches the budget dropped.
func (c *Client) IndexEvictions() int {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	return c.budget.evicted
}

func (c *Client) openTenants() []*Tenant {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Tenant, 0, len(c.tenants))
	for _, t := range c.tenants {
		out = append(out, t)
	}
	return out
}

// overIndexBudget tells whether the open tenants' caches exceed the budget (never without one).
func (c *Client) overIndexBudget() bool {
	return c.cfg.IndexMemoryBytes > 0 && int64(c.IndexBytes()) > c.cfg.IndexMemoryBytes
}

// enforceIndexBudget drops least recently used tenants' caches, in the background, until the
// sum is within the budget; loaded is the tenant whose load called it, kept.
func (c *Client) enforceIndexBudget(loaded *Tenant) {
	if c.cfg.IndexMemoryBytes <= 0 {
		return
	}
	c.budget.running.Add(1)
	go func() {
		defer c.budget.running.Done()
		c.budget.mu.Lock()
		defer c.budget.mu.Unlock()
		type sized struct {
			t     *Tenant
			bytes int
			used  int64
		}
		var open []sized
		total := 0
		for _, t := range c.openTenants() {
			b := t.indexBytes()
			if b == 0 {
				continue
			}
			total += b
			if t != loaded {
				open = append(open, sized{t, b, t.text.used.Load()})
			}
		}
		slices.SortFunc(open, func(a, b sized) int { return int(min(max(a.used-b.used, -1), 1)) })
		for _, o := range open {
			if int64(total) <= c.cfg.IndexMemoryBytes {
				return
			}
			if o.t.evict() {
				total -= o.bytes
				c.budget.evicted++
				c.log.Info("tenant index dropped for the memory budget", "tenant", o.t.Name, "bytes", o.bytes,
					"total", total, "budget", c.cfg.IndexMemoryBytes)
			}
		}
	}()
}

// WaitIndexBudget waits for the budget's enforcements running (tests, benchmarks).
func (c *Client) WaitIndexBudget() { c.budget.running.Wait() }

// evict writes the tenant's snapshot if its caches changed since the last, then drops the caches:
// the next recall loads them again, from the snapshot (without snapshots: from Dgraph). A tenant
// being loaded, synced, opened or read by a recall is left alone. Writes the hooks see while it is dropped are
// not lost: they are committed after the snapshot's watermark, so the catch-up reads them.
func (t *Tenant) evict() bool {
	if err := t.writeSnapshot(); err != nil {
		t.c.log.Warn("index snapshot not written before dropping the tenant's index", "tenant", t.Name, "err", err)
	}
	x := &t.text
	x.mu.Lock()
	if x.state != textLoaded || x.syncing != nil || x.snap.opening != nil || x.readers.Load() > 0 {
		x.mu.Unlock()
		return false
	}
	x.state = textUnloaded
	x.gen++
	x.memories, x.shas, x.pending = nil, nil, nil
	x.ix.Replace(t.Name, &bm25.Builder{})
	x.titles.Replace(t.Name, &bm25.Builder{})
	x.words.Replace(wordvec.New(0))
	x.vec.replace(&vectorSet{})
	x.seq.Replace(&textdoc.Sequences{})
	x.mu.Unlock()
	x.tokens.Clear()
	for _, s := range []*semCache{&x.sem, &x.semPlain} {
		s.mu.Lock()
		if !s.building {
			s.model, s.gen, s.chg = nil, 0, 0
		}
		s.mu.Unlock()
	}
	return true
}
