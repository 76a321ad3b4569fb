package graph

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/snapshot"
	"github.com/knowmind/knowmind/textdoc"
	"github.com/knowmind/knowmind/wordvec"
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
// tenant, namespace, analysis (bm25.Analysis.ID) and embedder, every section's checksum must
// hold — and a sample of its memories is compared with the store (the same content sha must
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
	SnapshotCorrupt    = "corrupt"      // torn, truncated or failing a checksum: rebuilt
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
	x.mu.Lock()
	if x.state != textLoaded || x.snap.opening != nil {
		x.mu.Unlock()
		return nil
	}
	gen, chg := x.ix.Version(t.Name)
	if x.snap.gen == gen && x.snap.chg == chg && x.snap.from.Equal(x.syncedFrom) && !x.snap.from.IsZero() {
		x.mu.Unlock()
		return nil
	}
	tag := t.snapshotTag()
	tag.Memories, tag.Watermark = len(x.memories), x.syncedFrom
	from := x.syncedFrom
	var memories, vectors snapshot.Enc
	encodeMemories(&memories, x.memories, x.shas)
	x.vec.encode(&vectors)
	text, titles, words := x.ix.Dump(t.Name), x.titles.Dump(t.Name), x.words.State()
	seqs := encodeSequences(x.seq.Members())
	x.mu.Unlock()

	sections := []snapshot.Section{
		{Name: "memories", Data: memories.Bytes()},
		{Name: "text", Data: encodeDump(text)},
		{Name: "titles", Data: encodeDump(titles)},
		{Name: "vectors", Data: vectors.Bytes()},
		{Name: "words", Data: encodeWords(words)},
		{Name: "sequences", Data: seqs},
	}
	s := &t.text.sem
	s.mu.Lock()
	model, current := s.model, s.gen == gen && s.chg == chg
	s.mu.Unlock()
	if model != nil {
		sections = append(sections, snapshot.Section{Name: "semantic", Data: encodeSemantic(model.State(), current)})
	}
	if err := snapshot.WriteFile(path, t.c.snapshotKey(), tag, sections); err != nil {
		return err
	}
	x.mu.Lock()
	x.snap.gen, x.snap.chg, x.snap.from, x.snap.written = gen, chg, from, time.Now()
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

// restored is what a snapshot holds, decoded and checked, ready to be swapped in.
type restored struct {
	tag          snapshot.Tag
	text, titles *bm25.Builder
	words        *wordvec.Model
	memories     map[string][]string
	shas         map[string]string
	vecs         *vectorSet
	seqs         *textdoc.Sequences
	sem          *semvec.Model
	semCurrent   bool
	refs         map[string]uint64 // document id → chunk uid, for the sample check
}

// errSnapshotStale and errSnapshotUnreconciled sort a snapshot's rejection into its result.
var (
	errSnapshotStale        = errors.New("snapshot is of something else")
	errSnapshotUnreconciled = errors.New("snapshot disagrees with the store")
)

// readSnapshot reads, checks and decodes the tenant's snapshot, and compares a sample of it
// with the store. The error's kind is its result (snapshotResult).
func (t *Tenant) readSnapshot(ctx context.Context) (*restored, error) {
	tag, sections, err := snapshot.ReadFile(t.snapshotPath(), t.c.snapshotKey())
	if err != nil {
		return nil, err
	}
	if err := tag.Matches(t.snapshotTag()); err != nil {
		return nil, fmt.Errorf("%w: %v", errSnapshotStale, err)
	}
	r, err := decodeSections(tag, sections)
	if err != nil {
		return nil, err
	}
	if err := t.sampleSnapshot(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeSections decodes a snapshot's sections, each on its own goroutine: opening is bound by
// the largest.
func decodeSections(tag snapshot.Tag, sections map[string][]byte) (*restored, error) {
	for _, name := range []string{"memories", "text", "titles", "vectors", "words"} {
		if _, ok := sections[name]; !ok {
			return nil, fmt.Errorf("%w: no %s section", snapshot.ErrCorrupt, name)
		}
	}
	r := &restored{tag: tag}
	var wg sync.WaitGroup
	errs := make([]error, 7)
	wg.Go(func() {
		if r.memories, r.shas, errs[0] = decodeMemories(sections["memories"]); errs[0] == nil && len(r.memories) != tag.Memories {
			errs[0] = fmt.Errorf("%w: %d memories, tagged %d", snapshot.ErrCorrupt, len(r.memories), tag.Memories)
		}
	})
	wg.Go(func() {
		text, err := decodeDump(sections["text"])
		if err != nil {
			errs[1] = err
			return
		}
		r.refs = make(map[string]uint64, len(text.Docs))
		for _, d := range text.Docs {
			r.refs[d.ID] = d.Ref
		}
		r.text = &bm25.Builder{}
		if err := r.text.Load(text); err != nil {
			errs[1] = fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
		}
	})
	wg.Go(func() {
		titles, err := decodeDump(sections["titles"])
		if err != nil {
			errs[2] = err
			return
		}
		r.titles = &bm25.Builder{}
		if err := r.titles.Load(titles); err != nil {
			errs[2] = fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
		}
	})
	wg.Go(func() { r.vecs, errs[3] = decodeVectors(sections["vectors"]) })
	wg.Go(func() { r.words, errs[4] = decodeWords(sections["words"]) })
	wg.Go(func() {
		if raw, ok := sections["semantic"]; ok {
			r.sem, r.semCurrent, errs[5] = decodeSemantic(raw)
		}
	})
	// Absent from a snapshot written before sequences existed, when no memory had a place.
	wg.Go(func() { r.seqs, errs[6] = decodeSequences(sections["sequences"]) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// snapshotResult sorts a failed open into its result.
func snapshotResult(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return SnapshotMissing
	case errors.Is(err, errSnapshotStale):
		return SnapshotStale
	case errors.Is(err, snapshot.ErrCorrupt):
		return SnapshotCorrupt
	}
	return SnapshotUnreconcil
}

// sampleSnapshotQuery reads the chunk uids of sampled memories by id.
const sampleSnapshotQuery = `{ m(func: eq(Memory.id, [%s])) @filter(eq(Memory.status, "indexed")) {
  Memory.id  Memory.content_sha  Memory.chunks { uid }
} }`

// sampleSnapshot compares up to snapshotSample of the snapshot's memories, spread over its ids,
// with the store: one the store holds at the same content sha must have the chunks the snapshot
// holds for it (the same uids). Memories deleted or changed since are the catch-up's business.
func (t *Tenant) sampleSnapshot(ctx context.Context, r *restored) error {
	ids := make([]string, 0, len(r.memories))
	for id := range r.memories {
		if r.shas[id] != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	var sample []string
	step := max(1, len(ids)/snapshotSample)
	for i := 0; i < len(ids) && len(sample) < snapshotSample; i += step {
		sample = append(sample, ids[i])
	}
	var res struct {
		M []struct {
			ID     string  `json:"Memory.id"`
			SHA    string  `json:"Memory.content_sha"`
			Chunks []dgUID `json:"Memory.chunks"`
		} `json:"m"`
	}
	if err := t.queryVars(ctx, fmt.Sprintf(sampleSnapshotQuery, quoteAll(sample)), nil, &res); err != nil {
		return fmt.Errorf("%w: sample: %v", errSnapshotUnreconciled, err)
	}
	for _, m := range res.M {
		if m.SHA == "" || m.SHA != r.shas[m.ID] {
			continue
		}
		want := map[uint64]bool{}
		for _, doc := range r.memories[m.ID] {
			if ref := r.refs[doc]; ref != 0 {
				want[ref] = true
			}
		}
		for _, c := range m.Chunks {
			u, err := parseUID(c.UID)
			if err != nil || !want[u] {
				return fmt.Errorf("%w: memory %q has chunk %s the snapshot does not hold", errSnapshotUnreconciled, m.ID, c.UID)
			}
		}
		if len(m.Chunks) != len(want) {
			return fmt.Errorf("%w: memory %q has %d chunks, the snapshot %d", errSnapshotUnreconciled, m.ID, len(m.Chunks), len(want))
		}
	}
	return nil
}

// openSnapshot installs the tenant's snapshot into x (whose state is textLoading: the hooks'
// calls are queued meanwhile) and catches it up with the store. It returns false, with x back
// in textLoading and nothing of the snapshot kept, when there is none or it cannot be used;
// the caller then loads from Dgraph. The file of a snapshot that cannot be used is removed.
func (x *textIndex) openSnapshot(ctx context.Context, t *Tenant) bool {
	path := t.snapshotPath()
	x.mu.Lock()
	rescan := x.snap.rescan
	x.snap.rescan = false
	x.mu.Unlock()
	if path == "" || rescan {
		return false
	}
	started := time.Now()
	r, err := t.readSnapshot(ctx)
	if err != nil {
		result := snapshotResult(err)
		t.c.countSnapshotLoad(result)
		if result != SnapshotMissing {
			t.c.log.Warn("index snapshot dropped; rebuilding from Dgraph", "tenant", t.Name, "result", result, "err", err)
			os.Remove(path)
		}
		return false
	}
	read := time.Since(started)

	// Swap in as a load does, but stay "opening" until caught up.
	opening := make(chan struct{})
	x.mu.Lock()
	x.ix.Replace(t.Name, r.text)
	x.titles.Replace(t.Name, r.titles)
	x.words.Replace(r.words)
	x.memories, x.shas = r.memories, r.shas
	x.vec.replace(r.vecs)
	x.seq.Replace(r.seqs)
	x.state = textLoaded
	x.gen++
	x.syncedFrom, x.syncTried, x.countOffset = r.tag.Watermark, started, 0
	x.snap.opening = opening
	for _, op := range x.pending {
		x.applyLocked(t.Name, op)
	}
	x.pending = nil
	run := x.beginSyncLocked(false)
	x.mu.Unlock()
	if r.sem != nil {
		s := &x.sem
		s.mu.Lock()
		s.model, s.gen, s.chg, s.built, s.took = r.sem, 0, 0, time.Time{}, 0
		if r.semCurrent {
			gen, chg := x.ix.Version(t.Name)
			s.gen, s.chg, s.built = gen, chg, time.Now()
		}
		s.mu.Unlock()
	}

	res, err := x.runSync(ctx, t, run)
	x.mu.Lock()
	x.snap.opening = nil
	close(opening)
	if err != nil {
		// Throw the snapshot away: back to loading, as if it had never been read.
		x.state, x.pending = textLoading, nil
		x.mu.Unlock()
		x.sem.mu.Lock()
		x.sem.model = nil
		x.sem.mu.Unlock()
		t.c.countSnapshotLoad(SnapshotUnreconcil)
		t.c.log.Warn("index snapshot not caught up; rebuilding from Dgraph", "tenant", t.Name, "err", err)
		os.Remove(path)
		return false
	}
	gen, chg := x.ix.Version(t.Name)
	x.snap.gen, x.snap.chg, x.snap.from, x.snap.written = gen, chg, r.tag.Watermark, time.Now()
	x.mu.Unlock()
	t.c.countSnapshotLoad(SnapshotLoaded)
	t.c.log.Info("index snapshot loaded", "tenant", t.Name, "memories", len(r.memories), "vectors", r.vecs.len(),
		"added", res.added, "changed", res.changed, "removed", res.removed,
		"read", read.Round(time.Millisecond), "took", time.Since(started).Round(time.Millisecond))
	if res.added+res.changed+res.removed > 0 {
		t.snapshotSoon()
	}
	return true
}

// encodeMemories writes the held memories: id, content sha, document ids.
func encodeMemories(e *snapshot.Enc, memories map[string][]string, shas map[string]string) {
	e.Uvarint(uint64(len(memories)))
	for id, docs := range memories {
		e.String(id)
		e.String(shas[id])
		e.Uvarint(uint64(len(docs)))
		for _, d := range docs {
			e.String(d)
		}
	}
}

func decodeMemories(b []byte) (map[string][]string, map[string]string, error) {
	d := snapshot.NewDec(b)
	n := d.Count(3)
	memories, shas := make(map[string][]string, n), make(map[string]string, n)
	for range n {
		id, sha := d.String(), d.String()
		docs := make([]string, d.Count(1))
		for i := range docs {
			docs[i] = d.String()
		}
		if d.Err() != nil {
			break
		}
		memories[id] = docs
		if sha != "" {
			shas[id] = sha
		}
	}
	return memories, shas, d.Done()
}

// encodeSequences writes the memories held in sequences: id, sequence, position, chunk uids.
func encodeSequences(members []textdoc.Member) []byte {
	var e snapshot.Enc
	e.Uvarint(uint64(len(members)))
	for _, m := range members {
		e.String(m.ID)
		e.String(m.Place.Sequence)
		e.Uvarint(uint64(m.Place.Position))
		e.Uvarint(uint64(len(m.Refs)))
		for _, r := range m.Refs {
			e.Uvarint(r)
		}
	}
	return e.Bytes()
}

func decodeSequences(b []byte) (*textdoc.Sequences, error) {
	seqs := &textdoc.Sequences{}
	if b == nil {
		return seqs, nil
	}
	d := snapshot.NewDec(b)
	for range d.Count(4) {
		id, seq, pos := d.String(), d.String(), d.Int(knowmind.MaxSequencePosition)
		refs := make([]uint64, d.Count(1))
		for i := range refs {
			refs[i] = d.Uvarint()
		}
		if d.Err() != nil {
			break
		}
		seqs.Set(id, textdoc.Place{Sequence: seq, Position: pos}, refs)
	}
	return seqs, d.Done()
}

// encodeDump writes a bm25.Dump: the vocabularies, then the documents with term ids.
func encodeDump(dump bm25.Dump) []byte {
	var e snapshot.Enc
	e.Uvarint(uint64(len(dump.Corpora)))
	for _, c := range dump.Corpora {
		e.String(c.Lang)
		e.Uvarint(uint64(len(c.Terms)))
		for _, term := range c.Terms {
			e.String(term)
		}
	}
	e.Uvarint(uint64(len(dump.Docs)))
	for _, doc := range dump.Docs {
		e.String(doc.ID)
		e.Uvarint(uint64(doc.Corpus))
		e.Uvarint(doc.Ref)
		e.Uvarint(uint64(doc.Length))
		e.Uvarint(uint64(len(doc.Terms)))
		for i, id := range doc.Terms {
			e.Uvarint(uint64(id))
			e.Uvarint(uint64(doc.Freqs[i]))
		}
	}
	return e.Bytes()
}

func decodeDump(b []byte) (bm25.Dump, error) {
	d := snapshot.NewDec(b)
	var dump bm25.Dump
	dump.Corpora = make([]bm25.DumpCorpus, d.Count(2))
	for i := range dump.Corpora {
		c := bm25.DumpCorpus{Lang: d.String()}
		c.Terms = make([]string, d.Count(1))
		for j := range c.Terms {
			c.Terms[j] = d.String()
		}
		dump.Corpora[i] = c
	}
	dump.Docs = make([]bm25.DumpDoc, d.Count(5))
	for i := range dump.Docs {
		doc := bm25.DumpDoc{ID: d.String(), Corpus: d.Int(len(dump.Corpora)), Ref: d.Uvarint(), Length: uint32(d.Int(1 << 31))}
		n := d.Count(2)
		doc.Terms, doc.Freqs = make([]uint32, n), make([]uint32, n)
		for j := range n {
			doc.Terms[j], doc.Freqs[j] = uint32(d.Int(1<<31)), uint32(d.Int(1<<31))
		}
		dump.Docs[i] = doc
		if d.Err() != nil {
			break
		}
	}
	return dump, d.Done()
}

// encode writes the vectors held, by memory: dimension, then per memory its chunks' uids and
// vectors. Called with the text index's lock held (memories is its map).
// encode writes the vector set as held: the chunk uid of every slot, each memory's slots, then
// the vectors' blocks as rank.Blocks lays them out, so that reading them back copies whole
// blocks instead of placing each vector's components one by one.
func (s *vectorSet) encode(e *snapshot.Enc) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e.Uvarint(uint64(s.dim))
	e.Uvarint(uint64(len(s.uids)))
	for _, uid := range s.uids {
		e.Uvarint(uid)
	}
	e.Uvarint(uint64(len(s.byMemory)))
	for id, uids := range s.byMemory {
		e.String(id)
		e.Uvarint(uint64(len(uids)))
		for _, uid := range uids {
			e.Uvarint(uint64(s.slot[uid]))
		}
	}
	if s.vecs != nil {
		for _, blk := range s.vecs.Columns() {
			e.Float32s(blk)
		}
	}
}

func decodeVectors(b []byte) (*vectorSet, error) {
	d := snapshot.NewDec(b)
	s := vectorSet{dim: d.Int(1 << 16)}
	n := d.Count(1)
	if n > 0 && s.dim == 0 {
		return nil, fmt.Errorf("%w: %d vectors of no dimension", snapshot.ErrCorrupt, n)
	}
	s.uids, s.slot = make([]uint64, n), make(map[uint64]int, n)
	for i := range s.uids {
		uid := d.Uvarint()
		if _, dup := s.slot[uid]; dup && d.Err() == nil {
			return nil, fmt.Errorf("%w: chunk %d in two vector slots", snapshot.ErrCorrupt, uid)
		}
		s.uids[i], s.slot[uid] = uid, i
	}
	memories := d.Count(2)
	s.byMemory = make(map[string][]uint64, memories)
	for range memories {
		id := d.String()
		uids := make([]uint64, d.Count(1))
		for i := range uids {
			if slot := d.Int(n - 1); d.Err() == nil {
				uids[i] = s.uids[slot]
			}
		}
		if d.Err() != nil {
			break
		}
		s.byMemory[id] = uids
	}
	blocks := make([][]float32, 0, min((n+rank.BlockSize-1)/rank.BlockSize, d.Left()))
	for len(blocks) < cap(blocks) && d.Err() == nil {
		blocks = append(blocks, d.Float32s())
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	if n > 0 {
		var err error
		if s.vecs, err = rank.BlocksOf(s.dim, n, blocks); err != nil {
			return nil, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
		}
	}
	return &s, nil
}

func encodeWords(s wordvec.State) []byte {
	var e snapshot.Enc
	e.Uvarint(uint64(s.Cap))
	e.Varint(s.Docs)
	e.Float32s(s.Global)
	e.Float32s(s.Ctx)
	e.Uvarint(uint64(len(s.Terms)))
	for i, term := range s.Terms {
		e.String(term)
		e.Varint(int64(s.DF[i]))
		e.Varint(int64(s.Row[i]))
	}
	return e.Bytes()
}

func decodeWords(b []byte) (*wordvec.Model, error) {
	d := snapshot.NewDec(b)
	s := wordvec.State{Cap: d.Int(1 << 31), Docs: d.Varint(), Global: d.Float32s(), Ctx: d.Float32s()}
	n := d.Count(3)
	s.Terms, s.DF, s.Row = make([]string, n), make([]int32, n), make([]int32, n)
	for i := range n {
		s.Terms[i], s.DF[i], s.Row[i] = d.String(), int32(d.Varint()), int32(d.Varint())
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	m, err := wordvec.FromState(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return m, nil
}

func encodeSemantic(s semvec.State, current bool) []byte {
	var e snapshot.Enc
	flag := uint64(0)
	if current {
		flag = 1
	}
	e.Uvarint(flag)
	e.Uvarint(uint64(s.Dims))
	e.Uvarint(uint64(s.Built))
	e.Uvarint(uint64(len(s.Vocab)))
	for _, term := range s.Vocab {
		e.String(term)
	}
	e.Float32s(s.Words)
	e.Float32s(s.IDF)
	e.Float32s(s.Mean)
	e.Uvarint(uint64(len(s.Refs)))
	for _, r := range s.Refs {
		e.Uvarint(r)
	}
	e.Float32s(s.Docs)
	return e.Bytes()
}

func decodeSemantic(b []byte) (*semvec.Model, bool, error) {
	d := snapshot.NewDec(b)
	current := d.Uvarint() == 1
	s := semvec.State{Dims: d.Int(1 << 16), Built: d.Int(1 << 31)}
	s.Vocab = make([]string, d.Count(1))
	for i := range s.Vocab {
		s.Vocab[i] = d.String()
	}
	s.Words, s.IDF, s.Mean = d.Float32s(), d.Float32s(), d.Float32s()
	s.Refs = make([]uint64, d.Count(1))
	for i := range s.Refs {
		s.Refs[i] = d.Uvarint()
	}
	s.Docs = d.Float32s()
	if err := d.Done(); err != nil {
		return nil, false, err
	}
	m, err := semvec.FromState(s)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return m, current, nil
}
