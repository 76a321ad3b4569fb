// Package graph is knowmind's Dgraph layer: connections, namespaces (one per
// tenant), schema, tokens and the DQL behind every MCP tool.
//
// It knows nothing of HTTP or MCP. A *Tenant implements the root package's
// service interfaces (services.go); a handler obtains one, as a
// knowmind.Workspace, only from the authenticated principal
// (Client.Workspace), so no request can choose another tenant's namespace:
// isolation is Dgraph's, not a filter in our queries. It is the only package
// that imports dgo (with its subpackages: dgraphtest for tests, dql for the
// benchmark's raw DQL); TestOnlyGraphImportsDgo checks.
package graph

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/graph/internal/dgtxn"
	"github.com/knowmind/knowmind/schema"
	"github.com/knowmind/knowmind/search"
	"github.com/knowmind/knowmind/shapes"
)

// Config says how to reach Dgraph.
type Config struct {
	// Alphas are gRPC addresses (host:9080); requests are spread over all.
	Alphas []string
	// AlphasHTTP are the matching HTTP addresses for the /admin API used to
	// create namespaces; empty means "gRPC port - 1000" (Dgraph's layout).
	AlphasHTTP []string
	// Guardian credentials of the default namespace.
	User, Password string
	// Secret derives each tenant namespace's guardian password
	// (HMAC-SHA256(secret, tenant)), so the service holds every namespace's
	// credentials without storing them.
	Secret []byte
	// Relations are the relation predicates (from shapes) added to every
	// tenant schema as [uid] @reverse @count.
	Relations []string
	// Embedder writes chunk vectors and embeds queries (see embed/).
	Embedder Embedder
	// Reranker reorders recall's best candidates (a cross-encoder, see embed.CrossEncoder); nil = none,
	// and recall says "rerank": "none".
	Reranker search.Reranker
	// Analysis turns German rules of the text index's analysis off (bm25.Analysis), for the
	// benchmarks' ablations; the zero value keeps them all.
	Analysis bm25.Analysis
	// WordLevels tell how common a word is in general English (english.SystemLevels): recall
	// leaves out a hit holding only an everyday word of a question whose subject the tenant
	// never wrote (search.Weights.CommonWords). nil or empty: that rule is off.
	WordLevels search.WordLevels
	// NoExactVectors turns off the exact vector search in this process (vecindex.go): recall
	// then finds vector candidates with Dgraph's HNSW and the full-text pools only, and the
	// service holds no copy of the vectors (4·dim bytes a chunk).
	NoExactVectors bool
	// Shapes validate relation types (see shapes/); nil = the default domain.
	Shapes *shapes.Set
	Logger *slog.Logger
	// ObserveRPC, when set, is told of every round trip to Dgraph (metrics).
	ObserveRPC func(method string, d time.Duration, err error)
	// MaxMovedRelations bounds the open relations a superseded version may hold: update_fact
	// and an upload replacing a document move them all to the new version in one transaction
	// (versions.go); 0 = DefaultMaxMovedRelations.
	MaxMovedRelations int
	// RPCTimeout is the deadline of one round trip to Dgraph other than a
	// schema change (deadline.go); 0 = DefaultRPCTimeout, negative = none.
	RPCTimeout time.Duration
	// WatchIndexBuilds: a tenant opened while its vector index is recorded as building gets a
	// watcher that records the build's end or asks again for a build the alpha lost
	// (indexbuild.go). For the long-running process (serve); a short command (import, the
	// benchmarks) leaves that to it — a build it asked for would hold every alter of its own
	// (Dgraph refuses them while an index builds) and end with the command's managed Dgraph.
	WatchIndexBuilds bool
	// IndexDir is where each tenant's derived indexes are persisted (snapshot.go), so that a
	// restart reads them instead of rebuilding them from Dgraph; "" = not persisted.
	IndexDir string
	// IndexMemoryBytes bounds the open tenants' derived caches together (budget.go): over it,
	// the least recently used tenants' caches are dropped to their snapshots; 0 = unbounded.
	IndexMemoryBytes int64
	// ObserveSnapshotLoad, when set, is told how each tenant's first load used its snapshot
	// (Snapshot* results; metrics).
	ObserveSnapshotLoad func(result string)
}

// Embedder is what graph needs from an embedding provider (implemented by
// package embed). Vectors must be L2-normalised.
type Embedder interface {
	ID() string       // recorded per tenant; a different id never mixes vectors
	Provider() string // reported as embedding_provider
	Dim() int
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// RecomputableEmbedder is an optional capability of an Embedder: its passage vectors are cheap
// to compute in this process and a pure function of the text, so a vector is computed again from
// the stored chunk text rather than read back from Dgraph (textindex.go's loads and syncs).
// Model embedders (a network service, an ONNX model) must not claim it: a vector computed again
// there is neither cheap nor guaranteed to be the one stored. (Another CPU architecture may round
// the last bit differently; that is harmless, as the copy only picks recall's vector candidates
// and their scores come from the stored vectors, see vecindex.go.)
type RecomputableEmbedder interface {
	Embedder
	// Recomputable reports that EmbedPassages of a text always gives the same vector, in
	// microseconds.
	Recomputable() bool
}

// Client is the service's handle on Dgraph.
type Client struct {
	cfg   Config
	log   *slog.Logger
	conns []*grpc.ClientConn
	stubs []api.DgraphClient
	// failover is what sessions use: stubs with failover for requests that
	// are safe to repeat (failover.go).
	failover api.DgraphClient
	galaxy   *dgo.Dgraph
	http     *http.Client

	mu      sync.Mutex
	tenants map[string]*Tenant
	opening map[string]chan struct{} // tenants being opened (Tenant), closed when done

	titleLocks titleLocks    // uploads per tenant and title (documents.go)
	builds     indexWatchers // background vector index builds being waited for (indexbuild.go)

	snapMu    sync.Mutex
	snapLoads map[string]int // snapshot opens by result (snapshot.go)
	budget    indexBudget    // the index memory budget (budget.go)
}

// Tenant is a logged-in session on one tenant's namespace.
type Tenant struct {
	Name      string
	Namespace uint64
	dg        *dgo.Dgraph
	session   api.DgraphClient // what dg sends through (passwordFallback)
	c         *Client          // embedder, shapes, logger
	text      textIndex        // BM25 corpus statistics for recall (textindex.go)
	goals     goalCache        // open event goals for matching writes (goals.go)
	links     linkedSet        // relation predicates holding edges, for recall's hops (linkedrelations.go)
}

// Open dials every alpha, logs in as guardian of the default namespace
// (retrying: ACL login fails for a few seconds after /health turns healthy)
// and applies the galaxy schema.
func Open(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Alphas) == 0 {
		return nil, errors.New("graph: no alpha addresses")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.User == "" {
		cfg.User = "groot"
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("graph: a service secret is required to derive namespace credentials")
	}
	if cfg.Shapes == nil {
		set, err := shapes.Default()
		if err != nil {
			return nil, err
		}
		cfg.Shapes = set
	}
	if cfg.Relations == nil {
		cfg.Relations = cfg.Shapes.Names()
	}
	if cfg.RPCTimeout == 0 {
		cfg.RPCTimeout = DefaultRPCTimeout
	}
	c := &Client{cfg: cfg, log: cfg.Logger, tenants: map[string]*Tenant{}, opening: map[string]chan struct{}{}, http: &http.Client{}}
	dialOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)), guardWrites()}
	if cfg.ObserveRPC != nil {
		dialOpts = append(dialOpts, observeRPCs(cfg.ObserveRPC))
	}
	// After observeRPCs: the observed duration includes a call cut off by its deadline.
	dialOpts = append(dialOpts, rpcDeadlines(cfg.RPCTimeout))
	for _, a := range cfg.Alphas {
		conn, err := grpc.NewClient(a, dialOpts...)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("dial dgraph %s: %w", a, err)
		}
		c.conns = append(c.conns, conn)
		c.stubs = append(c.stubs, api.NewDgraphClient(conn))
	}
	c.failover = newFailoverClient(c.stubs)
	//lint:ignore SA1019 dgo.NewClient dials by itself; the sessions share these connections through failover
	c.galaxy = dgo.NewDgraphClient(&passwordFallback{DgraphClient: c.failover, user: cfg.User, password: cfg.Password})
	if err := retryLogin(ctx, func(ctx context.Context) error {
		return c.galaxy.LoginIntoNamespace(ctx, cfg.User, cfg.Password, 0)
	}); err != nil {
		c.Close()
		return nil, fmt.Errorf("dgraph guardian login: %w", err)
	}
	if _, _, err := applySchema(ctx, c.galaxy, schema.Galaxy, "galaxy"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close releases the connections.
func (c *Client) Close() {
	c.WaitIndexBudget()
	c.flushSnapshots()
	c.builds.stop()
	for _, conn := range c.conns {
		conn.Close()
	}
}

// Shapes returns the relation shapes links are checked against (the set
// tools/list describes to agents).
func (c *Client) Shapes() *shapes.Set { return c.cfg.Shapes }

// Ping checks that every alpha answers a query; it returns one error per alpha
// (nil = reachable), for readiness per alpha.
func (c *Client) Ping(ctx context.Context) map[string]error {
	out := make(map[string]error, len(c.stubs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, stub := range c.stubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			// Health of the alpha itself; CheckVersion needs no login.
			_, err := stub.CheckVersion(ctx, &api.Check{})
			mu.Lock()
			out[c.cfg.Alphas[i]] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// Tenant returns a session on the tenant's namespace, creating namespace and
// schema on first use when create is true. Unknown tenants with create=false
// give ENOTFOUND.
//
// Different tenants open concurrently; one name is opened once, its other callers wait for it.
func (c *Client) Tenant(ctx context.Context, name string, create bool) (*Tenant, error) {
	for {
		c.mu.Lock()
		if t := c.tenants[name]; t != nil {
			c.mu.Unlock()
			return t, nil
		}
		busy, opening := c.opening[name]
		if !opening {
			done := make(chan struct{})
			c.opening[name] = done
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				delete(c.opening, name)
				c.mu.Unlock()
				close(done)
			}()
			return c.openTenant(ctx, name, create)
		}
		c.mu.Unlock()
		select {
		case <-busy: // opened, or failed: look again
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// openTenant logs into the tenant's namespace, creating it when create is true and it has
// none, brings it to the current schema and records it in c.tenants.
func (c *Client) openTenant(ctx context.Context, name string, create bool) (*Tenant, error) {
	ns, found, err := c.lookupNamespace(ctx, name)
	if err != nil {
		return nil, err
	}
	created := false
	if !found {
		if !create {
			return nil, knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q does not exist", name)
		}
		if ns, created, err = c.createNamespace(ctx, name); err != nil {
			return nil, err
		}
	}
	session := &passwordFallback{DgraphClient: c.failover, user: "groot", password: c.namespacePassword(name), namespace: ns}
	//lint:ignore SA1019 dgo.NewClient dials by itself; the sessions share these connections through failover
	dg := dgo.NewDgraphClient(session)
	if err := retryLogin(ctx, func(ctx context.Context) error {
		return dg.LoginIntoNamespace(ctx, "groot", c.namespacePassword(name), ns)
	}); err != nil {
		return nil, fmt.Errorf("login into namespace %d of tenant %q: %w", ns, name, err)
	}
	t := &Tenant{Name: name, Namespace: ns, dg: dg, session: session, c: c}
	if !created || !c.initNamespace(ctx, t) {
		if err := c.upgradeNamespace(ctx, t); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	c.tenants[name] = t
	c.mu.Unlock()
	return t, nil
}

// upgradeNamespace brings a tenant's namespace to the current schema: it refuses one whose
// re-embedding is unfinished or whose vectors come from another embedder, applies the schema
// when the recorded one differs, runs the one-time backfills and migrations of the versions
// recorded before, and looks after a vector index build that is under way.
func (c *Client) upgradeNamespace(ctx context.Context, t *Tenant) error {
	name, ns, dg := t.Name, t.Namespace, t.dg
	if err := checkReembed(ctx, name, dg); err != nil {
		return err
	}
	before, vectorIndex, err := applyTenantSchema(ctx, dg, c.cfg.Relations)
	if err != nil {
		return fmt.Errorf("tenant %q: %w", name, err)
	}
	if before < previewSchemaVersion {
		n, err := backfillPreviews(ctx, dg)
		if err != nil {
			// The old version stays recorded, so the next open tries again.
			_ = recordSchema(ctx, dg, before, "")
			return fmt.Errorf("tenant %q: %w", name, err)
		}
		if n > 0 {
			c.log.Info("memories from before previews got one", "tenant", name, "memories", n)
		}
	}
	if before < revisionTextSchemaVersion {
		n, err := backfillRevisionText(ctx, dg)
		if err != nil {
			_ = recordSchema(ctx, dg, before, "") // the next open completes it
			return fmt.Errorf("tenant %q: %w", name, err)
		}
		if n > 0 {
			c.log.Info("note revisions got their searchable text", "tenant", name, "revisions", n)
		}
	}
	if before < datesSchemaVersion {
		n, err := backfillDates(ctx, dg)
		if err != nil {
			_ = recordSchema(ctx, dg, before, "") // the next open completes it
			return fmt.Errorf("tenant %q: %w", name, err)
		}
		if n > 0 {
			c.log.Info("memories from before Memory.dates got the days their text names", "tenant", name, "memories", n)
		}
	}
	if err := c.checkEmbedder(ctx, name, dg); err != nil {
		return err
	}
	if isVectorIndexBuilding(vectorIndex) {
		c.builds.watch(c, name, ns, dg) // indexbuild.go
	}
	if before < relationsSchemaVersion {
		n, err := t.migrateVersionRelations(ctx)
		if err != nil {
			_ = recordSchema(ctx, dg, before, "") // the next open completes it
			return fmt.Errorf("tenant %q: %w", name, err)
		}
		if n > 0 {
			c.log.Info("relations moved to the current versions of their memories", "tenant", name, "relations", n)
		}
	}
	return nil
}

// passwordFallback is the api.DgraphClient under one long-lived login
// (the galaxy session, each cached tenant session). dgo renews an expired
// access JWT with the refresh JWT, which Dgraph rotates each time; but a
// session unused for longer than the refresh JWT lives (Dgraph's
// refresh-ttl, 30 days by default) holds an expired one, the renewal fails
// ("invalid username or password"), and every later request of that tenant
// fails the same way until the process restarts. A refresh-token login that
// is refused is therefore repeated once as a password login into the same
// namespace; dgo takes the new JWTs from its answer as from any login.
type passwordFallback struct {
	api.DgraphClient
	user, password string
	namespace      uint64
}

func (p *passwordFallback) Login(ctx context.Context, in *api.LoginRequest, opts ...grpc.CallOption) (*api.Response, error) {
	resp, err := p.DgraphClient.Login(ctx, in, opts...)
	if err == nil || in.GetRefreshToken() == "" || unavailable(err) || ctx.Err() != nil {
		return resp, err
	}
	return p.DgraphClient.Login(ctx, &api.LoginRequest{Userid: p.user, Password: p.password, Namespace: p.namespace}, opts...)
}

// Tenants lists every tenant name.
func (c *Client) Tenants(ctx context.Context) ([]string, error) {
	resp, err := c.galaxy.NewReadOnlyTxn().Query(ctx, `{ t(func: has(Tenant.name), orderasc: Tenant.name) { Tenant.name } }`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	var out struct {
		T []struct {
			Name string `json:"Tenant.name"`
		} `json:"t"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, err
	}
	names := make([]string, len(out.T))
	for i, t := range out.T {
		names[i] = t.Name
	}
	return names, nil
}

func (c *Client) namespacePassword(tenant string) string {
	m := hmac.New(sha256.New, c.cfg.Secret)
	m.Write([]byte("knowmind namespace password\x00" + tenant))
	return hex.EncodeToString(m.Sum(nil))
}

func (c *Client) lookupNamespace(ctx context.Context, name string) (uint64, bool, error) {
	resp, err := c.galaxy.NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($n: string) { t(func: eq(Tenant.name, $n)) { Tenant.namespace } }`,
		map[string]string{"$n": name})
	if err != nil {
		return 0, false, fmt.Errorf("look up tenant: %w", err)
	}
	var out struct {
		T []struct {
			NS uint64 `json:"Tenant.namespace"`
		} `json:"t"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return 0, false, err
	}
	if len(out.T) == 0 {
		return 0, false, nil
	}
	return out.T[0].NS, true, nil
}

// createNamespace creates a Dgraph namespace through the /admin GraphQL API
// (dgo v240 has no namespace call) and records it as a Tenant node. A crash
// between the two leaves an unused namespace, never a tenant without one.
//
// created is false when another process recorded the tenant first and its namespace is returned.
func (c *Client) createNamespace(ctx context.Context, name string) (ns uint64, created bool, err error) {
	if err := ValidTenantName(name); err != nil {
		return 0, false, err
	}
	jwt := c.galaxy.GetJwt()
	q := `mutation($pw: String!) { addNamespace(input: {password: $pw}) { namespaceId message } }`
	var out struct {
		Data struct {
			AddNamespace struct {
				NamespaceID json.Number `json:"namespaceId"`
			} `json:"addNamespace"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := c.adminGraphQL(ctx, alterTimeout, jwt.AccessJwt, q, map[string]any{"pw": c.namespacePassword(name)}, &out); err != nil {
		return 0, false, err
	}
	if len(out.Errors) > 0 {
		return 0, false, fmt.Errorf("create namespace for %q: %s", name, out.Errors[0].Message)
	}
	ns, err = strconv.ParseUint(out.Data.AddNamespace.NamespaceID.String(), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("create namespace for %q: bad id %q", name, out.Data.AddNamespace.NamespaceID)
	}
	// Another process (`knowmind token create` beside serve, a second
	// replica) may have created the tenant since lookupNamespace: the record
	// is an upsert (Tenant.name is @upsert, so concurrent ones conflict and
	// runTxn retries), and the loser takes the recorded namespace, leaving
	// its own unused rather than splitting the tenant across two.
	req := &api.Request{
		Query: `query q($n: string) {
  t as var(func: eq(Tenant.name, $n))
  recorded(func: uid(t), first: 1) { Tenant.namespace }
}`,
		Vars: map[string]string{"$n": name},
		Mutations: []*api.Mutation{{Cond: `@if(eq(len(t), 0))`, SetNquads: []byte(fmt.Sprintf(
			"_:t <Tenant.name> %s .\n_:t <Tenant.namespace> \"%d\" .\n_:t <Tenant.created_at> %q .\n_:t <dgraph.type> \"Tenant\" .",
			strconv.Quote(name), ns, time.Now().UTC().Format(time.RFC3339Nano)))}},
	}
	var recorded struct {
		Recorded []struct {
			NS uint64 `json:"Tenant.namespace"`
		}
	}
	err = runTxn(ctx, c.galaxy, func(ctx context.Context, txn *dgo.Txn) error {
		recorded.Recorded = nil
		resp, err := txn.Do(ctx, req)
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &recorded)
	})
	if err != nil {
		return 0, false, fmt.Errorf("record tenant %q: %w", name, err)
	}
	if len(recorded.Recorded) > 0 {
		c.log.Warn("tenant created concurrently elsewhere; using its namespace", "tenant", name,
			"namespace", recorded.Recorded[0].NS, "unused_namespace", ns)
		return recorded.Recorded[0].NS, false, nil
	}
	c.log.Info("tenant namespace created", "tenant", name, "namespace", ns)
	return ns, true, nil
}

// adminGraphQL sends one request to Dgraph's /admin GraphQL API under the deadline d (none
// when d <= 0; a caller's shorter one wins): a namespace's creation or deletion is a schema
// change of the cluster, which Dgraph applies behind a running index build, and gets
// alterTimeout as Alter does; every other request one round trip's (Config.RPCTimeout).
func (c *Client) adminGraphQL(ctx context.Context, d time.Duration, accessJWT, query string, vars map[string]any, out any) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	var lastErr error
	for _, addr := range c.httpAlphas() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/admin", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Dgraph-AccessToken", accessJWT)
		resp, err := c.http.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			lastErr = err
			continue
		}
		if resp.StatusCode != http.StatusOK {
			lastErr = fmt.Errorf("dgraph /admin at %s: HTTP %d", addr, resp.StatusCode)
			continue
		}
		return json.Unmarshal(data, out)
	}
	return fmt.Errorf("dgraph admin API unreachable: %w", lastErr)
}

func (c *Client) httpAlphas() []string {
	if len(c.cfg.AlphasHTTP) > 0 {
		return c.cfg.AlphasHTTP
	}
	out := make([]string, 0, len(c.cfg.Alphas))
	for _, a := range c.cfg.Alphas {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		p, _ := strconv.Atoi(port)
		out = append(out, net.JoinHostPort(host, strconv.Itoa(p-1000)))
	}
	return out
}

// ValidTenantName bounds tenant names: 1-64 of [a-z0-9_-], so they are safe
// in logs, DQL variables and file names.
func ValidTenantName(name string) error {
	if name == "" || len(name) > 64 {
		return knowmind.InvalidParam("tenant", "tenant must be 1-64 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return knowmind.InvalidParam("tenant", "tenant may contain only a-z, 0-9, '-' and '_'")
		}
	}
	return nil
}

func retryLogin(ctx context.Context, login func(context.Context) error) error {
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err = login(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(300 * time.Millisecond)
	}
	return err
}

// runTxn runs fn in a read-write transaction and commits it, retrying when Dgraph aborts it for
// a conflict (dgtxn.Run). fn must be safe to run again.
func runTxn(ctx context.Context, dg *dgo.Dgraph, fn func(ctx context.Context, txn *dgo.Txn) error) error {
	return dgtxn.Run(ctx, dg, fn)
}

// SetGuardianPassword changes the password of the default namespace's groot
// (a fresh Dgraph starts with the well-known "password"). The client stays
// logged in; later Opens must use the new password.
func (c *Client) SetGuardianPassword(ctx context.Context, password string) error {
	q := `mutation($pw: String!) { updateUser(input: {filter: {name: {eq: "groot"}}, set: {password: $pw}}) { user { name } } }`
	var out struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := c.adminGraphQL(ctx, c.cfg.RPCTimeout, c.galaxy.GetJwt().AccessJwt, q, map[string]any{"pw": password}, &out); err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("change guardian password: %s", out.Errors[0].Message)
	}
	return nil
}
