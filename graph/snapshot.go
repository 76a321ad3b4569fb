package graph

import (
	"crypto/hmac"
	"crypto/sha256"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/knowmind/knowmind/snapshot"
)

// Index snapshots: a tenant's derived caches (textIndex: BM25 statistics and title field, the
// exact vectors, the word vectors, the semantic model) persisted in Config.IndexDir, one file
// per namespace (<IndexDir>/<namespace>/index.snap, format in package snapshot), so that the
// first recall after a start reads a file instead of streaming and analysing every chunk again.
//
// Write: after a load, and after a sync or an eviction that finds the caches changed since the
// last write, in the background, one write per tenant at a time. The caches are copied under
// the index's lock (a consistent cut: what the hooks and syncs applied, and the sync watermark
// they are complete up to), then encoded and written atomically without it.
//
// Open (the first load of a tenant): the file is read and checked — the tag must name this
// tenant, namespace, analysis (bm25.Analysis.ID) and embedder, every sealed block must
// open — and a sample of its memories is compared with the store (the same content sha must
// have the same chunk uids: a namespace dropped and imported again has other uids). Then the
// caches are installed and caught up by the replicas' reconciliation (textsync.go) from the
// snapshot's watermark: additions, edits and deletions made while the service was down. Only
// then does the tenant count as loaded: recalls wait for the catch-up as for a load. A file
// that is missing, stale, corrupt or cannot be reconciled is dropped and the tenant rebuilt
// from Dgraph; a snapshot is never trusted blindly.

// snapshotFileName is the file a namespace's snapshot lives in, under its directory.
const snapshotFileName = "index.snap"

// snapshotEvery is how often this process's own writes (the ingest hooks) get the tenant a new
// snapshot: a crash loses at most that much of what a restart need not catch up.
const snapshotEvery = 5 * time.Minute

// snapshotSample is how many of a snapshot's memories are compared with the store on open.
const snapshotSample = 16

// Results of opening a snapshot, the label of knowmind_index_snapshot_loads_total.
const (
	SnapshotLoaded     = "loaded"       // read, checked and caught up
	SnapshotMissing    = "missing"      // none on disk: built from Dgraph
	SnapshotStale      = "stale"        // another tenant, analysis or embedder: rebuilt
	SnapshotCorrupt    = "corrupt"      // torn, truncated or a block that does not open: rebuilt
	SnapshotUnreconcil = "unreconciled" // the store disagrees, or the catch-up failed: rebuilt
)

// snapshotState is a textIndex's snapshot bookkeeping, guarded by textIndex.mu.
type snapshotState struct {
	writing bool
	again   bool // a write was asked for while one ran
	// what the last write covered: the text index's version and the sync watermark
	gen, chg uint64
	from     time.Time
	// opening is non-nil while a snapshot is being caught up: callers of ensure wait for it.
	opening chan struct{}
	// rescan makes the next load read Dgraph, not the snapshot (RebuildTextStats).
	rescan bool
	// file serialises the writes of the file (the background writer and Close's flush).
	file sync.Mutex
	// written is when the file was last written or read: this process's own writes get a new
	// snapshot at most every snapshotEvery (snapshotDue).
	written time.Time
	// semPartial: the file holds a partial semantic model (semantic.go), so a whole one is worth
	// a write although the text index did not change.
	semPartial bool
}

// snapshotPath is where the tenant's snapshot lives ("": snapshots are off).
func (t *Tenant) snapshotPath() string {
	if t.c.cfg.IndexDir == "" {
		return ""
	}
	return filepath.Join(t.c.cfg.IndexDir, strconv.FormatUint(t.Namespace, 10), snapshotFileName)
}

// snapshotTag is the identity a snapshot of this tenant must carry.
func (t *Tenant) snapshotTag() snapshot.Tag {
	tag := snapshot.Tag{Tenant: t.Name, Namespace: t.Namespace, Analysis: t.c.cfg.Analysis.ID()}
	if t.exactVectors() && t.c.cfg.Embedder != nil {
		tag.Embedder = t.c.cfg.Embedder.ID()
	}
	return tag
}

// snapshotKey seals the snapshots (AES-256-GCM, package snapshot): derived from the service
// secret, which every process on the data dir holds, so the files need no key of their own and
// hold nothing readable without the secret.
func (c *Client) snapshotKey() []byte { return SnapshotKey(c.cfg.Secret) }

// SnapshotKey is the key the index snapshots of a service with this secret are sealed with
// (snapshot.ReadFile opens them with it).
func SnapshotKey(secret []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("knowmind index snapshot"))
	return mac.Sum(nil)
}

// countSnapshotLoad records how a tenant's first load went.
func (c *Client) countSnapshotLoad(result string) {
	c.snapMu.Lock()
	if c.snapLoads == nil {
		c.snapLoads = map[string]int{}
	}
	c.snapLoads[result]++
	c.snapMu.Unlock()
	if c.cfg.ObserveSnapshotLoad != nil {
		c.cfg.ObserveSnapshotLoad(result)
	}
}

// SnapshotLoads counts the snapshot opens of this client by result (Snapshot* constants).
func (c *Client) SnapshotLoads() map[string]int {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	out := make(map[string]int, len(c.snapLoads))
	for k, v := range c.snapLoads {
		out[k] = v
	}
	return out
}

// snapshotSoon writes the tenant's snapshot in the background if the caches changed since the
// last write (or none was written). A write asked for while one runs runs again after it.
func (t *Tenant) snapshotSoon() {
	if t.snapshotPath() == "" {
		return
	}
	x := &t.text
	x.mu.Lock()
	if x.snap.writing {
		x.snap.again = true
		x.mu.Unlock()
		return
	}
	x.snap.writing = true
	x.mu.Unlock()
	go func() {
		for {
			if err := t.writeSnapshot(); err != nil {
				t.c.log.Warn("index snapshot not written", "tenant", t.Name, "err", err)
			}
			x.mu.Lock()
			if !x.snap.again {
				x.snap.writing = false
				x.mu.Unlock()
				return
			}
			x.snap.again = false
			x.mu.Unlock()
		}
	}()
}

// flushSnapshots writes the snapshot of every loaded tenant whose caches changed since its last
// write, so that the next start catches up nothing (Close).
func (c *Client) flushSnapshots() {
	if c.cfg.IndexDir == "" {
		return
	}
	c.mu.Lock()
	tenants := make([]*Tenant, 0, len(c.tenants))
	for _, t := range c.tenants {
		tenants = append(tenants, t)
	}
	c.mu.Unlock()
	for _, t := range tenants {
		if err := t.writeSnapshot(); err != nil {
			c.log.Warn("index snapshot not written", "tenant", t.Name, "err", err)
		}
	}
}

// writeSnapshot writes the tenant's caches now, unless they are what the last write covered.
func (t *Tenant) writeSnapshot() error {
	path := t.snapshotPath()
	if path == "" {
		return nil
	}
	x := &t.text
	x.snap.file.Lock()
	defer x.snap.file.Unlock()
	// The semantic model first: its lock is never taken under x.mu.
	s := &x.sem
	s.mu.Lock()
	model, partial, semGen, semChg := s.model, s.partial, s.gen, s.chg
	s.mu.Unlock()
	x.mu.Lock()
	if x.state != textLoaded || x.snap.opening != nil {
		x.mu.Unlock()
		return nil
	}
	gen, chg := x.ix.Version(t.Name)
	current := model != nil && semGen == gen && semChg == chg
	repaired := x.snap.semPartial && model != nil && !partial
	if x.snap.gen == gen && x.snap.chg == chg && x.snap.from.Equal(x.syncedFrom) && !x.snap.from.IsZero() && !repaired {
		x.mu.Unlock()
		return nil
	}
	tag := t.snapshotTag()
	tag.Memories, tag.Watermark = len(x.memories), x.syncedFrom
	from := x.syncedFrom
	memories, vectors, blocks := encodeMemories(x.memories, x.shas), x.vec.encode(), x.vec.encodeBlocks()
	text, titles, words := x.ix.Dump(t.Name), x.titles.Dump(t.Name), x.words.State()
	seqs := encodeSequences(x.seq.Members())
	x.mu.Unlock()

	sections := []snapshot.Section{
		{Name: sectionText, Data: encodeDump(text)},
		{Name: sectionMemories, Data: memories},
		{Name: sectionTitles, Data: encodeDump(titles)},
		{Name: sectionWords, Data: encodeWords(words)},
	}
	if model != nil {
		sections = append(sections, snapshot.Section{Name: sectionSemantic, Data: encodeSemantic(model.State(), current, partial)})
	}
	sections = append(sections, snapshot.Section{Name: sectionSequences, Data: seqs},
		snapshot.Section{Name: sectionVectors, Data: vectors}, snapshot.Section{Name: sectionVectorBlocks, Data: blocks})
	if err := snapshot.WriteFile(path, t.c.snapshotKey(), tag, sections); err != nil {
		return err
	}
	x.mu.Lock()
	x.snap.gen, x.snap.chg, x.snap.from, x.snap.written = gen, chg, from, time.Now()
	x.snap.semPartial = model != nil && partial
	x.mu.Unlock()
	return nil
}

// snapshotDue writes the tenant's snapshot in the background when the last is older than
// snapshotEvery (the ingest hooks call it after their writes; writeSnapshot skips an unchanged
// index).
func (t *Tenant) snapshotDue() {
	if t.snapshotPath() == "" {
		return
	}
	x := &t.text
	x.mu.Lock()
	due := x.state == textLoaded && !x.snap.writing && time.Since(x.snap.written) > snapshotEvery
	x.mu.Unlock()
	if due {
		t.snapshotSoon()
	}
}
