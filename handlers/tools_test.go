package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

type echoParams struct {
	Text string `json:"text" validate:"required,notblank"`
}

type echoResult struct {
	Text   string `json:"text"`
	Tenant string `json:"tenant"`
}

// newServerWithWriteTools serves the real tools plus two write tools that
// exist only in this test, as later tools will: test_write (-32002 when the
// scope is missing) and test_write_403 (declares 403, like update_fact).
func newServerWithWriteTools(t *testing.T) (*httptest.Server, *service) {
	d := testDeps(t)
	s := &service{workspaces: workspacesOf(d), shapeSet: shapesOf(d), ready: d.Ready, log: d.Logger, tools: map[string]*registeredTool{}}
	srv := newMCPServer(s)
	echo := func(ctx context.Context, p echoParams) (echoResult, error) {
		ten, err := s.tenant(ctx)
		if err != nil {
			return echoResult{}, err
		}
		return echoResult{Text: p.Text, Tenant: ten.(*graph.Tenant).Name}, nil
	}
	addTool(s, srv, tool{Name: "test_write", Description: "test", Scope: knowmind.ScopeWrite}, echo)
	addTool(s, srv, tool{Name: "test_write_403", Description: "test", Scope: knowmind.ScopeWrite, ScopeError: codeForbidden}, echo)
	hs := httptest.NewServer(newEndpoint(srv, newAuthenticator(d.Graph, d.JWT, d.Logger), d, d.Logger))
	t.Cleanup(hs.Close)
	return hs, s
}

// listTools is what tools/list shows token of every toolset it reaches (tools.go: the default
// list is TestToolDeclarations').
func listTools(t *testing.T, url, token string) []string {
	t.Helper()
	r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolsetsHeader, "all")
	var res struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("tools/list: HTTP %d %s", r.Status, r.Body)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func TestToolsListPerScope(t *testing.T) {
	hs, s := newServerWithWriteTools(t)
	tenant := dgraphtest.TenantName(t)
	noScope := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scope": "openid", "aud": testJWTAudience, "exp": 4102444800})
	for name, tc := range map[string]struct {
		token  string
		scopes []knowmind.Scope
	}{
		"read":     {newToken(t, tenant, knowmind.ScopeRead), []knowmind.Scope{knowmind.ScopeRead}},
		"write":    {newToken(t, tenant, knowmind.ScopeWrite), []knowmind.Scope{knowmind.ScopeWrite}},
		"admin":    {newToken(t, tenant, knowmind.ScopeAdmin), []knowmind.Scope{knowmind.ScopeAdmin}},
		"no scope": {noScope, nil},
	} {
		p := knowmind.Principal{Scopes: tc.scopes}
		var want []string
		for n, rt := range s.tools {
			if rt.Scope == "" || p.Has(rt.Scope) {
				want = append(want, n)
			}
		}
		slices.Sort(want)
		if got := listTools(t, hs.URL, tc.token); !slices.Equal(got, want) {
			t.Errorf("%s token sees %v, want %v", name, got, want)
		}
	}
	// A read token sees no write tool, and the read tools.
	read := listTools(t, hs.URL, newToken(t, tenant, knowmind.ScopeRead))
	if slices.Contains(read, "test_write") || !slices.Contains(read, "knowmind_list_recent") || !slices.Contains(read, "knowmind_health") {
		t.Errorf("read token sees %v", read)
	}
	if got := listTools(t, hs.URL, noScope); !slices.Equal(got, []string{"knowmind_health"}) {
		t.Errorf("token without scopes sees %v, want only knowmind_health", got)
	}
}

func TestScopeErrors(t *testing.T) {
	hs, _ := newServerWithWriteTools(t)
	tenant := dgraphtest.TenantName(t)
	read := newToken(t, tenant, knowmind.ScopeRead)
	write := newToken(t, tenant, knowmind.ScopeWrite)

	r := callTool(t, hs.URL, read, "test_write", map[string]any{"text": "hi"})
	wantRPCError(t, r, codeScope, "")
	if r.Error.Message != "scope write missing" {
		t.Errorf("message %q", r.Error.Message)
	}
	// The scope is checked before the arguments.
	wantRPCError(t, callTool(t, hs.URL, read, "test_write", map[string]any{}), codeScope, "")
	wantRPCError(t, callTool(t, hs.URL, read, "test_write_403", map[string]any{"text": "hi"}), codeForbidden, "")

	var out echoResult
	structured(t, callTool(t, hs.URL, write, "test_write", map[string]any{"text": "hi"}), &out)
	if out.Text != "hi" || out.Tenant != tenant {
		t.Errorf("write token: %+v", out)
	}
	// A tenant in the arguments changes nothing: it is an unknown parameter.
	wantRPCError(t, callTool(t, hs.URL, write, "test_write", map[string]any{"text": "hi", "tenant": "other"}), jsonrpc.CodeInvalidParams, "tenant")
	wantRPCError(t, callTool(t, hs.URL, write, "test_write", map[string]any{"text": "  "}), jsonrpc.CodeInvalidParams, "text")
}

// TestInsufficientScopeStepUp: a call beyond the token's scope is HTTP 403 with the MCP
// authorization spec's challenge naming the scope needed (a client can ask for a token that
// holds it), and the JSON-RPC error in the body with the request's id.
func TestInsufficientScopeStepUp(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	read := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	for _, tc := range []struct {
		tool string
		args string
		code int64
	}{
		{"knowmind_store_memory", `{"content":"x"}`, codeScope},
		{"knowmind_update_fact", `{"target_id":"0x1","new_content":"x"}`, codeForbidden},
	} {
		r := send(t, url, read, `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"`+tc.tool+`","arguments":`+tc.args+`}}`)
		if r.Status != http.StatusForbidden {
			t.Errorf("%s with a read token: HTTP %d %s, want 403", tc.tool, r.Status, r.Body)
			continue
		}
		challenge := r.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `error="insufficient_scope"`) ||
			!strings.Contains(challenge, `scope="write"`) {
			t.Errorf("%s: WWW-Authenticate %q", tc.tool, challenge)
		}
		wantRPCError(t, r, tc.code, "")
		if string(r.ID) != `"call-7"` || r.Error.Message != "scope write missing" {
			t.Errorf("%s: id %s message %q", tc.tool, r.ID, r.Error.Message)
		}
	}
	// Within its scope the same token's calls are answered as before.
	if r := callTool(t, url, read, "knowmind_stats", map[string]any{}); r.Status != http.StatusOK || r.Error != nil {
		t.Errorf("knowmind_stats: HTTP %d %s", r.Status, r.Body)
	}
}

func TestHealthTool(t *testing.T) {
	srv := newTestServer(t, nil)
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	var h HealthResult
	structured(t, callTool(t, srv.URL+"/api/mcp/v1", token, "knowmind_health", map[string]any{}), &h)
	if h != (HealthResult{Status: "ok", Service: "memory", Version: knowmind.Version}) {
		t.Errorf("health %+v", h)
	}

	down := newTestServer(t, func(d *Deps) {
		d.Ready = func(context.Context) (bool, map[string]string) {
			return false, map[string]string{"alpha 127.0.0.1:9080": "unreachable"}
		}
	})
	r := callTool(t, down.URL+"/api/mcp/v1", token, "knowmind_health", map[string]any{})
	wantRPCError(t, r, 503, "")
	if strings.Contains(string(r.Body), "9080") {
		t.Errorf("503 leaks internal detail: %s", r.Body)
	}
}

func TestStatsAndListRecent(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenantA, tenantB := dgraphtest.TenantName(t), dgraphtest.TenantName(t)
	tokenA := newToken(t, tenantA, knowmind.ScopeRead)
	tokenB := newToken(t, tenantB, knowmind.ScopeAdmin)
	seedTenant(t, tenantA, "Secret of A")

	var stats knowmind.Stats
	structured(t, callTool(t, url, tokenA, "knowmind_stats", map[string]any{}), &stats)
	if stats != (knowmind.Stats{Memories: 2, Edges: 1, Chunks: 1}) {
		t.Errorf("tenant A stats %+v, want 2 memories, 1 edge, 1 chunk", stats)
	}

	var recent ListRecentResult
	structured(t, callTool(t, url, tokenA, "knowmind_list_recent", map[string]any{}), &recent)
	if recent.Count != 2 || len(recent.Items) != 2 || recent.Items[0].Title != "second of "+tenantA || recent.Items[1].Title != "Secret of A" {
		t.Fatalf("tenant A list_recent %+v", recent)
	}
	if it := recent.Items[1]; it.ID != "mem-"+tenantA+"-1" || it.Kind != "memory" || it.Status != "indexed" || it.IndexedChunks != 1 || it.CreatedAt.IsZero() {
		t.Errorf("item %+v", it)
	}
	structured(t, callTool(t, url, tokenA, "knowmind_list_recent", map[string]any{"k": 1}), &recent)
	if recent.Count != 1 || len(recent.Items) != 1 {
		t.Errorf("k=1: %+v", recent)
	}

	// Tenant B, even with admin scope, sees nothing of tenant A.
	structured(t, callTool(t, url, tokenB, "knowmind_stats", map[string]any{}), &stats)
	if stats != (knowmind.Stats{}) {
		t.Errorf("tenant B sees stats %+v of tenant A", stats)
	}
	r := callTool(t, url, tokenB, "knowmind_list_recent", map[string]any{"k": 50})
	structured(t, r, &recent)
	if recent.Count != 0 || recent.Items == nil || strings.Contains(string(r.Body), "Secret") || !strings.Contains(string(r.Result), `"items":[]`) {
		t.Errorf("tenant B list_recent: %s", r.Result)
	}
}

func TestListRecentParams(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	for name, tc := range map[string]struct {
		args  string
		param string
	}{
		"k zero":          {`{"k":0}`, "k"},
		"k too big":       {`{"k":51}`, "k"},
		"k negative":      {`{"k":-1}`, "k"},
		"k string":        {`{"k":"5"}`, "k"},
		"k fraction":      {`{"k":2.5}`, "k"},
		"unknown":         {`{"limit":5}`, "limit"},
		"case matters":    {`{"K":5}`, "K"},
		"not an object":   {`[1]`, "arguments"},
		"arguments value": {`"k"`, "arguments"},
	} {
		r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_list_recent","arguments":`+tc.args+`}}`)
		if r.Status != http.StatusOK {
			t.Errorf("%s: HTTP %d", name, r.Status)
		}
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %s, want -32602", name, r.Body)
			continue
		}
		wantRPCError(t, r, jsonrpc.CodeInvalidParams, tc.param)
	}
	// Absent, null and empty arguments are the defaults.
	for _, args := range []string{``, `,"arguments":null`, `,"arguments":{}`, `,"arguments":{"k":null}`} {
		r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_list_recent"`+args+`}}`)
		var res ListRecentResult
		structured(t, r, &res)
	}
}

func TestInputSchemasFollowValidateTags(t *testing.T) {
	c, err := newParamsCodec[ListRecentParams]()
	if err != nil {
		t.Fatal(err)
	}
	k := c.schema.Properties["k"]
	if k == nil || k.Minimum == nil || *k.Minimum != 1 || k.Maximum == nil || *k.Maximum != 50 || len(c.schema.Required) != 0 {
		t.Fatalf("k schema %+v, required %v", k, c.schema.Required)
	}
	e, _ := newParamsCodec[echoParams]()
	if !slices.Equal(e.schema.Required, []string{"text"}) || *e.schema.Properties["text"].MinLength != 1 {
		t.Fatalf("echo schema required %v", e.schema.Required)
	}
}
