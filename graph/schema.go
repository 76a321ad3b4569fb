package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind/schema"
)

// ApplyTenantSchema applies the tenant schema plus one uid predicate per
// relation type, then records the schema version in the namespace's Meta
// node. Alter is idempotent, so this runs on every start; adding a relation
// to a shape file and restarting adds its predicate and changes nothing else.
func ApplyTenantSchema(ctx context.Context, dg *dgo.Dgraph, relations []string) error {
	var b strings.Builder
	b.WriteString(schema.Tenant)
	b.WriteString("\n# relation predicates from shapes/\n")
	b.WriteString(RelationSchema(relations))
	return applySchema(ctx, dg, b.String(), "tenant")
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

func applySchema(ctx context.Context, dg *dgo.Dgraph, dql, which string) error {
	var err error
	// Alter can fail transiently right after start ("Please retry"), and
	// concurrent alters conflict: retry a few times.
	for attempt := 0; attempt < 20; attempt++ {
		if err = dg.Alter(ctx, &api.Operation{Schema: dql}); err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("apply %s schema: %w", which, err)
	}
	return recordSchemaVersion(ctx, dg, schema.Version)
}

// recordSchemaVersion upserts the namespace's Meta node (key "knowmind").
func recordSchemaVersion(ctx context.Context, dg *dgo.Dgraph, version int) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	req := &api.Request{
		Query: `{ m as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{SetNquads: []byte(fmt.Sprintf(
			"uid(m) <Meta.key> \"knowmind\" .\nuid(m) <Meta.schema_version> \"%d\" .\nuid(m) <Meta.updated_at> %q .\nuid(m) <dgraph.type> \"Meta\" .",
			version, now))}},
	}
	return RunTxn(ctx, dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, req)
		return err
	})
}

// SchemaVersion reads the recorded schema version of a namespace (0 if none).
func SchemaVersion(ctx context.Context, dg *dgo.Dgraph) (int, error) {
	resp, err := dg.NewReadOnlyTxn().Query(ctx, `{ m(func: eq(Meta.key, "knowmind")) { Meta.schema_version } }`)
	if err != nil {
		return 0, err
	}
	var out struct {
		M []struct {
			V int `json:"Meta.schema_version"`
		} `json:"m"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil || len(out.M) == 0 {
		return 0, err
	}
	return out.M[0].V, nil
}
