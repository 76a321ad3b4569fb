package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind/schema"
)

// applyTenantSchema applies the tenant schema plus one uid predicate per relation type, then
// records the schema version in the namespace's Meta node, and returns the version recorded
// before and Meta.vector_index as it stands after it ran (Client.Tenant looks after a build with
// it, indexbuild.go). It runs on every open and alters only when the schema differs from the
// one recorded (applySchema); adding a relation to a shape file and restarting adds its
// predicate and changes nothing else.
func applyTenantSchema(ctx context.Context, dg *dgo.Dgraph, relations []string) (before int, vectorIndex string, err error) {
	return applySchema(ctx, dg, tenantSchema(relations), "tenant")
}

func tenantSchema(relations []string) string {
	var b strings.Builder
	b.WriteString(schema.Tenant)
	b.WriteString("\n# relation predicates from shapes/\n")
	b.WriteString(RelationSchema(relations))
	return b.String()
}

// initNamespace applies the schema to a namespace this process has just created and records
// it, with the embedder, in one write, then reads that record back once. It reads nothing
// before the write: there is nothing to read yet (no re-embedding, no record, nothing to
// backfill or migrate). The one read after it is the settling: the first query after an alter
// that created predicates waits in the alpha until its cluster membership lists them (Dgraph's
// ChecksumsMatch, 0.6–0.8 s on a quiet machine, more under load; docs/dgraph-notes.md
// "Namespaces and ACL"), and that wait holds every query on the alpha, in every namespace —
// a never-seen token's lookup, which has one second (handlers' tokenLookupTimeout), included.
// Paying it here keeps it inside the tenant's creation, where the caller already waits, instead
// of in whichever request comes next. It reports false when the write did not commit (another
// process opening the tenant wrote its record concurrently); the caller then upgrades the
// namespace as any other, which reads what is recorded.
func (c *Client) initNamespace(ctx context.Context, t *Tenant) bool {
	dql := tenantSchema(c.cfg.Relations)
	if err := alterSchema(ctx, t.dg, dql, false); err != nil {
		c.log.Warn("new tenant's schema not applied; trying again as for an existing one", "tenant", t.Name, "err", err)
		return false
	}
	sum := sha256.Sum256([]byte(dql))
	var nq strings.Builder
	fmt.Fprintf(&nq, "_:m <Meta.key> \"knowmind\" .\n_:m <dgraph.type> \"Meta\" .\n_:m <Meta.updated_at> %q .\n",
		time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&nq, "_:m <Meta.schema_version> \"%d\" .\n_:m <Meta.schema_sha> %q .\n", schema.Version, hex.EncodeToString(sum[:]))
	if e := c.cfg.Embedder; e != nil {
		fmt.Fprintf(&nq, "_:m <Meta.embedder_id> %q .\n_:m <Meta.embedder_dim> \"%d\" .\n", e.ID(), e.Dim())
	}
	// One attempt, not runTxn: a retry of a blank node after an abort could add a second Meta
	// node beside the one that won.
	if _, err := t.dg.NewTxn().Mutate(ctx, &api.Mutation{SetNquads: []byte(nq.String()), CommitNow: true}); err != nil {
		c.log.Warn("new tenant's record not written; trying again as for an existing one", "tenant", t.Name, "err", err)
		return false
	}
	if rec, err := schemaRecord(ctx, t.dg); err != nil || rec.version != schema.Version {
		// The record was committed; a read that fails here only leaves the wait to the next one.
		c.log.Warn("new tenant's record not read back", "tenant", t.Name, "version", rec.version, "err", err)
	}
	return true
}

// RelationSchema is the DQL for relation predicates: [uid] with @reverse, so
// incoming edges are one traversal away, and @count for degree queries.
// Edge facets (id, created_at, valid_from, valid_to) need no declaration.
func RelationSchema(relations []string) string {
	var b strings.Builder
	for _, r := range relations {
		fmt.Fprintf(&b, "<%s>: [uid] @reverse @count .\n", r)
	}
	return b.String()
}

// applySchema alters the namespace's schema to dql unless the Meta node records that exactly
// this schema (its sha-256) was applied at this version. Skipping matters beyond start-up time:
// Dgraph refuses or holds an alter while an index is being rebuilt — after a bulk import the
// tenant's HNSW index rebuilds in the background for minutes, and every process opening the
// tenant meanwhile would wait for it.
// It returns the schema version recorded before it ran and Meta.vector_index after.
func applySchema(ctx context.Context, dg *dgo.Dgraph, dql, which string) (int, string, error) {
	sum := sha256.Sum256([]byte(dql))
	sha := hex.EncodeToString(sum[:])
	// A record that cannot be read counts as none: the schema is applied, as to a store without one.
	rec, err := schemaRecord(ctx, dg)
	if err == nil && rec.version == schema.Version && rec.sha == sha && rec.vectorIndex != vectorIndexDropped {
		return rec.version, rec.vectorIndex, nil
	}
	// Alter can fail transiently right after start ("Please retry"), and
	// concurrent alters conflict: retry a few times.
	// A dropped vector index (an import that ended without restoring it) comes back with this
	// alter; Dgraph builds it in the background, as the import would have: in the foreground the
	// open would wait for the whole build (more than 20 minutes at 100k memories).
	background := rec.vectorIndex == vectorIndexDropped
	if err := alterSchema(ctx, dg, dql, background); err != nil {
		return 0, "", fmt.Errorf("apply %s schema: %w", which, err)
	}
	if background {
		// The schema brought the index back (an import killed before restoring it, or one that
		// ran its own managed Dgraph and left the build to the next process). Dgraph builds it
		// from now on: "built" is recorded once it says so (indexbuild.go).
		rec.vectorIndex = vectorIndexBuildingSince(time.Now())
		if err := setMeta(ctx, dg, map[string]string{"Meta.vector_index": rec.vectorIndex}); err != nil {
			return 0, "", err
		}
	}
	return rec.version, rec.vectorIndex, recordSchema(ctx, dg, schema.Version, sha)
}

// alterSchema alters the namespace's schema to dql. Alter can fail transiently right after
// start ("Please retry"), while an index builds, and when alters conflict: it tries 20 times.
func alterSchema(ctx context.Context, dg *dgo.Dgraph, dql string, background bool) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = dg.Alter(ctx, &api.Operation{Schema: dql, RunInBackground: background}); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
	return err
}

// recordSchema upserts the namespace's Meta node (key "knowmind") with the schema version and
// the sha-256 of the schema text applied ("": none known, the next open applies it again).
func recordSchema(ctx context.Context, dg *dgo.Dgraph, version int, sha string) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	req := &api.Request{
		Query: `{ m as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{SetNquads: []byte(fmt.Sprintf(
			"uid(m) <Meta.key> \"knowmind\" .\nuid(m) <Meta.schema_version> \"%d\" .\nuid(m) <Meta.schema_sha> %q .\nuid(m) <Meta.updated_at> %q .\nuid(m) <dgraph.type> \"Meta\" .",
			version, sha, now))}},
	}
	return runTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, req)
		return err
	})
}

// Meta.vector_index: "dropped" while a bulk import runs without the HNSW index (DropVectorIndex),
// "building <time asked for>" while Dgraph builds it in the background, "built" once Dgraph says
// the build ended (indexbuild.go). A tenant opened while it says dropped gets its schema applied
// again, which restores the index an import killed midway could not; one opened while it says
// building gets a build that an alpha lost (stopped midway) asked for again.
const (
	vectorIndexDropped  = "dropped"
	vectorIndexBuilding = "building"
	vectorIndexBuilt    = "built"
)

// schemaRecordData is what a namespace's Meta node records about its schema.
type schemaRecordData struct {
	version     int
	sha         string
	vectorIndex string
}

// schemaRecord reads the recorded schema version, schema sha and vector index state of a
// namespace (zero values if none).
func schemaRecord(ctx context.Context, dg *dgo.Dgraph) (schemaRecordData, error) {
	resp, err := dg.NewReadOnlyTxn().Query(ctx, `{ m(func: eq(Meta.key, "knowmind")) { Meta.schema_version Meta.schema_sha Meta.vector_index } }`)
	if err != nil {
		return schemaRecordData{}, err
	}
	var out struct {
		M []struct {
			V   int    `json:"Meta.schema_version"`
			SHA string `json:"Meta.schema_sha"`
			VI  string `json:"Meta.vector_index"`
		} `json:"m"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil || len(out.M) == 0 {
		return schemaRecordData{}, err
	}
	return schemaRecordData{out.M[0].V, out.M[0].SHA, out.M[0].VI}, nil
}
