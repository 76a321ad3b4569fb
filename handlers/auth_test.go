package handlers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// want401 checks a 401 with a Bearer challenge and a JWT-RPC error body. A
// challenge naming RFC 9728 metadata (only with an OAuth issuer) must name
// this server's.
func want401(t *testing.T, name string, r reply, base string) {
	t.Helper()
	if r.Status != http.StatusUnauthorized {
		t.Errorf("%s: HTTP %d %s, want 401", name, r.Status, r.Body)
		return
	}
	ch := r.Header.Get("WWW-Authenticate")
	if !strings.HasPrefix(ch, "Bearer ") {
		t.Errorf("%s: WWW-Authenticate %q", name, ch)
	}
	if strings.Contains(ch, "resource_metadata=") && !strings.Contains(ch, `resource_metadata="`+base+`/.well-known/oauth-protected-resource`) {
		t.Errorf("%s: WWW-Authenticate %q names another server's metadata", name, ch)
	}
	if r.Error == nil || r.Error.Code != 401 {
		t.Errorf("%s: body %s, want a JSON-RPC error with code 401", name, r.Body)
	}
}

func TestAuthFailures(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	tenant := dgraphtest.TenantName(t)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	expired := newToken(t, tenant, knowmind.ScopeRead)
	tok, err := c.VerifyToken(ctx, expired)
	if err != nil {
		t.Fatal(err)
	}
	dgraphtest.Shared(t).SetGalaxyNquads(t, fmt.Sprintf(`<%s> <Token.expires_at> %q .`, tok.ID, time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)))
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"tenant": tenant, "scope": "read", "aud": testJWTAudience, "sub": "u1", "exp": now.Add(time.Hour).Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	otherKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil)).SignedString([]byte("another-secret-another-secret-123"))

	for name, header := range map[string]string{
		"missing":             "",
		"not bearer":          "Basic dXNlcjpwdw==",
		"bearer without":      "Bearer ",
		"two tokens":          "Bearer a b",
		"malformed token":     "Bearer kmt_tooshort",
		"not a token":         "Bearer hello",
		"unknown token":       "Bearer " + graph.TokenPrefix + strings.Repeat("Z", 43),
		"expired token":       "Bearer " + expired,
		"jwt wrong signature": "Bearer " + otherKey,
		"jwt wrong audience":  "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { c["aud"] = "someone-else" })),
		"jwt expired":         "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })),
		"jwt without exp":     "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { delete(c, "exp") })),
		"jwt not yet valid":   "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() })),
		"jwt without tenant":  "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { delete(c, "tenant") })),
		"jwt bad tenant":      "Bearer " + hsJWT(t, claims(func(c jwt.MapClaims) { c["tenant"] = "../other" })),
		"jwt alg none":        "Bearer " + noneJWT(t, claims(nil)),
	} {
		var r reply
		if header == "" {
			r = send(t, url, "", ping)
		} else {
			r = send(t, url, "", ping, "Authorization", header)
		}
		want401(t, name, r, srv.URL)
	}

	// Missing token: no error attribute (RFC 6750 §3.1); a bad one says why.
	if ch := send(t, url, "", ping).Header.Get("WWW-Authenticate"); strings.Contains(ch, "error=") {
		t.Errorf("challenge without a token carries an error: %q", ch)
	}
	r := send(t, url, "", ping, "Authorization", "Bearer "+expired)
	if ch := r.Header.Get("WWW-Authenticate"); !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(r.Error.Message, "expired") {
		t.Errorf("expired token: challenge %q message %q", ch, r.Error.Message)
	}
}

func TestRevocationTakesEffectOnNextRequest(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	secret, tok, err := c.CreateToken(ctx, dgraphtest.TenantName(t), []knowmind.Scope{knowmind.ScopeRead}, "revoke-me", nil)
	if err != nil {
		t.Fatal(err)
	}
	sid := openSession(t, url, secret)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if r := send(t, url, secret, list, "Mcp-Session-Id", sid); r.Status != http.StatusOK {
		t.Fatalf("before revocation: HTTP %d", r.Status)
	}
	if err := c.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	want401(t, "revoked, same session", send(t, url, secret, list, "Mcp-Session-Id", sid), srv.URL)
	want401(t, "revoked, one-shot", callTool(t, url, secret, "knowmind_health", map[string]any{}), srv.URL)
}

func TestLastUsedRecorded(t *testing.T) {
	srv := newTestServer(t, nil)
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	secret, tok, err := c.CreateToken(ctx, dgraphtest.TenantName(t), []knowmind.Scope{knowmind.ScopeRead}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	callTool(t, srv.URL+"/api/mcp/v1", secret, "knowmind_health", map[string]any{})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		toks, err := c.ListTokens(ctx, tok.Tenant)
		if err == nil && len(toks) == 1 && toks[0].LastUsedAt != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("last_used_at not recorded after a request")
}

func TestJWTs(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var pemData []byte
	for _, pub := range []any{&rsaKey.PublicKey, &ecKey.PublicKey} {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	keys, err := ParsePublicKeys(pemData)
	if err != nil || len(keys) != 2 {
		t.Fatalf("ParsePublicKeys: %d keys, %v", len(keys), err)
	}
	srv := newTestServer(t, func(d *Deps) { d.JWT.PublicKeys, d.JWT.CreateTenants = keys, true })
	url := srv.URL + "/api/mcp/v1"

	// With CreateTenants a JWT's tenant needs no token beforehand: its namespace is created on first use.
	tenant := dgraphtest.TenantName(t)
	claims := jwt.MapClaims{"tenant": tenant, "scope": "openid read", "aud": testJWTAudience, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}
	rs, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(rsaKey)
	es, _ := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(ecKey)
	for name, token := range map[string]string{"HS256": hsJWT(t, claims), "RS256": rs, "ES256": es} {
		var stats knowmind.Stats
		structured(t, callTool(t, url, token, "knowmind_stats", map[string]any{}), &stats)
		if stats != (knowmind.Stats{}) {
			t.Errorf("%s: fresh tenant stats %+v", name, stats)
		}
	}

	// scopes as an array; no read scope → -32002.
	noRead := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scopes": []string{"profile"}, "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()})
	wantRPCError(t, callTool(t, url, noRead, "knowmind_stats", map[string]any{}), codeScope, "")
	var h HealthResult
	structured(t, callTool(t, url, noRead, "knowmind_health", map[string]any{}), &h)
	withArray := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scopes": []string{"write"}, "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()})
	var st knowmind.Stats
	structured(t, callTool(t, url, withArray, "knowmind_stats", map[string]any{}), &st)

	// An RS256 token signed by another key is refused.
	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(otherKey)
	want401(t, "RS256 by an unknown key", callTool(t, url, forged, "knowmind_stats", map[string]any{}), srv.URL)
}

// noneJWT is an unsigned token (alg "none"), which must never be accepted.
func noneJWT(t *testing.T, claims jwt.MapClaims) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
