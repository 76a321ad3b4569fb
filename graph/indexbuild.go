package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
)

// A background build of the HNSW index (Dgraph's runInBackground) is recorded as
// Meta.vector_index = "building <time asked for>" and as "built" only once Dgraph says it is
// done. Dgraph writes the predicate's new schema to disk only after the whole index is written;
// an alpha that dies midway comes back with the schema as before the alter (no index at all:
// similar_to fails with "not indexed"), and runs the build again only if it had not yet recorded
// the alter as applied (docs/dgraph-notes.md, "Background index builds"). So, while Meta says
// building:
//   - Chunk.embedding's schema without hnsw: the build was lost; it is asked for again.
//   - with hnsw, and an alpha's /health lists the predicate under "indexing": still building.
//   - with hnsw, not listed, and the index finds the oldest vectors: built.
//   - with hnsw, not listed, and none of the oldest vectors found: an index left partial (what
//     an earlier stop at 100k was read as); it is dropped and asked for again.
//
// A tenant opened while Meta says building gets a goroutine of the client (indexWatchers) that
// does this at once and then until the build ended, and records "built".

const embeddingPredicate = "Chunk.embedding"

// vectorIndexPoll is how often a watcher asks whether a build ended: two small requests per
// tenant being built.
const vectorIndexPoll = 2 * time.Second

// vectorIndexRequests bounds how often one watcher asks for a lost build again, so a build Dgraph
// keeps abandoning (it undoes the schema when a build fails) is not asked for forever; the next
// open of the tenant tries again.
const vectorIndexRequests = 3

func vectorIndexBuildingSince(t time.Time) string {
	return vectorIndexBuilding + " " + t.UTC().Format(time.RFC3339)
}

func isVectorIndexBuilding(state string) bool {
	return state == vectorIndexBuilding || strings.HasPrefix(state, vectorIndexBuilding+" ")
}

// requestVectorIndex asks Dgraph to build the HNSW index in the background and records that it
// is being built, with the time asked for.
func requestVectorIndex(ctx context.Context, dg *dgo.Dgraph) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = dg.Alter(ctx, &api.Operation{Schema: vectorIndexDQL, RunInBackground: true}); err == nil {
			return setMeta(ctx, dg, map[string]string{"Meta.vector_index": vectorIndexBuildingSince(time.Now())})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(200*(attempt+1)) * time.Millisecond):
		}
	}
	return fmt.Errorf("request vector index: %w", err)
}

// rerequestVectorIndex asks for a lost build again. An index still in the schema is dropped
// first (Dgraph builds nothing for an alter that changes nothing); Meta says dropped meanwhile,
// so a crash in between leaves it to the next open's schema alter.
func rerequestVectorIndex(ctx context.Context, dg *dgo.Dgraph, state vectorIndexState) error {
	if state == indexPartial {
		if err := dropVectorIndex(ctx, dg); err != nil {
			return err
		}
	}
	return requestVectorIndex(ctx, dg)
}

// vectorIndexState is what Dgraph says about the HNSW index of a namespace.
type vectorIndexState int

const (
	indexLost     vectorIndexState = iota // not in the schema: the build was lost (or never asked for)
	indexBuilding                         // in the schema, the alpha still builds it
	indexBuilt                            // in the schema, no build running, the oldest vectors found
	indexPartial                          // in the schema, no build running, none of the oldest vectors found
)

// vectorIndexNow asks Dgraph: the namespace's schema of Chunk.embedding (the hnsw tokenizer
// shows while building and once built, not after a lost build) and, when it has the index,
// each alpha's /health (which lists the predicates being indexed as "<namespace hex>-<name>").
func (c *Client) vectorIndexNow(ctx context.Context, ns uint64, dg *dgo.Dgraph) (vectorIndexState, error) {
	var sch struct {
		Schema []struct {
			Tokenizer []string `json:"tokenizer"`
		} `json:"schema"`
	}
	if err := queryInto(ctx, dg, `schema(pred: [Chunk.embedding]) { tokenizer }`, nil, &sch); err != nil {
		return 0, fmt.Errorf("read Chunk.embedding's schema: %w", err)
	}
	if len(sch.Schema) == 0 || !strings.Contains(strings.Join(sch.Schema[0].Tokenizer, ","), "hnsw") {
		return indexLost, nil
	}
	indexing, err := c.alphasIndexing(ctx)
	if err != nil {
		return 0, err
	}
	building := slices.Contains(indexing, fmt.Sprintf("%x-%s", ns, embeddingPredicate))
	if building {
		return indexBuilding, nil
	}
	found, err := oldestVectorsFound(ctx, dg)
	if err != nil {
		return 0, err
	}
	if !found {
		return indexPartial, nil
	}
	return indexBuilt, nil
}

// oldestVectorsFound asks the index for the vectors of the three oldest chunks (lowest uids:
// written before the build was asked for, so only the build indexes them; later writes are
// indexed as they come) and reports whether it finds at least one of them among the 10 nearest
// to its own vector. Dgraph builds the whole index in memory and writes it at the end, so a
// build that ended early holds none of them; a complete index misses a chunk's own vector
// rarely, all three practically never. A namespace without vectors counts as found.
func oldestVectorsFound(ctx context.Context, dg *dgo.Dgraph) (bool, error) {
	type vectors struct {
		V []struct {
			UID string    `json:"uid"`
			V   []float32 `json:"v"`
		} `json:"v"`
	}
	var oldest vectors
	if err := queryInto(ctx, dg, `{ v(func: has(Chunk.embedding), first: 3) { uid v: Chunk.embedding } }`, nil, &oldest); err != nil {
		return false, fmt.Errorf("read the oldest vectors: %w", err)
	}
	if len(oldest.V) == 0 {
		return true, nil
	}
	for _, c := range oldest.V {
		var near vectors
		if err := queryInto(ctx, dg, `query q($v: float32vector) { v(func: similar_to(Chunk.embedding, 10, $v)) { uid v: Chunk.embedding } }`,
			map[string]string{"$v": VectorString(c.V)}, &near); err != nil {
			return false, fmt.Errorf("probe the vector index: %w", err)
		}
		// The chunk itself, or one with the very same vector: with more than ten copies of a
		// text (a boilerplate section) a complete index may answer with the others.
		for _, n := range near.V {
			if n.UID == c.UID || slices.Equal(n.V, c.V) {
				return true, nil
			}
		}
	}
	return false, nil
}

// alphasIndexing lists the predicates (namespaced: "<namespace hex>-<name>") that the alphas
// answering /health are indexing. Plain /health needs no login; an alpha that does not answer
// builds nothing (a restarted alpha runs a build again at once or not at all).
func (c *Client) alphasIndexing(ctx context.Context) ([]string, error) {
	var lastErr error
	answered := false
	var out []string
	for _, addr := range c.httpAlphas() {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		indexing, err := c.alphaIndexing(ctx, addr)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		answered = true
		out = append(out, indexing...)
	}
	if !answered {
		return nil, fmt.Errorf("no alpha answered /health: %w", lastErr)
	}
	return out, nil
}

func (c *Client) alphaIndexing(ctx context.Context, addr string) ([]string, error) {
	if d := c.cfg.RPCTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("dgraph /health at %s: HTTP %d", addr, resp.StatusCode)
	}
	var health []struct {
		Indexing []string `json:"indexing"`
	}
	if err := json.Unmarshal(data, &health); err != nil {
		return nil, fmt.Errorf("dgraph /health at %s: %w", addr, err)
	}
	var out []string
	for _, h := range health {
		out = append(out, h.Indexing...)
	}
	return out, nil
}

// indexWatchers are the client's goroutines that wait for background index builds: at most one
// per namespace, all stopped by Client.Close. Client.Tenant starts one for a namespace whose Meta
// says building: it neither waits for the build nor fails the open (asking for a lost build
// again waits while any other build runs on the alpha, Dgraph refusing every alter meanwhile,
// and the index is a search structure).
type indexWatchers struct {
	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	running map[uint64]bool
	wg      sync.WaitGroup
}

func (w *indexWatchers) watch(c *Client, name string, ns uint64, dg *dgo.Dgraph) {
	if !c.cfg.WatchIndexBuilds {
		return // a short command: serve looks after the build
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithCancel(context.Background())
		w.running = map[uint64]bool{}
	}
	if w.running[ns] || w.ctx.Err() != nil {
		return
	}
	w.running[ns] = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() {
			w.mu.Lock()
			delete(w.running, ns)
			w.mu.Unlock()
		}()
		c.watchVectorIndex(w.ctx, name, ns, dg)
	}()
}

// stop ends every watcher and waits for them (Client.Close).
func (w *indexWatchers) stop() {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// watchVectorIndex asks Dgraph at once and then every vectorIndexPoll until the namespace's
// build ended, then records it built; a lost build (the alpha stopped midway, before or while
// watched) is asked for again, at most vectorIndexRequests times. It ends with ctx (the client
// closing): the next open of the tenant picks the build up again.
func (c *Client) watchVectorIndex(ctx context.Context, name string, ns uint64, dg *dgo.Dgraph) {
	started := time.Now()
	requests := 0
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-time.After(vectorIndexPoll):
			}
		}
		rec, err := schemaRecord(ctx, dg)
		if err != nil {
			continue // the alpha may be restarting
		}
		if !isVectorIndexBuilding(rec.vectorIndex) {
			return // dropped again by an import, or recorded built by another process
		}
		state, err := c.vectorIndexNow(ctx, ns, dg)
		if err != nil {
			if first {
				c.log.Warn("vector index: cannot tell whether its build ended; watching", "tenant", name, "err", err)
			}
			continue
		}
		switch state {
		case indexBuilt:
			if err := setMeta(ctx, dg, map[string]string{"Meta.vector_index": vectorIndexBuilt}); err != nil {
				continue
			}
			c.log.Info("vector index built", "tenant", name, "watched", time.Since(started).Round(time.Second).String())
			return
		case indexLost, indexPartial:
			// Dgraph refuses every alter while it builds any index (errIndexingInProgress, in
			// every namespace): wait for the alpha to be free rather than spend the requests.
			if indexing, err := c.alphasIndexing(ctx); err != nil || len(indexing) > 0 {
				continue
			}
			if requests == vectorIndexRequests {
				c.log.Warn("vector index build lost again; left to the next open", "tenant", name, "requests", requests)
				return
			}
			requests++
			c.log.Info("vector index build was lost (the alpha stopped midway); asking for it again",
				"tenant", name, "recorded", rec.vectorIndex, "schema_has_index", state == indexPartial)
			if err := rerequestVectorIndex(ctx, dg, state); err != nil {
				c.log.Warn("vector index: ask for the build again", "tenant", name, "err", err)
			}
		}
	}
}
