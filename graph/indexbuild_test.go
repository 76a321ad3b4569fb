package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// A build Dgraph lost leaves Chunk.embedding without its index (Dgraph writes the new schema
// only once the build is done, and an alpha that had recorded the alter as applied does not
// run it again after a restart) while Meta says building. The next open asks for the index
// again, logs it, and records built once Dgraph built it: similar_to then finds the vectors
// written before.
func TestLostVectorIndexBuildIsAskedForAgain(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	if err := ten.DropVectorIndex(ctx); err != nil {
		t.Fatal(err)
	}
	first := writeRandomVectors(t, ten, 200)
	// What the alpha leaves after a lost build: the schema without the index, Meta building.
	dgraphtest.Upsert(t, ten, `{ m as var(func: eq(Meta.key, "knowmind")) }`, nil,
		`uid(m) <Meta.vector_index> "building 2026-01-02T03:04:05Z" .`)
	if err := similarTo(ctx, dgraphtest.DG(t, ten), first); err == nil || !strings.Contains(err.Error(), "not indexed") {
		t.Fatalf("similar_to before the open: %v, want not indexed", err)
	}

	logs := openUntilBuilt(t, ten, first, 30*time.Second)
	if !strings.Contains(logs, "level=INFO msg=\"vector index build was lost") ||
		!strings.Contains(logs, "tenant="+ten.Name) {
		t.Errorf("no info line about the lost build: %s", logs)
	}
}

// A background build is recorded as building until Dgraph ended it, also when the alpha is
// killed midway: whether Dgraph runs the build again after the restart (it does while it had
// not yet recorded the alter as applied, within about a minute) or lost it, the next open ends
// with the index built and recorded so.
func TestVectorIndexBuildSurvivesAKilledAlpha(t *testing.T) {
	env := dgraphtest.Shared(t)
	if env.Cluster == nil {
		t.Skip("kills the harness's own alpha")
	}
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	if err := ten.DropVectorIndex(ctx); err != nil {
		t.Fatal(err)
	}
	first := writeRandomVectors(t, ten, 1000)
	if err := ten.RestoreVectorIndex(ctx, true); err != nil {
		t.Fatal(err)
	}
	if s := vectorIndexState(t, ten); !strings.HasPrefix(s, "building ") {
		t.Fatalf("right after asking for the build Meta says %q, want building <time>", s)
	}
	time.Sleep(time.Second)
	killAlpha(t)
	// Said for the record: whether the restarted alpha runs the build again (the schema shows
	// the index while it builds) or lost it (no index in the schema).
	var sch struct {
		Schema []struct {
			Tokenizer []string `json:"tokenizer"`
		} `json:"schema"`
	}
	dgraphtest.Query(t, ten, `schema(pred: [Chunk.embedding]) { tokenizer }`, nil, &sch)
	t.Logf("after the restart Chunk.embedding's schema: %+v", sch.Schema)
	c := openClient(t, nil)
	if _, err := c.Tenant(ctx, ten.Name, false); err != nil {
		t.Fatal(err)
	}
	waitVectorIndexBuilt(t, ten, time.Minute)
	if err := similarTo(ctx, dgraphtest.DG(t, ten), first); err != nil {
		t.Fatalf("similar_to after the build: %v", err)
	}
}

// The same with the build lost: the restarted alpha keeps Chunk.embedding without the index and
// builds nothing; the next open asks for the index again. The alpha loses a build when killed
// after it recorded the alter as applied, which it does about once a minute, and not always
// then: the test kills it 20-45 s into a build, up to three times, and skips if the alpha ran
// the build again each time. Slow (one to six minutes), so only with KNOWMIND_TEST_LOST_BUILD=1.
func TestVectorIndexBuildLostByAKilledAlpha(t *testing.T) {
	env := dgraphtest.Shared(t)
	if env.Cluster == nil || os.Getenv("KNOWMIND_TEST_LOST_BUILD") == "" {
		t.Skip("kills the harness's own alpha a minute into a build; set KNOWMIND_TEST_LOST_BUILD=1")
	}
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	if err := ten.DropVectorIndex(ctx); err != nil {
		t.Fatal(err)
	}
	first := writeRandomVectors(t, ten, 4000)
	lost := false
	for attempt := 1; attempt <= 3 && !lost; attempt++ {
		// The alpha records its raft progress about 60·k + 4 s into its uptime: ask for the
		// build 10 s before that, kill it once the record is 10 s behind. No watcher in this
		// process (the package function): it would ask for the lost build again at once.
		for alphaUptime(t)%60 != 54 {
			time.Sleep(300 * time.Millisecond)
		}
		if err := graph.RestoreVectorIndex(ctx, dgraphtest.DG(t, ten), true); err != nil {
			t.Fatal(err)
		}
		for up := alphaUptime(t); up%60 < 14 || up%60 > 40; up = alphaUptime(t) {
			time.Sleep(300 * time.Millisecond)
		}
		if !alphaIndexing(t) {
			t.Skip("the build ended before the alpha recorded the alter as applied: more vectors needed on this machine")
		}
		killAlpha(t)
		time.Sleep(3 * time.Second)
		if lost = !alphaIndexing(t); lost {
			break
		}
		t.Logf("attempt %d: the restarted alpha runs the build again", attempt)
		deadline := time.Now().Add(3 * time.Minute)
		for alphaIndexing(t) {
			if time.Now().After(deadline) {
				t.Fatal("the build did not end")
			}
			time.Sleep(time.Second)
		}
		if err := ten.DropVectorIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !lost {
		t.Skip("three kills, the alpha ran the build again each time")
	}
	if err := similarTo(ctx, dgraphtest.DG(t, ten), first); err == nil || !strings.Contains(err.Error(), "not indexed") {
		t.Fatalf("similar_to after the restart: %v, want not indexed (the build lost)", err)
	}
	if s := vectorIndexState(t, ten); !strings.HasPrefix(s, "building ") {
		t.Fatalf("after the restart Meta says %q, want building <time>", s)
	}

	if logs := openUntilBuilt(t, ten, first, 3*time.Minute); !strings.Contains(logs, "vector index build was lost") {
		t.Errorf("no line about the lost build: %s", logs)
	}
}

// openUntilBuilt opens ten in a client of its own (a process starting, logging at info), waits
// until Meta records the index built and checks that similar_to finds first; it returns the
// client's log.
func openUntilBuilt(t *testing.T, ten *graph.Tenant, first vectorChunk, timeout time.Duration) string {
	t.Helper()
	ctx := context.Background()
	var logs syncBuffer
	c := openClient(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if _, err := c.Tenant(ctx, ten.Name, false); err != nil {
		t.Fatal(err)
	}
	waitVectorIndexBuilt(t, ten, timeout)
	if err := similarTo(ctx, dgraphtest.DG(t, ten), first); err != nil {
		t.Fatalf("similar_to after the build: %v", err)
	}
	return logs.String()
}

// killAlpha SIGKILLs the harness's alpha and waits until its supervisor restarted it.
func killAlpha(t *testing.T) {
	t.Helper()
	env := dgraphtest.Shared(t)
	old := env.Cluster.Pid("alpha1")
	if err := env.Cluster.Kill("alpha1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for env.Cluster.Pid("alpha1") == old || !env.Cluster.Healthy() {
		if time.Now().After(deadline) {
			t.Fatal("alpha not restarted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alphaUptime is the harness alpha's uptime in seconds, from its /health.
func alphaUptime(t *testing.T) int {
	t.Helper()
	var h []struct {
		Uptime int `json:"uptime"`
	}
	alphaHealth(t, &h)
	return h[0].Uptime
}

// alphaIndexing reports whether the harness alpha builds an index.
func alphaIndexing(t *testing.T) bool {
	t.Helper()
	var h []struct {
		Indexing []string `json:"indexing"`
	}
	alphaHealth(t, &h)
	return len(h[0].Indexing) > 0
}

func alphaHealth(t *testing.T, out any) {
	t.Helper()
	resp, err := http.Get("http://" + dgraphtest.Shared(t).HTTP[0] + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// openClient opens a second client on the package's Dgraph (a process opening the tenant
// anew), closed when t ends.
func openClient(t *testing.T, log *slog.Logger) *graph.Client {
	t.Helper()
	env := dgraphtest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := graph.Open(ctx, graph.Config{
		Alphas: env.Alphas, AlphasHTTP: env.HTTP, User: "groot", Password: env.Password,
		Secret: env.Secret, Embedder: env.Embedder, Logger: log, WatchIndexBuilds: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type vectorChunk struct {
	uid, vector string
}

// writeRandomVectors writes n chunks with random 384-dimensional vectors and returns the first.
func writeRandomVectors(t *testing.T, ten *graph.Tenant, n int) vectorChunk {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dg := dgraphtest.DG(t, ten)
	rng := rand.New(rand.NewSource(1))
	var first vectorChunk
	for b := 0; b < n; b += 500 {
		var nq strings.Builder
		for i := b; i < min(b+500, n); i++ {
			v := make([]float32, 384)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
			s := graph.VectorString(v)
			if i == 0 {
				first.vector = s
			}
			fmt.Fprintf(&nq, "_:c%d <Chunk.embedding> %q .\n_:c%d <dgraph.type> \"Chunk\" .\n", i, s, i)
		}
		resp, err := dg.NewTxn().Mutate(ctx, &api.Mutation{SetNquads: []byte(nq.String()), CommitNow: true})
		if err != nil {
			t.Fatal(err)
		}
		if b == 0 {
			first.uid = resp.Uids["c0"]
		}
	}
	return first
}

// similarTo asks the HNSW index for the chunk's own vector: an error unless it finds the chunk.
func similarTo(ctx context.Context, dg *dgo.Dgraph, c vectorChunk) error {
	resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($v: float32vector) { q(func: similar_to(Chunk.embedding, 10, $v)) { uid } }`,
		map[string]string{"$v": c.vector})
	if err != nil {
		return err
	}
	if !strings.Contains(string(resp.Json), `"`+c.uid+`"`) {
		return fmt.Errorf("chunk %s not among its own vector's neighbours: %s", c.uid, resp.Json)
	}
	return nil
}

// vectorIndexState is the tenant's Meta.vector_index.
func vectorIndexState(t *testing.T, ten *graph.Tenant) string {
	t.Helper()
	return dgraphtest.VectorIndexState(t, dgraphtest.DG(t, ten))
}

// waitVectorIndexBuilt waits until Meta says built; meanwhile it must say building.
func waitVectorIndexBuilt(t *testing.T, ten *graph.Tenant, timeout time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		s := vectorIndexState(t, ten)
		if s == "built" {
			t.Logf("vector index recorded built after %v", time.Since(start).Round(100*time.Millisecond))
			return
		}
		if !strings.HasPrefix(s, "building ") {
			t.Fatalf("Meta says %q while waiting for the build", s)
		}
		if time.Since(start) > timeout {
			t.Fatalf("vector index still recorded %q after %v", s, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// syncBuffer is a log destination for goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
