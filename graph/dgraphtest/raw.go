package dgraphtest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dql"
)

// Raw access, for what no tool may do: write a node in a shape the service would refuse (a
// failed memory, a relation without facets, a goal in bulk), read a predicate no tool shows.
// graph hands out no raw Dgraph client; a test logs in here the way an analyst does, with the
// tenant's namespace credentials (Client.NamespaceCredentials).

// Stub returns the plain gRPC stub of one alpha (no dgo, no login), closed when t ends.
func Stub(t testing.TB, alpha string) api.DgraphClient {
	t.Helper()
	conn, err := grpc.NewClient(alpha, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dgraphtest: dial %s: %v", alpha, err)
	}
	t.Cleanup(func() { conn.Close() })
	return api.NewDgraphClient(conn)
}

// Dial returns a dgo client on the given alphas, not logged in (round robin over them), closed
// when t ends.
func Dial(t testing.TB, alphas ...string) *dgo.Dgraph {
	t.Helper()
	stubs := make([]api.DgraphClient, 0, len(alphas))
	for _, a := range alphas {
		stubs = append(stubs, Stub(t, a))
	}
	//lint:ignore SA1019 dgo.NewClient dials by itself and cannot spread over alphas dialed here
	return dgo.NewDgraphClient(stubs...)
}

// Login returns a client on alphas logged in with cred (a tenant's namespace credentials or an
// analyst's), closed when t ends.
func Login(t testing.TB, cred graph.NamespaceCredentials, alphas ...string) *dgo.Dgraph {
	t.Helper()
	dg := Dial(t, alphas...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dg.LoginIntoNamespace(ctx, cred.User, cred.Password, cred.Namespace); err != nil {
		t.Fatalf("dgraphtest: login into namespace %d (%s) as %s: %v", cred.Namespace, cred.Tenant, cred.User, err)
	}
	return dg
}

// DG returns a client logged into ten's namespace as its guardian, closed when t ends.
func (e *Env) DG(t testing.TB, ten *graph.Tenant) *dgo.Dgraph {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cred, err := e.Client.NamespaceCredentials(ctx, ten.Name)
	if err != nil {
		t.Fatalf("dgraphtest: credentials of tenant %s: %v", ten.Name, err)
	}
	return Login(t, cred, e.Alphas...)
}

// Galaxy returns a client logged into the default namespace (tenants, tokens) as its guardian,
// closed when t ends.
func (e *Env) Galaxy(t testing.TB) *dgo.Dgraph {
	t.Helper()
	return Login(t, graph.NamespaceCredentials{User: "groot", Password: e.Password}, e.Alphas...)
}

// DG is Shared(t).DG(t, ten).
func DG(t testing.TB, ten *graph.Tenant) *dgo.Dgraph {
	t.Helper()
	return Shared(t).DG(t, ten)
}

// SetJSON commits v (a node or a list of nodes) to ten's namespace in one mutation.
func SetJSON(t testing.TB, ten *graph.Tenant, v any) {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	mutate(t, DG(t, ten), &api.Mutation{CommitNow: true, SetJson: js})
}

// SetJSON is SetJSON on this cluster (a test's own, not the shared one).
func (e *Env) SetJSON(t testing.TB, ten *graph.Tenant, v any) {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	mutate(t, e.DG(t, ten), &api.Mutation{CommitNow: true, SetJson: js})
}

// SetNquads commits RDF N-Quads to ten's namespace in one mutation.
func SetNquads(t testing.TB, ten *graph.Tenant, nquads string) {
	t.Helper()
	mutate(t, DG(t, ten), &api.Mutation{CommitNow: true, SetNquads: []byte(nquads)})
}

func mutate(t testing.TB, dg *dgo.Dgraph, mu *api.Mutation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := dg.NewTxn().Mutate(ctx, mu); err != nil {
		t.Fatalf("dgraphtest: mutation: %v", err)
	}
}

// Query runs a read-only DQL query (with vars, may be nil) in ten's namespace and decodes the
// answer into out.
func Query(t testing.TB, ten *graph.Tenant, q string, vars map[string]string, out any) {
	t.Helper()
	QueryDG(t, DG(t, ten), q, vars, out)
}

// QueryDG is Query on a client from Login, DG or Galaxy.
func QueryDG(t testing.TB, dg *dgo.Dgraph, q string, vars map[string]string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx, q, vars)
	if err != nil {
		t.Fatalf("dgraphtest: query: %v\n%s", err, q)
	}
	if err := json.Unmarshal(resp.Json, out); err != nil {
		t.Fatalf("dgraphtest: decode %s: %v", resp.Json, err)
	}
}

// Upsert runs query (with vars, may be nil) and an N-Quads mutation that may name its
// variables (uid(v)) as one request in ten's namespace, committed.
func Upsert(t testing.TB, ten *graph.Tenant, query string, vars map[string]string, nquads string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := &api.Request{Query: query, Vars: vars, Mutations: []*api.Mutation{{SetNquads: []byte(nquads)}}, CommitNow: true}
	if _, err := DG(t, ten).NewTxn().Do(ctx, req); err != nil {
		t.Fatalf("dgraphtest: upsert: %v", err)
	}
}

// SetGalaxyNquads commits RDF N-Quads to the default namespace (tenants, tokens), e.g. to move
// a token's expiry into the past.
func (e *Env) SetGalaxyNquads(t testing.TB, nquads string) {
	t.Helper()
	mutate(t, e.Galaxy(t), &api.Mutation{CommitNow: true, SetNquads: []byte(nquads)})
}

// VectorIndexState is the namespace's Meta.vector_index ("dropped", "building <time>", "built";
// graph/indexbuild.go), from a client from Login, DG or Galaxy.
func VectorIndexState(t testing.TB, dg *dgo.Dgraph) string {
	t.Helper()
	var out struct {
		M []struct {
			VI string `json:"Meta.vector_index"`
		} `json:"m"`
	}
	QueryDG(t, dg, `{ m(func: eq(Meta.key, "knowmind")) { Meta.vector_index } }`, nil, &out)
	if len(out.M) != 1 {
		t.Fatalf("Meta nodes: %+v", out.M)
	}
	return out.M[0].VI
}

// Conn is DG as a graph/dql connection, for tests outside package graph (they import no dgo).
func Conn(t testing.TB, ten *graph.Tenant) *dql.Conn {
	t.Helper()
	return dql.Wrap(DG(t, ten))
}

// LoginConn is Login as a graph/dql connection.
func LoginConn(t testing.TB, cred graph.NamespaceCredentials, alphas ...string) *dql.Conn {
	t.Helper()
	return dql.Wrap(Login(t, cred, alphas...))
}
