package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
)

func openWith(t testing.TB, e graph.Embedder) *graph.Client {
	t.Helper()
	env := dgraphtest.Shared(t)
	c, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A tenant written with one embedder is refused under another until
// `reembed` has rewritten its vectors; afterwards vector search works at the
// new dimension.
func TestEmbedderMismatchRefusedThenReembed(t *testing.T) {
	ctx := context.Background()
	e384, _ := embed.NewHash(384)
	e128, _ := embed.NewHash(128)
	old := openWith(t, e384)
	name := dgraphtest.TenantName(t)
	ten, err := old.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Einarbeitung neuer Mitarbeiter", "Tarif Business mit fünf Plätzen", "QM-Schulung jährlich"}
	vecs, _ := e384.EmbedPassages(ctx, texts)
	var nq strings.Builder
	for i, tx := range texts {
		fmt.Fprintf(&nq, "_:c%d <Chunk.text> %q .\n_:c%d <Chunk.embedding> %q .\n_:c%d <dgraph.type> \"Chunk\" .\n", i, tx, i, graph.VectorString(vecs[i]), i)
	}
	dgraphtest.SetNquads(t, ten, nq.String())

	neu := openWith(t, e128)
	_, err = neu.Tenant(ctx, name, false)
	if knowmind.ErrorCode(err) != knowmind.EUNAVAILABLE || !strings.Contains(err.Error(), "knowmind reembed") {
		t.Fatalf("open with another embedder: err = %v, want refusal naming reembed", err)
	}

	var last graph.ReembedProgress
	if err := neu.Reembed(ctx, name, 2, func(p graph.ReembedProgress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Done != 3 || last.Total != 3 {
		t.Fatalf("progress = %+v, want 3/3", last)
	}
	ten2, err := neu.Tenant(ctx, name, false)
	if err != nil {
		t.Fatalf("open after reembed: %v", err)
	}
	q, _ := e128.EmbedQuery(ctx, "Tarif Business")
	resp, err := dgraphtest.DG(t, ten2).NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($v: float32vector) { s(func: similar_to(Chunk.embedding, 1, $v)) { Chunk.text } }`,
		map[string]string{"$v": graph.VectorString(q)})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		S []struct {
			Text string `json:"Chunk.text"`
		}
	}
	json.Unmarshal(resp.Json, &out)
	if len(out.S) != 1 || !strings.Contains(out.S[0].Text, "Tarif") {
		t.Fatalf("vector search after reembed: %s", resp.Json)
	}
	// And the old embedder is now the one refused.
	old2 := openWith(t, e384)
	if _, err := old2.Tenant(ctx, name, false); knowmind.ErrorCode(err) != knowmind.EUNAVAILABLE {
		t.Fatalf("old embedder after reembed: err = %v, want refusal", err)
	}
}

// reembed restores exactly the vector index the schema declares.
func TestReembedRestoresTheSchemaVectorIndex(t *testing.T) {
	if !strings.Contains(schema.Tenant, graph.VectorIndexDQL) {
		t.Fatalf("schema/tenant.dql does not contain %s", graph.VectorIndexDQL)
	}
}
