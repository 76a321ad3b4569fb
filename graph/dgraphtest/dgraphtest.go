// Package dgraphtest gives tests a real Dgraph: a throwaway zero+alpha on free
// loopback ports in a temp dir, started once per test package, or an existing
// cluster named by KNOWMIND_TEST_DGRAPH (host:9080[,host:9080...], guardian
// password in KNOWMIND_TEST_DGRAPH_PASSWORD, default "password").
//
// Tests are isolated by tenant: NewTenant gives each test its own Dgraph
// namespace, so tests never see each other's data and need no cleanup.
package dgraphtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/localdgraph"
	"github.com/knowmind/knowmind/shapes"
)

// Env is a running Dgraph and a service client on it.
type Env struct {
	Alphas   []string             // gRPC addresses
	HTTP     []string             // HTTP addresses (for /admin)
	Password string               // guardian password of the default namespace
	Secret   []byte               // service secret used to derive namespace passwords
	Cluster  *localdgraph.Cluster // nil when KNOWMIND_TEST_DGRAPH is used
	Client   *graph.Client
	Embedder graph.Embedder // the client's: the default embedder (embed.New with a zero Config)
	dir      string
}

var (
	shared  *Env
	counter atomic.Int64
	mu      sync.Mutex
)

// Main starts Dgraph for the package, runs the tests and stops it.
// Use it from TestMain: func TestMain(m *testing.M) { dgraphtest.Main(m, nil) }.
// relations are the relation predicates to add to tenant schemas (nil = the
// default shapes' relations, as in production).
func Main(m *testing.M, relations []string) {
	env, err := Start(context.Background(), relations)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dgraphtest:", err)
		os.Exit(1)
	}
	shared = env
	code := m.Run()
	env.Stop()
	os.Exit(code)
}

// Start brings up (or connects to) Dgraph and opens a client on it.
func Start(ctx context.Context, relations []string) (*Env, error) {
	// Printable, so a child process can be handed it (KNOWMIND_SECRET).
	env := &Env{Secret: []byte(hex.EncodeToString(randomBytes(32)))}
	if addrs := os.Getenv("KNOWMIND_TEST_DGRAPH"); addrs != "" {
		env.Alphas = strings.Split(addrs, ",")
		env.Password = os.Getenv("KNOWMIND_TEST_DGRAPH_PASSWORD")
		if env.Password == "" {
			env.Password = "password"
		}
	} else {
		dir, err := os.MkdirTemp("", "knowmind-dgraphtest-")
		if err != nil {
			return nil, err
		}
		env.dir = dir
		secret := filepath.Join(dir, "acl-secret")
		if err := os.WriteFile(secret, randomBytes(32), 0o600); err != nil {
			return nil, err
		}
		logLevel := slog.LevelWarn
		if os.Getenv("KNOWMIND_TEST_VERBOSE") != "" {
			logLevel = slog.LevelInfo
		}
		c, err := localdgraph.Start(ctx, localdgraph.Config{
			DataDir:       dir,
			PortOffset:    -1,
			ACLSecretFile: secret,
			CacheMB:       128,
			GracePeriod:   5 * time.Second,
			Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})),
		})
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		env.Cluster = c
		env.Alphas = c.AlphaGRPC()
		env.HTTP = c.AlphaHTTP()
		env.Password = "password"
	}
	// The client gets the service's default embedder, so tests write real
	// vectors the way production does.
	emb, err := embed.New(embed.Config{})
	if err != nil {
		env.Stop()
		return nil, err
	}
	env.Embedder = emb
	client, err := graph.Open(ctx, graph.Config{
		Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		User: "groot", Password: env.Password,
		Secret: env.Secret, Relations: relations,
		Embedder: emb,
	})
	if err != nil {
		env.Stop()
		return nil, err
	}
	env.Client = client
	return env, nil
}

// Stop closes the client and stops a cluster the harness started.
func (e *Env) Stop() {
	if e.Client != nil {
		e.Client.Close()
	}
	if e.Cluster != nil {
		e.Cluster.Stop()
	}
	if e.dir != "" && os.Getenv("KNOWMIND_TEST_KEEP") == "" {
		os.RemoveAll(e.dir)
	}
}

// Shared returns the package's Env (started by Main).
func Shared(t testing.TB) *Env {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		t.Fatal("dgraphtest: call dgraphtest.Main from TestMain")
	}
	return shared
}

// TenantName returns a fresh tenant name unique in this test run.
func TenantName(t testing.TB) string {
	return fmt.Sprintf("t%d-%x", counter.Add(1), randomBytes(3))
}

// NewTenant creates a fresh tenant (its own namespace) for one test.
func NewTenant(t testing.TB) *graph.Tenant {
	t.Helper()
	env := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ten, err := env.Client.Tenant(ctx, TenantName(t), true)
	if err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return ten
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// ClientWithShapes opens a second client on the package's Dgraph that checks
// links against set (e.g. shapes.Load("…/shapes/examples"): the default plus
// class-constrained example relations), closed when t ends. Tenants it
// creates get set's relation predicates; it shares the cluster, the secret
// and the embedder with Shared's client.
func ClientWithShapes(t testing.TB, set *shapes.Set) *graph.Client {
	t.Helper()
	env := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := graph.Open(ctx, graph.Config{
		Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		User: "groot", Password: env.Password,
		Secret: env.Secret, Embedder: env.Embedder, Shapes: set,
	})
	if err != nil {
		t.Fatalf("dgraphtest: client with shapes: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// ClientWith opens a second client on the package's Dgraph with the shared client's settings
// as edit changes them (e.g. the word levels recall compares words by), closed when t ends.
func ClientWith(t testing.TB, edit func(*graph.Config)) *graph.Client {
	t.Helper()
	env := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, User: "groot", Password: env.Password,
		Secret: env.Secret, Embedder: env.Embedder}
	edit(&cfg)
	c, err := graph.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("dgraphtest: client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Reopen opens tenant name through a second client on the package's Dgraph,
// as another process (or this one after a restart) would: the schema
// migrations and backfills of an open run there. The client is closed when
// t ends.
func Reopen(t testing.TB, name string) *graph.Tenant {
	t.Helper()
	env := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password, Secret: env.Secret, Embedder: env.Embedder})
	if err != nil {
		t.Fatalf("dgraphtest: second client: %v", err)
	}
	t.Cleanup(c.Close)
	ten, err := c.Tenant(ctx, name, false)
	if err != nil {
		t.Fatalf("dgraphtest: reopen tenant %s: %v", name, err)
	}
	return ten
}

// Memory is a memory's title and content, for scenarios.
type Memory struct{ Title, Content string }

// HopsScenario is the graph recall's hops are tested on (graph's TestRecallHopsReachLinkedMemories
// for the ranking, handlers' TestRecallToolHops through MCP): Hub matches Query; Mid is linked
// from Hub (RELATES_TO), Far from Mid (REFERENCES), neither shares a word with Query; each Noise
// memory shares a word with Query, so on text alone they outrank Mid and Far.
var HopsScenario = struct {
	Hub, Mid, Far Memory
	Noise         []string
	Query         string
}{
	Hub: Memory{"Workshop Müller GmbH März", "Workshop zur Qualitätssicherung bei der Müller GmbH am 12. März in Detmold."},
	Mid: Memory{"Kundenakte", "Stammdaten des Kunden: Industriestraße 7, Ansprechpartner Herr Berger."},
	Far: Memory{"Rahmenvertrag", "Laufzeit bis Ende 2027, Kündigungsfrist drei Monate, Preisanpassung jährlich."},
	Noise: []string{
		"Qualitätssicherung im Lager: Stichproben jeden Montag.",
		"Der Workshop für neue Auszubildende findet im Mai statt.",
		"Detmold ist Sitz der Niederlassung Nord.",
		"Die März-Abrechnung wird am Monatsende erstellt.",
	},
	Query: "Workshop Qualitätssicherung Müller GmbH Detmold März",
}
