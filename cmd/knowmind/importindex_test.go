package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind import with its own managed Dgraph (serve not running on the data dir) leaves the
// vector index dropped: stopping the alpha on exit would end a background build midway, and
// Dgraph does not resume one. The next process opening the tenant, as serve does, brings the
// index back (built in the background), records it as building and, once Dgraph built it, as built.
func TestImportWithItsOwnDgraphLeavesTheIndexToServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a managed Dgraph")
	}
	ctx := context.Background()
	dataDir, offset := t.TempDir(), freeOffset(t)
	vault := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"Acme.md": "# Acme\n\nCustomer since 2020, see [[Offer]].", "Offer.md": "Offer for [[Acme]]: 200 screws."} {
		if err := os.WriteFile(filepath.Join(vault, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := runImport(ctx, []string{vault, "--tenant", "imported", "--data-dir", dataDir,
		"--dgraph-port-offset", strconv.Itoa(offset), "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}

	// Opened without the embedder, which would check (open) every tenant: Meta is read first.
	b, err := openBackend(ctx, Config{DataDir: dataDir, DgraphPortOffset: offset, DgraphUser: "groot"}, newLogger("error"), opening{watchIndexBuilds: true}) // as serve
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cred, err := b.client.NamespaceCredentials(ctx, "imported")
	if err != nil {
		t.Fatal(err)
	}
	dg := dgraphtest.Login(t, cred, b.cluster.AlphaGRPC()...)
	state := func() string { return dgraphtest.VectorIndexState(t, dg) }
	if s := state(); s != "dropped" {
		t.Fatalf("after the import the vector index is recorded %q, want dropped", s)
	}
	if _, err := b.client.Tenant(ctx, "imported", false); err != nil {
		t.Fatal(err)
	}
	// Dgraph builds it in the background: Meta says building until Dgraph says the build ended,
	// then the client watching it records built.
	deadline := time.Now().Add(time.Minute)
	for s := state(); s != "built"; s = state() {
		if !strings.HasPrefix(s, "building ") || time.Now().After(deadline) {
			t.Fatalf("after serve's open the vector index is recorded %q, want building then built", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The index is back in the schema.
	for {
		var out struct {
			Schema []struct {
				Tokenizer []string `json:"tokenizer"`
			} `json:"schema"`
		}
		dgraphtest.QueryDG(t, dg, `schema(pred: [Chunk.embedding]) { tokenizer }`, nil, &out)
		if len(out.Schema) == 1 && strings.Contains(strings.Join(out.Schema[0].Tokenizer, ","), "hnsw") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chunk.embedding's schema after serve's open: %+v", out.Schema)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
