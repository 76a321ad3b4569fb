package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Each tenant namespace records which embedder wrote its vectors
// (Meta.embedder_id, Meta.embedder_dim). Vectors of two embedders are never
// mixed: a tenant opened with another embedder is refused until
// `knowmind reembed` has rewritten every chunk vector. A re-embedding keeps
// its progress in Meta.reembed_target / Meta.reembed_cursor so it resumes
// after a crash; while one is unfinished the tenant is refused too.

// EmbedderState is what a namespace records about its vectors.
type EmbedderState struct {
	ID            string `json:"Meta.embedder_id"`
	Dim           int    `json:"Meta.embedder_dim"`
	ReembedTarget string `json:"Meta.reembed_target"`
	ReembedCursor string `json:"Meta.reembed_cursor"`
}

// has() rather than eq(): it works before the schema (and its index) exists.
const metaQuery = `{ m(func: has(Meta.key)) {
  Meta.embedder_id Meta.embedder_dim Meta.reembed_target Meta.reembed_cursor } }`

func readEmbedderState(ctx context.Context, dg *dgo.Dgraph) (EmbedderState, error) {
	resp, err := dg.NewReadOnlyTxn().Query(ctx, metaQuery)
	if err != nil {
		return EmbedderState{}, fmt.Errorf("read embedder state: %w", err)
	}
	var out struct{ M []EmbedderState }
	if err := json.Unmarshal(resp.Json, &out); err != nil || len(out.M) == 0 {
		return EmbedderState{}, err
	}
	return out.M[0], nil
}

// checkEmbedder refuses a tenant whose vectors come from another embedder,
// and records the configured one on a tenant that has none yet.
func (c *Client) checkEmbedder(ctx context.Context, name string, dg *dgo.Dgraph) error {
	e := c.cfg.Embedder
	if e == nil {
		return nil
	}
	st, err := readEmbedderState(ctx, dg)
	if err != nil {
		return err
	}
	switch {
	case st.ID == "":
		return setMeta(ctx, dg, map[string]string{"Meta.embedder_id": e.ID(), "Meta.embedder_dim": strconv.Itoa(e.Dim())})
	case st.ID != e.ID():
		return knowmind.Errorf(knowmind.EUNAVAILABLE,
			"tenant %q holds vectors of embedder %s (%d dims) but the service is configured with %s (%d dims); "+
				"start with the original embedder, or run `knowmind reembed --tenant %s` to re-embed everything with the new one",
			name, st.ID, st.Dim, e.ID(), e.Dim(), name)
	}
	return nil
}

// setMeta sets predicates of the namespace's Meta node (created if missing).
func setMeta(ctx context.Context, dg *dgo.Dgraph, kv map[string]string) error {
	var nq strings.Builder
	nq.WriteString("uid(m) <Meta.key> \"knowmind\" .\nuid(m) <dgraph.type> \"Meta\" .\n")
	fmt.Fprintf(&nq, "uid(m) <Meta.updated_at> %q .\n", time.Now().UTC().Format(time.RFC3339Nano))
	for k, v := range kv {
		fmt.Fprintf(&nq, "uid(m) <%s> %s .\n", k, strconv.Quote(v))
	}
	req := &api.Request{
		Query:     `{ m as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{SetNquads: []byte(nq.String())}},
	}
	return runTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, req)
		return err
	})
}

// checkReembed refuses a tenant whose re-embedding is unfinished. It runs
// before the schema is applied, which would rebuild the dropped vector index
// over vectors of two embedders.
func checkReembed(ctx context.Context, name string, dg *dgo.Dgraph) error {
	st, err := readEmbedderState(ctx, dg)
	if err != nil {
		return err
	}
	if st.ReembedTarget != "" {
		return knowmind.Errorf(knowmind.EUNAVAILABLE,
			"tenant %q: re-embedding to %s is unfinished; run `knowmind reembed --tenant %s` to finish it", name, st.ReembedTarget, name)
	}
	return nil
}

// CheckTenants opens every tenant, so a service configured with the wrong
// embedder refuses to start instead of failing on the first request.
func (c *Client) CheckTenants(ctx context.Context) error {
	names, err := c.Tenants(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := c.Tenant(ctx, n, false); err != nil {
			return err
		}
	}
	return nil
}

// ReembedProgress is reported after every batch.
type ReembedProgress struct {
	Tenant      string
	Done, Total int
}

// Reembed rewrites every chunk vector of a tenant with the configured
// embedder. It drops the vector index first (a new embedder may have another
// dimension, and Dgraph's HNSW index takes its dimension from the first
// vector), rewrites the vectors in batches, each committed together with a
// cursor so a crash resumes where it stopped, then restores the index and
// records the new embedder. The service must not serve the tenant meanwhile;
// it refuses to while Meta.reembed_target is set.
func (c *Client) Reembed(ctx context.Context, name string, batch int, progress func(ReembedProgress)) error {
	e := c.cfg.Embedder
	if e == nil {
		return fmt.Errorf("reembed: no embedder configured")
	}
	if batch <= 0 {
		batch = 64
	}
	ns, found, err := c.lookupNamespace(ctx, name)
	if err != nil {
		return err
	}
	if !found {
		return knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q does not exist", name)
	}
	//lint:ignore SA1019 dgo.NewClient dials by itself; the sessions share these connections through failover
	dg := dgo.NewDgraphClient(c.failover)
	if err := retryLogin(ctx, func(ctx context.Context) error {
		return dg.LoginIntoNamespace(ctx, "groot", c.namespacePassword(name), ns)
	}); err != nil {
		return err
	}
	st, err := readEmbedderState(ctx, dg)
	if err != nil {
		return err
	}
	if st.ID == e.ID() && st.ReembedTarget == "" {
		return nil // already on this embedder
	}
	cursor := "0x0"
	if st.ReembedTarget == e.ID() && st.ReembedCursor != "" {
		cursor = st.ReembedCursor // resume
	} else {
		if err := setMeta(ctx, dg, map[string]string{"Meta.reembed_target": e.ID(), "Meta.reembed_cursor": cursor}); err != nil {
			return err
		}
	}
	if err := applySchemaOnly(ctx, dg, "<Chunk.embedding>: float32vector ."); err != nil {
		return err
	}

	total, done, err := chunkCounts(ctx, dg, cursor)
	if err != nil {
		return err
	}
	for {
		resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx,
			`query q($after: string, $n: int) { c(func: has(Chunk.text), first: $n, after: $after) { uid text: Chunk.text@. } }`,
			map[string]string{"$after": cursor, "$n": strconv.Itoa(batch)})
		if err != nil {
			return fmt.Errorf("reembed: read chunks: %w", err)
		}
		var page struct {
			C []struct {
				UID  string `json:"uid"`
				Text string `json:"text"`
			}
		}
		if err := json.Unmarshal(resp.Json, &page); err != nil {
			return err
		}
		if len(page.C) == 0 {
			break
		}
		texts := make([]string, len(page.C))
		for i, ch := range page.C {
			texts[i] = ch.Text
		}
		vecs, err := e.EmbedPassages(ctx, texts)
		if err != nil {
			return fmt.Errorf("reembed: embed: %w", err)
		}
		var nq strings.Builder
		for i, ch := range page.C {
			fmt.Fprintf(&nq, "<%s> <Chunk.embedding> %q .\n", ch.UID, VectorString(vecs[i]))
		}
		last := page.C[len(page.C)-1].UID
		fmt.Fprintf(&nq, "uid(m) <Meta.reembed_cursor> %q .\n", last)
		req := &api.Request{
			Query:     `{ m as var(func: eq(Meta.key, "knowmind")) }`,
			Mutations: []*api.Mutation{{SetNquads: []byte(nq.String())}},
		}
		if err := runTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
			_, err := txn.Do(ctx, req)
			return err
		}); err != nil {
			return fmt.Errorf("reembed: write batch: %w", err)
		}
		cursor = last
		done += len(page.C)
		if progress != nil {
			progress(ReembedProgress{Tenant: name, Done: done, Total: total})
		}
	}
	// Restore the vector index (Dgraph rebuilds it) and record the embedder.
	if err := applySchemaOnly(ctx, dg, vectorIndexDQL); err != nil {
		return err
	}
	if err := setMeta(ctx, dg, map[string]string{"Meta.embedder_id": e.ID(), "Meta.embedder_dim": strconv.Itoa(e.Dim())}); err != nil {
		return err
	}
	return deleteMeta(ctx, dg, "Meta.reembed_target", "Meta.reembed_cursor")
}

func chunkCounts(ctx context.Context, dg *dgo.Dgraph, cursor string) (total, done int, err error) {
	resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($after: string) { all(func: has(Chunk.text)) { count(uid) } left(func: has(Chunk.text), after: $after) { count(uid) } }`,
		map[string]string{"$after": cursor})
	if err != nil {
		return 0, 0, err
	}
	var out struct {
		All  []struct{ Count int } `json:"all"`
		Left []struct{ Count int } `json:"left"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return 0, 0, err
	}
	if len(out.All) > 0 {
		total = out.All[0].Count
	}
	left := total
	if len(out.Left) > 0 {
		left = out.Left[0].Count
	}
	return total, total - left, nil
}

func deleteMeta(ctx context.Context, dg *dgo.Dgraph, preds ...string) error {
	var nq strings.Builder
	for _, p := range preds {
		fmt.Fprintf(&nq, "uid(m) <%s> * .\n", p)
	}
	req := &api.Request{
		Query:     `{ m as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{DelNquads: []byte(nq.String())}},
	}
	return runTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, req)
		return err
	})
}

func applySchemaOnly(ctx context.Context, dg *dgo.Dgraph, dql string) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = dg.Alter(ctx, &api.Operation{Schema: dql}); err == nil {
			return nil
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
	return fmt.Errorf("alter schema: %w", err)
}

// vectorIndexDQL restores the vector index after a re-embedding; the same
// line as in schema/tenant.dql (checked by a test).
const vectorIndexDQL = `<Chunk.embedding>: float32vector @index(hnsw(metric:"cosine")) .`

// VectorString formats a vector the way dgo passes float32vector values.
func VectorString(v []float32) string {
	var b strings.Builder
	b.Grow(len(v) * 10)
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// dropVectorIndex removes the HNSW index of Chunk.embedding, keeping the vectors: a bulk load
// then writes without Dgraph updating the index per chunk (the write's main cost, see
// docs/bulk.md). restoreVectorIndex puts it back.
func dropVectorIndex(ctx context.Context, dg *dgo.Dgraph) error {
	if err := setMeta(ctx, dg, map[string]string{"Meta.vector_index": vectorIndexDropped}); err != nil {
		return err
	}
	return applySchemaOnly(ctx, dg, "<Chunk.embedding>: float32vector .")
}

// restoreVectorIndex adds the HNSW index of Chunk.embedding again and Dgraph builds it over the
// stored vectors. In the background (Dgraph's runInBackground) the call returns at once and
// writes go on; until the build ends similar_to answers from a partial index (fewer hits, no
// error). Recall does not depend on it while the service holds the tenant's vectors
// (vecindex.go); analysts' similar_to queries do. A background build is recorded as building
// until Dgraph says it ended (indexbuild.go); in the foreground the alter returns once it did.
func restoreVectorIndex(ctx context.Context, dg *dgo.Dgraph, background bool) error {
	if background {
		return requestVectorIndex(ctx, dg)
	}
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = dg.Alter(ctx, &api.Operation{Schema: vectorIndexDQL}); err == nil {
			return setMeta(ctx, dg, map[string]string{"Meta.vector_index": vectorIndexBuilt})
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
	return fmt.Errorf("restore vector index: %w", err)
}

// DropVectorIndex is dropVectorIndex on the tenant's namespace (knowmind import).
func (t *Tenant) DropVectorIndex(ctx context.Context) error { return dropVectorIndex(ctx, t.dg) }

// RestoreVectorIndex is restoreVectorIndex on the tenant's namespace (knowmind import); a
// client that watches builds (Config.WatchIndexBuilds) watches a background one until it ends,
// for as long as it is open.
func (t *Tenant) RestoreVectorIndex(ctx context.Context, background bool) error {
	if err := restoreVectorIndex(ctx, t.dg, background); err != nil {
		return err
	}
	if background {
		t.c.builds.watch(t.c, t.Name, t.Namespace, t.dg)
	}
	return nil
}
