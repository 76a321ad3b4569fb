package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/oauth"
	"github.com/knowmind/knowmind/oauth/oauthtest"
)

// probeParams and probeResult are the test tools' types.
type probeParams struct{}
type probeResult struct {
	OK bool `json:"ok"`
}

// newServerWithTools serves the MCP endpoint of testDeps (changed by edit)
// with the tools add registers beside the real ones.
func newServerWithTools(t *testing.T, edit func(*Deps), add func(s *service, srv *mcp.Server)) string {
	t.Helper()
	d := testDeps(t)
	if edit != nil {
		edit(&d)
	}
	s := newService(d, d.Logger)
	srv := newMCPServer(s)
	add(s, srv)
	hs := httptest.NewServer(newEndpoint(srv, newAuthenticator(d.Graph, d.JWT, d.Logger), d, d.Logger))
	t.Cleanup(hs.Close)
	return hs.URL + mcpPath
}

// Issue 13: tool handlers run in the SDK's goroutines, outside gin's
// recovery, so a panic in a tool ended the process. Now the call answers
// -32603 naming its request id and the service goes on.
func TestToolPanicIsAnInternalError(t *testing.T) {
	url := newServerWithTools(t, nil, func(s *service, srv *mcp.Server) {
		addTool(s, srv, tool{Name: "test_panic", Description: "panics"}, func(context.Context, probeParams) (probeResult, error) {
			var m map[string]int
			//lint:ignore SA5000 the panic is what the test is about
			m["boom"]++ // assignment to a nil map
			return probeResult{}, nil
		})
	})
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	for range 2 {
		r := callTool(t, url, token, "test_panic", map[string]any{})
		wantRPCError(t, r, jsonrpc.CodeInternalError, "")
		if id := r.Header.Get(requestIDHeader); id == "" || !strings.Contains(r.Error.Message, id) {
			t.Fatalf("panic answer %q does not name the request id %q", r.Error.Message, id)
		}
	}
	var h HealthResult
	structured(t, callTool(t, url, token, "knowmind_health", map[string]any{}), &h)
}

// Every tool call has a deadline that cancels its work: a call that does not
// finish in time is answered 503 at the deadline, a recall included (its
// Dgraph query is cancelled).
func TestToolCallDeadline(t *testing.T) {
	url := newServerWithTools(t, func(d *Deps) { d.CallTimeout = 300 * time.Millisecond }, func(s *service, srv *mcp.Server) {
		addTool(s, srv, tool{Name: "test_hang", Description: "waits for its context"}, func(ctx context.Context, _ probeParams) (probeResult, error) {
			<-ctx.Done()
			return probeResult{}, ctx.Err()
		})
	})
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	start := time.Now()
	r := callTool(t, url, token, "test_hang", map[string]any{})
	wantRPCError(t, r, codeUnavailable, "")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a hanging call was answered after %s, deadline 300ms", d)
	}
	if !strings.Contains(r.Error.Message, "300ms") {
		t.Errorf("message %q does not say the deadline", r.Error.Message)
	}
}

// One tenant's calls in flight are bounded: a tenant that floods gets 429
// while another tenant's calls go on.
func TestTenantInFlightBounded(t *testing.T) {
	const bound = 3
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) }) // a failing test must not leave calls hanging
	entered := make(chan struct{}, bound)
	url := newServerWithTools(t, func(d *Deps) { d.TenantInFlight = bound }, func(s *service, srv *mcp.Server) {
		addTool(s, srv, tool{Name: "test_block", Description: "waits for the test"}, func(ctx context.Context, _ probeParams) (probeResult, error) {
			entered <- struct{}{}
			select {
			case <-release:
				return probeResult{OK: true}, nil
			case <-ctx.Done():
				return probeResult{}, ctx.Err()
			}
		})
	})
	flooder := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	other := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)

	var wg sync.WaitGroup
	statuses := make(chan string, bound)
	for range bound {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := callTool(t, url, flooder, "test_block", map[string]any{})
			statuses <- fmt.Sprintf("%d %v", r.Status, r.Error)
		}()
	}
	// Once the bound is taken, one more call of the flooder is refused.
	for range bound {
		select {
		case <-entered:
		case <-time.After(time.Minute):
			t.Fatal("the blocking calls did not start within a minute")
		}
	}
	wantRPCError(t, callTool(t, url, flooder, "knowmind_health", map[string]any{}), codeRateLimited, "")
	// Another tenant is not affected.
	var h HealthResult
	structured(t, callTool(t, url, other, "knowmind_health", map[string]any{}), &h)
	releaseOnce.Do(func() { close(release) })
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != fmt.Sprintf("%d <nil>", http.StatusOK) {
			t.Errorf("blocked call: %s", s)
		}
	}
	structured(t, callTool(t, url, flooder, "knowmind_health", map[string]any{}), &h)
}

// Issue 13: any valid JWT created a namespace for an unseen tenant claim, and
// iss was not checked. Now a JWT reaches only existing workspaces unless
// CreateTenants is set, iss is checked when Issuer is set, and the tenant
// claim's name is configurable.
func TestJWTIssuerTenantsAndClaim(t *testing.T) {
	const issuer = "https://idp.example"
	srv := newTestServer(t, func(d *Deps) { d.JWT.Issuer = issuer })
	url := srv.URL + mcpPath
	existing := dgraphtest.TenantName(t)
	newToken(t, existing, knowmind.ScopeRead) // makes its workspace
	claims := func(tenant, iss string) jwt.MapClaims {
		c := jwt.MapClaims{"tenant": tenant, "scope": "read", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()}
		if iss != "" {
			c["iss"] = iss
		}
		return c
	}
	var st knowmind.Stats
	structured(t, callTool(t, url, hsJWT(t, claims(existing, issuer)), "knowmind_stats", map[string]any{}), &st)
	for name, iss := range map[string]string{"no iss": "", "other iss": "https://evil.example"} {
		if r := callTool(t, url, hsJWT(t, claims(existing, iss)), "knowmind_stats", map[string]any{}); r.Status != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, r.Status)
		}
	}
	unseen := dgraphtest.TenantName(t)
	wantRPCError(t, callTool(t, url, hsJWT(t, claims(unseen, issuer)), "knowmind_stats", map[string]any{}), codeForbidden, "")
	if _, err := dgraphtest.Shared(t).Client.Tenant(context.Background(), unseen, false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Fatalf("the JWT's unseen tenant: %v, want not found (no workspace created)", err)
	}

	org := newTestServer(t, func(d *Deps) { d.JWT.TenantClaim = "org" })
	withOrg := jwt.MapClaims{"org": existing, "scope": "read", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()}
	structured(t, callTool(t, org.URL+mcpPath, hsJWT(t, withOrg), "knowmind_stats", map[string]any{}), &st)
	if r := callTool(t, org.URL+mcpPath, hsJWT(t, claims(existing, "")), "knowmind_stats", map[string]any{}); r.Status != http.StatusUnauthorized {
		t.Errorf("tenant claim under the wrong name: HTTP %d, want 401", r.Status)
	}
}

// Issue 13: unauthenticated /readyz listed the alpha addresses and restart
// state. Now it says only ready or not; the checks only for the operator,
// who holds the metrics token (issue 34: an admin token belongs to a tenant,
// and the alphas' addresses map the deployment every tenant shares).
func TestReadyzDetailsOnlyForTheOperator(t *testing.T) {
	const operator = "operator-metrics-token-0123456789"
	srv := newTestServer(t, func(d *Deps) {
		d.Ready = func(context.Context) (bool, map[string]string) {
			return true, map[string]string{"alpha 10.0.0.7:9080": "ok"}
		}
		d.Metrics, d.MetricsToken = NewMetrics(nil), operator
	})
	tenant := dgraphtest.TenantName(t)
	for name, tc := range map[string]struct {
		token string
		want  bool
	}{
		"no token":             {"", false},
		"bad token":            {"kmt_" + strings.Repeat("x", 40), false},
		"read token":           {newToken(t, tenant, knowmind.ScopeRead), false},
		"admin token":          {newToken(t, tenant, knowmind.ScopeAdmin), false},
		"metrics token":        {operator, true},
		"metrics token prefix": {operator[:len(operator)-1], false},
	} {
		r := do(t, http.MethodGet, srv.URL+"/readyz", tc.token, "")
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"status":"ready"`) {
			t.Fatalf("%s: HTTP %d %s", name, r.Status, r.Body)
		}
		if got := strings.Contains(string(r.Body), "10.0.0.7"); got != tc.want {
			t.Errorf("%s: details shown %v, want %v: %s", name, got, tc.want, r.Body)
		}
	}
}

// Issue 13: without --public-url the Host header was echoed into
// WWW-Authenticate and the RFC 9728 metadata (served with an OAuth issuer).
// Now only a host of an allowed origin is; otherwise the address the
// connection came in on.
func TestHostHeaderNotEchoed(t *testing.T) {
	is := oauthtest.New(t, oauthAudience, map[string]any{"tenant": dgraphtest.TenantName(t)})
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audiences: []string{oauthAudience}, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, func(d *Deps) { d.OAuth, d.AllowedOrigins = v, []string{"https://knowmind.internal"} })
	get := func(method, path, host string) *http.Response {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	read := func(resp *http.Response) string {
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return b.String()
	}
	challenge := get(http.MethodPost, mcpPath, "evil.example").Header.Get("WWW-Authenticate")
	if strings.Contains(challenge, "evil.example") || !strings.Contains(challenge, srv.Listener.Addr().String()) {
		t.Errorf("WWW-Authenticate %q echoes the Host header", challenge)
	}
	if md := read(get(http.MethodGet, metadataPath, "evil.example")); strings.Contains(md, "evil.example") {
		t.Errorf("resource metadata echoes the Host header: %s", md)
	}
	if c := get(http.MethodPost, mcpPath, "knowmind.internal").Header.Get("WWW-Authenticate"); !strings.Contains(c, "http://knowmind.internal/") {
		t.Errorf("allowed host: %q", c)
	}
}

// The fast part of the cross-tenant suite (issue 13): tenant B calls every
// tool that takes an id with tenant A's ids, recalls A's unique words, stores
// A's content and lists its own workspace, with a kmt_ token and a JWT whose
// claims name B. Nothing of A may appear in any answer, and nothing of A may
// change.
func TestCrossTenantFast(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + mcpPath
	tenantA, tenantB := dgraphtest.TenantName(t), dgraphtest.TenantName(t)
	writeA := newToken(t, tenantA, knowmind.ScopeAdmin)
	tokensB := []string{newToken(t, tenantB, knowmind.ScopeAdmin),
		hsJWT(t, jwt.MapClaims{"tenant": tenantB, "scope": "read write admin", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()})}

	marker := "zquorvath"
	var ids, contents, secrets []string
	for i := range 3 {
		title, content := fmt.Sprintf("Titel %s %d", marker, i), fmt.Sprintf("Geheimnis %s Nummer %d von Mandant A.", marker, i)
		var res struct {
			ID string `json:"id"`
		}
		structured(t, callTool(t, url, writeA, "knowmind_store_memory", map[string]any{"title": title, "content": content}), &res)
		ids, contents = append(ids, res.ID), append(contents, content)
		secrets = append(secrets, title, content)
	}
	var doc struct {
		ID string `json:"id"`
	}
	structured(t, callTool(t, url, writeA, "knowmind_upload_document", map[string]any{"title": "Handbuch A " + marker, "content": "# Teil\n\nDas " + marker + " Handbuch."}), &doc)
	ids = append(ids, doc.ID)
	secrets = append(append(secrets, "Handbuch A "+marker, "Das "+marker+" Handbuch."), ids...)
	structured(t, callTool(t, url, writeA, "knowmind_link", linkArgs(ids[0], ids[1], "REFERENCES")), &LinkResult{})
	// A's relations before B's attempts: the link above, and whatever A's own
	// stores made (CONTRADICTS edges between its numbered secrets).
	ten, err := dgraphtest.Shared(t).Client.Tenant(context.Background(), tenantA, false)
	if err != nil {
		t.Fatal(err)
	}
	relationsA := func() string {
		t.Helper()
		var all []knowmind.RelationsResult
		for _, id := range ids {
			rel, err := ten.ListRelations(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, rel)
		}
		b, _ := json.Marshal(all)
		return string(b)
	}
	before := relationsA()
	if rel, err := ten.ListRelations(context.Background(), ids[0]); err != nil || !slices.ContainsFunc(rel.Outgoing, func(e knowmind.OutEdge) bool { return e.RelType == "REFERENCES" && e.To == ids[1] }) {
		t.Fatalf("A's link: %+v %v", rel, err)
	}

	// A leak is anything of A in an answer that the request did not carry
	// itself (a 404 names the id it was asked for), and that B had not stored
	// in its own workspace by an earlier call: storing A's content in B makes
	// it B's own, so a later store may name that copy of B's as a conflict.
	// A's ids stay secrets throughout, so a conflict naming A's memory leaks.
	attempts, leaks := 0, 0
	var ownB []string // contents B stored itself, in earlier calls
	check := func(tok, name string, args map[string]any) {
		t.Helper()
		attempts++
		r := callTool(t, url, tok, name, args)
		body := string(r.Body)
		sent, _ := json.Marshal(args)
		for _, secret := range secrets {
			if strings.Contains(body, secret) && !strings.Contains(string(sent), secret) && !slices.Contains(ownB, secret) {
				leaks++
				t.Errorf("%s %v answered with A's %q: %s", name, args, secret, body)
			}
		}
		if name == "knowmind_store_memory" && r.Error == nil && !strings.Contains(body, `"isError":true`) {
			ownB = append(ownB, args["content"].(string))
		}
	}
	for _, tok := range tokensB {
		for _, id := range ids {
			check(tok, "knowmind_list_relations", map[string]any{"memory_id": id})
			check(tok, "knowmind_explore", map[string]any{"memory_id": id})
			check(tok, "knowmind_update_fact", map[string]any{"target_id": id, "new_title": "x", "new_content": "überschrieben"})
			for _, other := range ids {
				if other != id {
					check(tok, "knowmind_link", linkArgs(id, other, "RELATES_TO"))
					check(tok, "knowmind_unlink", linkArgs(id, other, "REFERENCES"))
				}
			}
		}
		for _, q := range []string{marker, "Geheimnis Mandant", "Handbuch " + marker} {
			check(tok, "knowmind_recall", map[string]any{"query": q, "k": 25, "hops": 3})
			check(tok, "knowmind_recall_at_time", map[string]any{"query": q, "k": 25, "as_of": time.Now().UTC().Format(time.RFC3339)})
		}
		check(tok, "knowmind_list_recent", map[string]any{"k": 50})
		check(tok, "knowmind_stats", map[string]any{})
	}
	// Storing A's content in B makes B's own memory, never "unchanged" with A's id.
	for _, c := range contents {
		check(tokensB[0], "knowmind_store_memory", map[string]any{"content": c})
	}
	if leaks != 0 {
		t.Fatalf("%d of %d attempts leaked", leaks, attempts)
	}
	// Nothing of A changed: its memories are current and its relations are as before.
	for _, id := range ids {
		m, err := ten.GetMemory(context.Background(), id)
		if err != nil || m.ValidTo != nil {
			t.Fatalf("A's %s after B's attempts: %+v %v", id, m, err)
		}
	}
	if after := relationsA(); after != before {
		t.Fatalf("A's relations after B's attempts: %s, before: %s", after, before)
	}
	t.Logf("%d cross-tenant attempts, 0 leaks, 0 writes across", attempts)
}
