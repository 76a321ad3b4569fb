package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// analystTenants are tenant A, holding two memories, and tenant B, holding one that A's logins
// must never see; and a token in the default namespace (the service's own data).
func analystTenants(t *testing.T) (a, b *graph.Tenant) {
	t.Helper()
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a, b = dgraphtest.NewTenant(t), dgraphtest.NewTenant(t)
	for _, title := range []string{"Tarif Müller GmbH", "Workshop Müller GmbH"} {
		if _, err := a.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: title + ": 1.800 € Tagessatz.", Tags: []string{"tarif"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Nur für Mandant B", Content: "Geheim.", Tags: []string{"tarif"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Client.CreateToken(ctx, a.Name, []knowmind.Scope{knowmind.ScopeRead}, "analyst-test", nil); err != nil {
		t.Fatal(err)
	}
	return a, b
}

type seen struct {
	Memories []struct {
		Title string `json:"Memory.title"`
	} `json:"memories"`
	Tenants []any `json:"tenants"`
	Tokens  []any `json:"tokens"`
}

const everything = `{
  memories(func: has(Memory.id)) { Memory.title }
  tenants(func: has(Tenant.name)) { Tenant.name }
  tokens(func: has(Token.hash)) { Token.tenant }
}`

// The login `knowmind tenant credentials` hands out (gRPC like a client, HTTP /login + /query
// like Ratel) sees its tenant and nothing else: not another tenant, not the service's tenants
// and tokens; its password opens no other namespace.
func TestNamespaceCredentialsSeeOnlyTheirTenant(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a, b := analystTenants(t)
	cred, err := env.Client.NamespaceCredentials(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Namespace != a.Namespace || cred.User != "groot" || cred.Password == "" {
		t.Fatalf("credentials %+v for namespace %d", cred, a.Namespace)
	}
	var got seen
	dgraphtest.QueryDG(t, dgraphtest.Login(t, cred, env.Alphas...), everything, nil, &got)
	if len(got.Memories) != 2 || len(got.Tenants) != 0 || len(got.Tokens) != 0 {
		t.Errorf("tenant A's login sees %+v; want A's two memories, no tenants, no tokens", got)
	}
	for _, ns := range []uint64{b.Namespace, 0} {
		if err := dgraphtest.Dial(t, env.Alphas...).LoginIntoNamespace(ctx, cred.User, cred.Password, ns); err == nil {
			t.Errorf("tenant A's password logs into namespace %d", ns)
		}
	}

	// Ratel's way: HTTP /login with the namespace, then /query with the JWT.
	addr := alphaHTTP(env)
	body := httpQuery(t, addr, httpLogin(t, addr, cred), `{ q(func: eq(Memory.tags, "tarif")) { Memory.title } }`)
	if !strings.Contains(body, "Müller") || strings.Contains(body, "Mandant B") {
		t.Errorf("Ratel-style query as tenant A: %s", body)
	}

	if _, err := env.Client.NamespaceCredentials(ctx, "no-such-tenant"); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("unknown tenant: %v, want ENOTFOUND", err)
	}
	if _, err := env.Client.NamespaceCredentials(ctx, "Bad Name"); knowmind.ErrorCode(err) != knowmind.EINVALID {
		t.Errorf("invalid tenant name: %v, want EINVALID", err)
	}
}

// The login `knowmind tenant analyst` hands out reads the tenant and can change nothing; asking
// again rotates its password. (docs/docs_test.go runs every documented query with it.)
func TestAnalystLoginIsReadOnly(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a, _ := analystTenants(t)
	cred, err := env.Client.AnalystLogin(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if cred.User != "analyst" || cred.Namespace != a.Namespace {
		t.Fatalf("analyst credentials %+v", cred)
	}
	analyst := dgraphtest.Login(t, cred, env.Alphas...)
	var got seen
	dgraphtest.QueryDG(t, analyst, everything, nil, &got)
	if len(got.Memories) != 2 || len(got.Tenants) != 0 || len(got.Tokens) != 0 {
		t.Errorf("the analyst of A sees %+v; want A's two memories, no tenants, no tokens", got)
	}
	if _, err := analyst.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true,
		SetNquads: []byte(`_:x <Memory.id> "written_by_analyst" .`)}); err == nil {
		t.Error("the analyst could write a memory")
	}
	if err := analyst.Alter(ctx, &api.Operation{Schema: `<Memory.title>: string .`}); err == nil {
		t.Error("the analyst could alter the schema")
	}
	if err := analyst.Alter(ctx, &api.Operation{DropAll: true}); err == nil {
		t.Error("the analyst could drop all data")
	}
	var written struct{ Q []any }
	dgraphtest.Query(t, a, `{ q(func: eq(Memory.id, "written_by_analyst")) { uid } }`, nil, &written)
	if len(written.Q) != 0 {
		t.Error("the analyst's mutation was stored")
	}

	again, err := env.Client.AnalystLogin(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if again.Password == cred.Password {
		t.Fatal("password not rotated")
	}
	login := func(c graph.NamespaceCredentials) error {
		return dgraphtest.Dial(t, env.Alphas...).LoginIntoNamespace(ctx, c.User, c.Password, c.Namespace)
	}
	if err := login(cred); err == nil {
		t.Error("the old analyst password still logs in")
	}
	if err := login(again); err != nil {
		t.Errorf("the new analyst password: %v", err)
	}
}

func alphaHTTP(env *dgraphtest.Env) string {
	if len(env.HTTP) > 0 {
		return env.HTTP[0]
	}
	host, port, _ := net.SplitHostPort(env.Alphas[0])
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p-1000))
}

func httpLogin(t *testing.T, addr string, cred graph.NamespaceCredentials) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"userid": cred.User, "password": cred.Password, "namespace": cred.Namespace})
	resp, err := http.Post("http://"+addr+"/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			AccessJWT string `json:"accessJWT"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.AccessJWT == "" {
		t.Fatalf("HTTP /login into namespace %d: %v %+v", cred.Namespace, err, out.Errors)
	}
	return out.Data.AccessJWT
}

func httpQuery(t *testing.T, addr, jwt, q string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/query", strings.NewReader(q))
	req.Header.Set("Content-Type", "application/dql")
	req.Header.Set("X-Dgraph-AccessToken", jwt)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP /query: %d %s", resp.StatusCode, b)
	}
	return string(b)
}
