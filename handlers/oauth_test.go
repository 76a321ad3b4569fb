package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/oauth"
	"github.com/knowmind/knowmind/oauth/oauthtest"
)

const oauthAudience = "knowmind-test-api"

// loopbackClient lets the SDK's OAuth discovery reach the test servers on
// 127.0.0.1: its own transport refuses non-public addresses, a wrapped one
// opts out of that check.
var loopbackClient = &http.Client{Transport: wrappedTransport{http.DefaultTransport}, Timeout: 30 * time.Second}

type wrappedTransport struct{ http.RoundTripper }

// newOAuthServer is a test server whose tokens come from a local issuer
// (tenant claim = a fresh tenant).
func newOAuthServer(t *testing.T, edit func(*oauth.Config)) (*oauthtest.Issuer, string, string) {
	t.Helper()
	tenant := dgraphtest.TenantName(t)
	is := oauthtest.New(t, oauthAudience, map[string]any{"tenant": tenant})
	cfg := oauth.Config{Issuer: is.URL, Audiences: []string{oauthAudience}, RefetchInterval: 10 * time.Millisecond, Logger: testLogger()}
	if edit != nil {
		edit(&cfg)
	}
	v, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, func(d *Deps) { d.OAuth = v })
	return is, srv.URL, tenant
}

// Without an issuer nothing claims OAuth: no metadata document, and the 401
// challenge names none (MCP's authorization spec wants authorization_servers
// in the metadata, which there would be none to list).
func TestNoIssuerNoResourceMetadata(t *testing.T) {
	srv := newTestServer(t, nil)
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp/v1"} {
		if r := do(t, http.MethodGet, srv.URL+p, "", ""); r.Status != http.StatusNotFound {
			t.Errorf("GET %s: HTTP %d, want 404", p, r.Status)
		}
	}
	r := send(t, srv.URL+"/api/mcp/v1", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if ch := r.Header.Get("WWW-Authenticate"); r.Status != http.StatusUnauthorized || ch != `Bearer realm="knowmind"` {
		t.Errorf("HTTP %d, challenge %q", r.Status, ch)
	}
}

// The RFC 9728 metadata passes the MCP Go SDK's own client-side checks
// (resource equals the endpoint URL, authorization servers listed), for both
// endpoint paths, and the 401 challenge points at it.
func TestResourceMetadataNamesIssuer(t *testing.T) {
	is, base, _ := newOAuthServer(t, nil)
	ctx := context.Background()
	for _, path := range []string{"/api/mcp/v1", "/mcp"} {
		r := send(t, base+path, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		chs, err := oauthex.ParseWWWAuthenticate(r.Header.Values("WWW-Authenticate"))
		if r.Status != http.StatusUnauthorized || err != nil || len(chs) != 1 {
			t.Fatalf("%s: HTTP %d challenge %q (%v)", path, r.Status, r.Header.Get("WWW-Authenticate"), err)
		}
		mdURL := chs[0].Params["resource_metadata"]
		if mdURL != base+"/.well-known/oauth-protected-resource"+path {
			t.Errorf("%s: resource_metadata %q", path, mdURL)
		}
		md, err := oauthex.GetProtectedResourceMetadata(ctx, mdURL, base+path, loopbackClient)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !slices.Equal(md.AuthorizationServers, []string{is.URL}) || !slices.Equal(md.ScopesSupported, []string{"read", "write", "admin"}) ||
			!slices.Equal(md.BearerMethodsSupported, []string{"header"}) {
			t.Errorf("%s: metadata %+v", path, md)
		}
	}
	// The path-less document describes the main endpoint.
	r := do(t, http.MethodGet, base+"/.well-known/oauth-protected-resource", "", "")
	var md oauthex.ProtectedResourceMetadata
	if err := json.Unmarshal(r.Body, &md); err != nil || md.Resource != base+"/api/mcp/v1" || len(md.AuthorizationServers) != 1 {
		t.Errorf("root metadata: HTTP %d %s", r.Status, r.Body)
	}
}

// TestOAuthClientCredentials is the whole flow as a service-to-service
// client does it, with the MCP Go SDK's client: 401 → RFC 9728 metadata →
// the issuer's RFC 8414 metadata → client credentials grant at its token
// endpoint → the call with the access token. The tenant comes from the
// token's claim; the namespace is made on first use.
func TestOAuthClientCredentials(t *testing.T) {
	is, base, tenant := newOAuthServer(t, nil)
	handler, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: is.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: is.ClientSecret}},
		HTTPClient:  loopbackClient,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", OAuthHandler: handler, HTTPClient: loopbackClient}, nil)
	if err != nil {
		t.Fatalf("connect through OAuth discovery: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The client asked for every scope the metadata lists, so it sees the write tools.
	if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "knowmind_store_memory" }) {
		t.Fatalf("tools of a read/write/admin token: %d", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "knowmind_stats", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("stats: %v %+v", err, res)
	}
	// The tenant is the claim's: a kmt_ token of the same tenant sees the same (empty) workspace.
	kmt := newToken(t, tenant, knowmind.ScopeRead)
	var st knowmind.Stats
	structured(t, callTool(t, base+"/api/mcp/v1", kmt, "knowmind_stats", map[string]any{}), &st)
	if st != (knowmind.Stats{}) {
		t.Errorf("stats %+v", st)
	}
	if is.JWKSFetches() != 1 {
		t.Errorf("JWKS fetched %d times, want once", is.JWKSFetches())
	}
}

// Key rotation, other issuers and the claims, through the MCP endpoint.
func TestOAuthTokens(t *testing.T) {
	is, base, tenant := newOAuthServer(t, nil)
	url := base + "/api/mcp/v1"
	health := func(tok string) reply { return callTool(t, url, tok, "knowmind_health", map[string]any{}) }
	var h HealthResult

	first := is.Sign(map[string]any{"scope": "read"})
	structured(t, health(first), &h)
	structured(t, callTool(t, url, first, "knowmind_stats", map[string]any{}), &knowmind.Stats{})
	// Read only: a write tool is refused with the scope error.
	wantRPCError(t, callTool(t, url, first, "knowmind_store_memory", map[string]any{"title": "x", "content": "y"}), codeScope, "")

	// The issuer rotates its key and withdraws the old one: the new token
	// makes the service fetch the JWKS again; the old token is then refused.
	time.Sleep(20 * time.Millisecond)
	is.Rotate(t, false)
	second := is.Sign(map[string]any{"scope": "read"})
	structured(t, health(second), &h)
	if n := is.JWKSFetches(); n != 2 {
		t.Errorf("JWKS fetches after rotation = %d, want 2", n)
	}
	time.Sleep(20 * time.Millisecond)
	want401(t, "withdrawn key", health(first), base)

	other := oauthtest.New(t, oauthAudience, map[string]any{"tenant": tenant})
	for name, tok := range map[string]string{
		"another issuer":        other.Sign(nil),
		"another issuer's key":  other.Sign(map[string]any{"iss": is.URL}),
		"wrong audience":        is.Sign(map[string]any{"aud": "https://elsewhere.example"}),
		"expired":               is.Sign(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}),
		"no tenant claim":       is.Sign(map[string]any{"tenant": nil}),
		"tenant claim invalid":  is.Sign(map[string]any{"tenant": "../x"}),
		"alg none, our issuer":  noneJWT(t, map[string]any{"iss": is.URL, "aud": oauthAudience, "tenant": tenant, "exp": time.Now().Add(time.Hour).Unix()}),
		"HS256 with our issuer": hsJWT(t, map[string]any{"iss": is.URL, "aud": oauthAudience, "tenant": tenant, "exp": time.Now().Add(time.Hour).Unix()}),
	} {
		r := health(tok)
		want401(t, name, r, base)
		if ch := r.Header.Get("WWW-Authenticate"); !strings.Contains(ch, `resource_metadata="`+base+`/.well-known/oauth-protected-resource/api/mcp/v1"`) ||
			!strings.Contains(ch, `error="invalid_token"`) {
			t.Errorf("%s: challenge %q", name, ch)
		}
	}

	// Static tokens keep working beside the issuer.
	structured(t, health(newToken(t, tenant, knowmind.ScopeRead)), &h)
}

// An issuer that cannot be reached: its tokens get 503 (they may be valid),
// kmt_ tokens still work.
func TestOAuthIssuerDown(t *testing.T) {
	is := oauthtest.New(t, oauthAudience, map[string]any{"tenant": dgraphtest.TenantName(t)})
	tok := is.Sign(nil)
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audiences: []string{oauthAudience}, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, func(d *Deps) { d.OAuth = v })
	is.Close()
	r := callTool(t, srv.URL+"/api/mcp/v1", tok, "knowmind_health", map[string]any{})
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("HTTP %d %s, want 503", r.Status, r.Body)
	}
	var h HealthResult
	structured(t, callTool(t, srv.URL+"/api/mcp/v1", newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead), "knowmind_health", map[string]any{}), &h)
}
