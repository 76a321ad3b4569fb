package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/snapshot"
	"github.com/knowmind/knowmind/textdoc"
	"github.com/knowmind/knowmind/wordvec"
)

// Opening a tenant's snapshot (its first load): read and decode the file, check it against the
// store, install it and catch it up (snapshot.go says when; snapshotcodec.go how each cache is
// encoded).

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
	semPartial   bool
	ahead        *syncAhead    // the catch-up's first reads, done during the decode
	decoded      time.Duration // reading and decoding the file
	waited       time.Duration // after it, for the store's answers
}

// errSnapshotStale and errSnapshotUnreconciled sort a snapshot's rejection into its result.
var (
	errSnapshotStale        = errors.New("snapshot is of something else")
	errSnapshotUnreconciled = errors.New("snapshot disagrees with the store")
)

// readSnapshot reads, checks and decodes the tenant's snapshot, and compares a sample of it
// with the store. The error's kind is its result (snapshotResult). What it asks the store needs
// none of the decoded caches but the memories' ids, so it runs while the file is read and
// decoded: the sample's query as soon as the memories are in, the catch-up's first reads
// (readAhead, in res.ahead) from the start.
func (t *Tenant) readSnapshot(ctx context.Context) (*restored, error) {
	r, err := snapshot.Open(t.snapshotPath(), t.c.snapshotKey())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Tag().Matches(t.snapshotTag()); err != nil {
		return nil, fmt.Errorf("%w: %v", errSnapshotStale, err)
	}
	storeCtx, cancel := context.WithCancel(ctx)
	defer cancel() // a query still running when the file is refused
	started := time.Now()
	ahead := make(chan *syncAhead, 1)
	go func() { ahead <- t.readAhead(storeCtx, started, r.Tag().Watermark.Add(-textSyncSlack), false) }()
	sampled := make(chan sampleAnswer, 1)
	res, err := decodeSnapshot(r, func(memories map[string][]string, shas map[string]string) {
		go func() { sampled <- t.querySample(storeCtx, memories, shas) }()
	})
	if err != nil {
		return nil, err
	}
	decoded := time.Now()
	if err := res.checkSample(<-sampled); err != nil {
		return nil, err
	}
	res.ahead = <-ahead
	res.decoded, res.waited = decoded.Sub(started), time.Since(decoded)
	return res, nil
}

// Sections of a snapshot, in the order they are written: the largest decodes first, so that
// they run while the vectors, which need no decoding, are read.
const (
	sectionText         = "text"
	sectionMemories     = "memories"
	sectionTitles       = "titles"
	sectionWords        = "words"
	sectionSemantic     = "semantic"  // absent when no model was built
	sectionSequences    = "sequences" // absent when no memory had a place in a sequence
	sectionVectors      = "vectors"
	sectionVectorBlocks = "vector-blocks"
)

// decodeSnapshot reads r's sections in order and decodes each on a goroutine of its own as soon
// as its bytes are in, while the next ones are read; the vectors are read straight into their
// blocks. Opening is bound by reading the file or by the largest decode, whichever is longer.
// memoriesIn, when not nil, is called with the memories and their content shas as soon as they
// are decoded (the store's sample check asks for some of them meanwhile); it is called whenever
// decodeSnapshot succeeds.
func decodeSnapshot(r *snapshot.Reader, memoriesIn func(memories map[string][]string, shas map[string]string)) (*restored, error) {
	have := map[string]bool{}
	for _, s := range r.Sections() {
		have[s.Name] = true
	}
	for _, name := range []string{sectionMemories, sectionText, sectionTitles, sectionVectors, sectionVectorBlocks, sectionWords} {
		if !have[name] {
			return nil, fmt.Errorf("%w: no %s section", snapshot.ErrCorrupt, name)
		}
	}
	res := &restored{tag: r.Tag(), seqs: &textdoc.Sequences{}}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		slots *vectorSet
		vecs  *rank.Blocks
		dim   int
	)
	decode := func(fn func() error) {
		wg.Go(func() {
			if err := fn(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	for {
		s, err := r.Next()
		if err == io.EOF {
			break
		}
		if err == nil && s.Name == sectionVectorBlocks {
			vecs, dim, err = readVectorBlocks(r, s.Size)
		}
		if err != nil {
			wg.Wait()
			return nil, err
		}
		if s.Name == sectionVectorBlocks {
			continue
		}
		b := make([]byte, s.Size)
		if _, err := io.ReadFull(r, b); err != nil {
			wg.Wait()
			return nil, err
		}
		switch s.Name {
		case sectionMemories:
			decode(func() (err error) {
				if res.memories, res.shas, err = decodeMemories(b); err == nil && memoriesIn != nil {
					memoriesIn(res.memories, res.shas)
				}
				return
			})
		case sectionText:
			decode(func() (err error) { res.text, err = decodeIndex(b); return })
		case sectionTitles:
			decode(func() (err error) { res.titles, err = decodeIndex(b); return })
		case sectionWords:
			decode(func() (err error) { res.words, err = decodeWords(b); return })
		case sectionSemantic:
			decode(func() (err error) { res.sem, res.semCurrent, res.semPartial, err = decodeSemantic(b); return })
		case sectionSequences:
			decode(func() (err error) { res.seqs, err = decodeSequences(b); return })
		case sectionVectors:
			decode(func() (err error) { slots, err = decodeVectorSlots(b); return })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(res.memories) != res.tag.Memories {
		return nil, fmt.Errorf("%w: %d memories, tagged %d", snapshot.ErrCorrupt, len(res.memories), res.tag.Memories)
	}
	if err := slots.join(vecs, dim); err != nil {
		return nil, err
	}
	res.vecs = slots
	return res, nil
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

// sampleAnswer is the store's answer for a sample of a snapshot's memories (querySample).
type sampleAnswer struct {
	M []struct {
		ID     string  `json:"Memory.id"`
		SHA    string  `json:"Memory.content_sha"`
		Chunks []dgUID `json:"Memory.chunks"`
	} `json:"m"`
	err error
}

// querySample reads from the store up to snapshotSample of the snapshot's memories, spread over
// their ids (checkSample compares them).
func (t *Tenant) querySample(ctx context.Context, memories map[string][]string, shas map[string]string) sampleAnswer {
	var res sampleAnswer
	ids := make([]string, 0, len(memories))
	for id := range memories {
		if shas[id] != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return res
	}
	slices.Sort(ids)
	var sample []string
	step := max(1, len(ids)/snapshotSample)
	for i := 0; i < len(ids) && len(sample) < snapshotSample; i += step {
		sample = append(sample, ids[i])
	}
	if err := t.queryVars(ctx, fmt.Sprintf(sampleSnapshotQuery, quoteAll(sample)), nil, &res); err != nil {
		res.err = fmt.Errorf("%w: sample: %v", errSnapshotUnreconciled, err)
	}
	return res
}

// checkSample compares the store's answer for the sample with the snapshot: a memory the store
// holds at the same content sha must have the chunks the snapshot holds for it (the same uids).
// Memories deleted or changed since are the catch-up's business.
func (r *restored) checkSample(ans sampleAnswer) error {
	if ans.err != nil {
		return ans.err
	}
	for _, m := range ans.M {
		if m.SHA == "" || m.SHA != r.shas[m.ID] {
			continue
		}
		want := map[uint64]bool{}
		for _, doc := range r.memories[m.ID] {
			if ref, _ := r.text.Ref(doc); ref != 0 {
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

// snapshotOpenTestHook, when set by a test, is called once a snapshot is read, checked and the
// catch-up's first reads are done, before it is installed (the hooks' writes are still queued).
var snapshotOpenTestHook func(tenant string)

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
	if snapshotOpenTestHook != nil {
		snapshotOpenTestHook(t.Name)
	}

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
	// The reads done during the decode are this catch-up's when nothing was written meanwhile;
	// writes the hooks queued make it read again, after them.
	quiet := len(x.pending) == 0
	for _, op := range x.pending {
		x.applyLocked(t.Name, op)
	}
	x.pending = nil
	run := x.beginSyncLocked(false)
	if a := r.ahead; quiet && a.err == nil && a.since.Equal(run.since) {
		run.started, run.ahead = a.started, a
		x.syncTried = a.started
	} else {
		r.ahead.txn.Discard(ctx)
	}
	x.mu.Unlock()
	if r.sem != nil {
		s := &x.sem
		s.mu.Lock()
		s.model, s.gen, s.chg, s.built, s.took = r.sem, 0, 0, time.Time{}, 0
		if r.semCurrent {
			gen, chg := x.ix.Version(t.Name)
			s.gen, s.chg, s.built = gen, chg, time.Now()
		}
		// A partial model serves until the first recall's repair (semModel) replaces it: this
		// process has not tried its links yet.
		s.partial, s.repairs, s.repairAt = r.semPartial, 0, time.Time{}
		s.mu.Unlock()
	}

	caughtUp := time.Now()
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
	x.snap.semPartial = r.sem != nil && r.semPartial
	// The catch-up read the change watermark in a transaction begun after run.started: it is a
	// check from then, so the first recall does not read the watermark again (fresh).
	if run.started.After(x.watch.covered) {
		x.watch.checked, x.watch.covered = run.started, run.started
	}
	x.mu.Unlock()
	t.c.countSnapshotLoad(SnapshotLoaded)
	t.c.log.Info("index snapshot loaded", "tenant", t.Name, "memories", len(r.memories), "vectors", r.vecs.len(),
		"added", res.added, "changed", res.changed, "removed", res.removed,
		"decoded", r.decoded.Round(time.Millisecond), "store", r.waited.Round(time.Millisecond), "read", read.Round(time.Millisecond),
		"catchup", time.Since(caughtUp).Round(time.Millisecond), "ahead", run.ahead != nil, "took", time.Since(started).Round(time.Millisecond))
	if res.added+res.changed+res.removed > 0 {
		t.snapshotSoon()
	}
	return true
}
