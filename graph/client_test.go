package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
)

// nil: every relation predicate of the default shapes, as in production.
func TestMain(m *testing.M) { dgraphtest.Main(m, nil) }

func TestTenantsAreSeparateNamespaces(t *testing.T) {
	ctx := context.Background()
	a := dgraphtest.NewTenant(t)
	b := dgraphtest.NewTenant(t)
	if a.Namespace == b.Namespace || a.Namespace == 0 {
		t.Fatalf("namespaces: a=%d b=%d", a.Namespace, b.Namespace)
	}
	dgraphtest.SetNquads(t, a, `_:m <Memory.title> "secret of a" .`)
	count := func(ten *graph.Tenant) int {
		resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().Query(ctx, `{ q(func: has(Memory.title)) { count(uid) } }`)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Q []struct{ Count int } }
		json.Unmarshal(resp.Json, &out)
		if len(out.Q) == 0 {
			return 0
		}
		return out.Q[0].Count
	}
	if got := count(a); got != 1 {
		t.Errorf("tenant a sees %d memories, want 1", got)
	}
	if got := count(b); got != 0 {
		t.Errorf("tenant b sees %d memories of tenant a, want 0", got)
	}
}

func TestSchemaVersionRecordedAndRelationPredicate(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, ten))
	if err != nil || v != schema.Version {
		t.Fatalf("schema version = %d, %v; want %d", v, err, schema.Version)
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().Query(ctx, `schema(pred: [RELATES_TO]) { reverse count }`)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Schema []struct {
			Predicate string
			Reverse   bool
			Count     bool
		}
	}
	json.Unmarshal(resp.Json, &out)
	if len(out.Schema) != 1 || !out.Schema[0].Reverse || !out.Schema[0].Count {
		t.Fatalf("RELATES_TO schema = %s", resp.Json)
	}
}

func TestTenantReopenFindsSameNamespace(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	first, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	other, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password, Secret: env.Secret})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	again, err := other.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Namespace != first.Namespace {
		t.Fatalf("reopened tenant in namespace %d, want %d", again.Namespace, first.Namespace)
	}
	if _, err := other.Tenant(ctx, "no-such-tenant", false); err == nil {
		t.Fatal("unknown tenant without create: want error")
	}
}

// A process opening a tenant whose schema is the one recorded (version and sha) sends Dgraph no
// schema alter: an alter waits for, or is refused during, an index rebuild (after a bulk
// import, minutes). Another relation set is another schema: that open alters.
func TestTenantReopenSkipsUnchangedSchema(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	open := func(relations []string) int {
		return reopenAlters(t, env, name, func(cfg *graph.Config) { cfg.Relations = relations })
	}
	if n := open(nil); n != 0 {
		t.Fatalf("reopening with the same schema sent %d alters, want 0", n)
	}
	// An import killed after dropping the vector index: the next open applies the schema (which
	// brings the index back), the one after that does not.
	if err := ten.DropVectorIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if n := open(nil); n == 0 {
		t.Fatal("reopening after the vector index was dropped sent no alter")
	}
	if n := open(nil); n != 0 {
		t.Fatalf("reopening after that sent %d alters, want 0", n)
	}
	if n := open([]string{"RELATES_TO", "EXTRA_RELATION"}); n == 0 {
		t.Fatal("reopening with another relation set sent no alter")
	}
	if n := open([]string{"RELATES_TO", "EXTRA_RELATION"}); n != 0 {
		t.Fatalf("reopening with that set again sent %d alters, want 0", n)
	}
}

// Two processes (here: two clients) creating the same new tenant at once,
// e.g. `knowmind token create` while serve answers the tenant's first JWT,
// must end up in one namespace: the Tenant record is an upsert, and the
// loser of the race uses the winner's namespace (its own stays unused).
func TestConcurrentTenantCreationAgrees(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	open := func() *graph.Client {
		c, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
			Password: env.Password, Secret: env.Secret, Embedder: env.Embedder})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	clients := []*graph.Client{open(), open(), open()}
	for round := range 3 {
		name := dgraphtest.TenantName(t)
		ns := make([]uint64, len(clients))
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Go(func() {
				ten, err := c.Tenant(ctx, name, true)
				if err == nil {
					ns[i] = ten.Namespace
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i := range clients {
			if errs[i] != nil || ns[i] != ns[0] {
				t.Fatalf("round %d: namespaces %v, errors %v: the clients disagree", round, ns, errs)
			}
		}
		resp, err := env.Galaxy(t).NewReadOnlyTxn().QueryWithVars(ctx,
			`query q($n: string) { t(func: eq(Tenant.name, $n)) { count(uid) } }`, map[string]string{"$n": name})
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ T []struct{ Count int } }
		if err := json.Unmarshal(resp.Json, &out); err != nil || len(out.T) != 1 || out.T[0].Count != 1 {
			t.Fatalf("round %d: Tenant records for %s: %s", round, name, resp.Json)
		}
	}
}

// A new tenant's open writes its schema record and embedder in one write, reading nothing
// before it (initNamespace); the record must be whole, so that the next open alters nothing.
// Different new tenants open concurrently in one client; one name is opened once.
func TestNewTenantsOpenConcurrently(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	same := dgraphtest.TenantName(t)
	names := []string{same, same, same, dgraphtest.TenantName(t), dgraphtest.TenantName(t)}
	tenants := make([]*graph.Tenant, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { tenants[i], errs[i] = env.Client.Tenant(ctx, name, true) })
	}
	wg.Wait()
	for i := range names {
		if errs[i] != nil {
			t.Fatalf("open %s: %v", names[i], errs[i])
		}
	}
	if tenants[1] != tenants[0] || tenants[2] != tenants[0] {
		t.Fatal("one name opened concurrently gave different sessions")
	}
	if tenants[3].Namespace == tenants[0].Namespace || tenants[4].Namespace == tenants[3].Namespace {
		t.Fatalf("namespaces %d, %d, %d: want three", tenants[0].Namespace, tenants[3].Namespace, tenants[4].Namespace)
	}
	for _, ten := range []*graph.Tenant{tenants[0], tenants[3], tenants[4]} {
		var out struct {
			M []struct {
				Version  int    `json:"Meta.schema_version"`
				SHA      string `json:"Meta.schema_sha"`
				Embedder string `json:"Meta.embedder_id"`
			}
		}
		dgraphtest.Query(t, ten, `{ m(func: has(Meta.key)) { Meta.schema_version Meta.schema_sha Meta.embedder_id } }`, nil, &out)
		if len(out.M) != 1 || out.M[0].Version != schema.Version || out.M[0].SHA == "" || out.M[0].Embedder != env.Embedder.ID() {
			t.Fatalf("tenant %s's record: %+v; want one with version %d, a schema sha and embedder %s", ten.Name, out.M, schema.Version, env.Embedder.ID())
		}
		if n := reopenAlters(t, env, ten.Name, func(cfg *graph.Config) { cfg.Embedder = env.Embedder }); n != 0 {
			t.Fatalf("reopening new tenant %s sent %d alters, want 0", ten.Name, n)
		}
	}
}

// The first query after a new namespace's alter waits in the alpha until its cluster membership
// lists the new predicates (0.6–0.8 s on a quiet machine), and that wait holds every query on
// the alpha, a galaxy token lookup included — one with a second's deadline (handlers) answered
// 503 under load. The new tenant's open pays it: once Tenant returns, the next lookup is quick.
// The smallest of three first lookups is compared, so one slow read on a loaded machine does not
// decide; without the settling read every one of them waited at least 0.6 s.
func TestNewTenantIsReadableAtOnce(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	fastest := time.Hour
	for range 3 {
		name := dgraphtest.TenantName(t)
		if _, err := env.Client.Tenant(ctx, name, true); err != nil {
			t.Fatal(err)
		}
		tok, _, err := env.Client.CreateToken(ctx, name, []knowmind.Scope{knowmind.ScopeRead}, "first", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := env.Client.VerifyToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		fastest = min(fastest, time.Since(start))
	}
	if fastest > 400*time.Millisecond {
		t.Fatalf("the first token lookup after a tenant's creation took at least %v; want the creation to have waited for the alpha", fastest)
	}
}

// reopenAlters opens tenant name in a new client of env (its config changed by edit) and returns
// how many schema alters that open sent; the galaxy's own at Open are not counted.
func reopenAlters(t *testing.T, env *dgraphtest.Env, name string, edit func(*graph.Config)) int {
	t.Helper()
	ctx := context.Background()
	var alters atomic.Int32
	cfg := graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password, Secret: env.Secret,
		ObserveRPC: func(method string, _ time.Duration, _ error) {
			if method == "Alter" {
				alters.Add(1)
			}
		}}
	edit(&cfg)
	c, err := graph.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	alters.Store(0)
	if _, err := c.Tenant(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	return int(alters.Load())
}

// BenchmarkTenantCreate creates tenants one at a time and inFlight at a time, as the service
// does for a tenant's first token or JWT: the namespace (Dgraph's /admin addNamespace), the
// login, the schema and its record. It reports the median and slowest creation and the rate.
func BenchmarkTenantCreate(b *testing.B) {
	env := dgraphtest.Shared(b)
	for _, inFlight := range []int{1, 3} {
		b.Run(fmt.Sprintf("in-flight-%d", inFlight), func(b *testing.B) {
			ctx := context.Background()
			var mu sync.Mutex
			var took []float64
			next := make(chan int)
			var wg sync.WaitGroup
			for range inFlight {
				wg.Go(func() {
					for range next {
						t0 := time.Now()
						if _, err := env.Client.Tenant(ctx, dgraphtest.TenantName(b), true); err != nil {
							b.Error(err)
						}
						mu.Lock()
						took = append(took, float64(time.Since(t0).Microseconds())/1000)
						mu.Unlock()
					}
				})
			}
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				next <- i
			}
			close(next)
			wg.Wait()
			slices.Sort(took)
			b.ReportMetric(took[len(took)/2], "median-ms")
			b.ReportMetric(took[len(took)-1], "max-ms")
			b.ReportMetric(float64(len(took))/time.Since(start).Minutes(), "tenants/min")
		})
	}
}

// A session left unused for longer than Dgraph's refresh-ttl holds a refresh
// JWT that Dgraph refuses; dgo's renewal through it then fails, and without
// a fallback every later request of the tenant would fail until a restart.
// The session's client answers a refused refresh-token login with a
// password login into the tenant's own namespace.
func TestSessionRenewsWithPasswordWhenRefreshTokenIsRefused(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	ten := dgraphtest.NewTenant(t)
	refused := &api.LoginRequest{RefreshToken: "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjF9.c3RhbGU"}

	// What dgo alone gets from Dgraph for such a token.
	raw := dgraphtest.Stub(t, env.Alphas[0])
	if _, err := raw.Login(ctx, refused); err == nil {
		t.Fatal("Dgraph accepted a stale refresh token; the test proves nothing")
	}

	resp, err := ten.SessionLogin(ctx, refused)
	if err != nil {
		t.Fatalf("session login with a refused refresh token: %v", err)
	}
	var jwt api.Jwt
	if err := proto.Unmarshal(resp.Json, &jwt); err != nil || jwt.AccessJwt == "" || jwt.RefreshJwt == "" {
		t.Fatalf("login answer: %v %+v", err, &jwt)
	}
	// The new access JWT opens the tenant's namespace (its Meta node is there).
	qctx := metadata.NewOutgoingContext(ctx, metadata.Pairs("accessJwt", jwt.AccessJwt))
	q, err := raw.Query(qctx, &api.Request{Query: `{ m(func: eq(Meta.key, "knowmind")) { Meta.schema_version } }`, ReadOnly: true})
	if err != nil || !strings.Contains(string(q.Json), "Meta.schema_version") {
		t.Fatalf("query with the renewed login: %v %s", err, q.GetJson())
	}
}

// Creating a tenant's namespace is a schema change of the cluster: Dgraph applies it behind a
// running index build, which can take longer than one round trip's deadline. It waits as an
// Alter does, while every other /admin request keeps the round trip's deadline. A proxy in front
// of the alpha's HTTP port holds both kinds back longer than Config.RPCTimeout.
func TestNamespaceCreationWaitsLikeASchemaChange(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	const rpcTimeout, held = 3 * time.Second, 5 * time.Second
	alpha := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: env.HTTP[0]})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte("addNamespace")) || bytes.Contains(body, []byte("getGroup")) {
			select {
			case <-time.After(held):
			case <-r.Context().Done():
				return
			}
		}
		alpha.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	c, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: []string{proxy.Listener.Addr().String()},
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder, RPCTimeout: rpcTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name := dgraphtest.TenantName(t)
	if _, err := c.Tenant(ctx, name, true); err != nil {
		t.Fatalf("a namespace created in %s against a round trip's %s: %v", held, rpcTimeout, err)
	}
	start := time.Now()
	_, err = c.AnalystLogin(ctx, name)
	if took := time.Since(start); err == nil || took >= held {
		t.Fatalf("an analyst login held back %s: %v after %s, want its %s deadline to end it", held, err, took.Round(time.Millisecond), rpcTimeout)
	}
}
