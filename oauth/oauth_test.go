package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/oauth"
	"github.com/knowmind/knowmind/oauth/oauthtest"
)

const aud = "https://knowmind.example/api/mcp/v1"

func newVerifier(t *testing.T, is *oauthtest.Issuer, edit func(*oauth.Config)) *oauth.Verifier {
	t.Helper()
	cfg := oauth.Config{Issuer: is.URL, Audiences: []string{aud}, RefetchInterval: 50 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	v, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyClaims(t *testing.T) {
	is := oauthtest.New(t, aud, map[string]any{"tenant": "acme"})
	v := newVerifier(t, is, nil)
	ctx := context.Background()

	c, err := v.Verify(ctx, is.Sign(map[string]any{"scope": "openid write profile", "sub": "alice"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tenant != "acme" || c.Subject != "alice" || !slices.Equal(c.Scopes, []knowmind.Scope{knowmind.ScopeWrite}) || c.Expiry.Before(time.Now()) {
		t.Fatalf("claims %+v", c)
	}
	// scp as an array (some identity providers send it so).
	c, err = v.Verify(ctx, is.Sign(map[string]any{"scp": []any{"read", "admin"}}))
	if err != nil || !slices.Equal(c.Scopes, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeAdmin}) {
		t.Fatalf("scp array: %+v %v", c, err)
	}

	for name, tc := range map[string]struct {
		claims map[string]any
		reason string
	}{
		"expired":        {map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}, "expired"},
		"no exp":         {map[string]any{"exp": nil}, "missing"},
		"not yet valid":  {map[string]any{"nbf": time.Now().Add(time.Hour).Unix()}, "not valid yet"},
		"wrong audience": {map[string]any{"aud": "https://other.example"}, "wrong audience"},
		"no audience":    {map[string]any{"aud": nil}, "missing"},
		"wrong issuer":   {map[string]any{"iss": "https://evil.example"}, "wrong issuer"},
		"no tenant":      {map[string]any{"tenant": nil}, `tenant claim "tenant" missing`},
	} {
		_, err := v.Verify(ctx, is.Sign(tc.claims))
		if !errors.Is(err, oauth.ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", name, err, tc.reason)
		}
	}

	// Another issuer's token (its own keys, its own iss) is refused without
	// fetching anything from ours.
	other := oauthtest.New(t, aud, map[string]any{"tenant": "acme"})
	before := is.JWKSFetches()
	if _, err := v.Verify(ctx, other.Sign(nil)); !errors.Is(err, oauth.ErrInvalid) {
		t.Fatalf("other issuer: %v", err)
	}
	if v.Accepts(other.Sign(nil)) || !v.Accepts(is.Sign(nil)) {
		t.Error("Accepts must tell the issuers apart")
	}
	// Our iss, someone else's key.
	forged := other.Sign(map[string]any{"iss": is.URL})
	if _, err := v.Verify(ctx, forged); !errors.Is(err, oauth.ErrInvalid) {
		t.Fatalf("forged: %v", err)
	}
	if got := is.JWKSFetches() - before; got > 1 {
		t.Errorf("%d JWKS fetches for foreign tokens, want at most one (the forged kid's)", got)
	}
}

func TestClaimAndScopeMapping(t *testing.T) {
	is := oauthtest.New(t, aud, map[string]any{"https://knowmind.example/tenant": "beta"})
	v := newVerifier(t, is, func(c *oauth.Config) {
		c.TenantClaim = "https://knowmind.example/tenant"
		c.ScopeMap = map[string]knowmind.Scope{"knowmind:read": knowmind.ScopeRead, "knowmind:write": knowmind.ScopeWrite}
	})
	c, err := v.Verify(context.Background(), is.Sign(map[string]any{"scope": "read knowmind:read knowmind:write"}))
	if err != nil || c.Tenant != "beta" || !slices.Equal(c.Scopes, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}) {
		t.Fatalf("%+v %v", c, err)
	}
	def := newVerifier(t, is, func(c *oauth.Config) { c.DefaultTenant = "personal" })
	if c, err := def.Verify(context.Background(), is.Sign(nil)); err != nil || c.Tenant != "personal" {
		t.Fatalf("default tenant: %+v %v", c, err)
	}
}

// Keys are fetched once and cached; a token signed by a new key makes one
// refetch; a withdrawn key stops working once the set was fetched again; a
// flood of unknown kids makes at most one fetch per RefetchInterval.
func TestKeyRotation(t *testing.T) {
	is := oauthtest.New(t, aud, map[string]any{"tenant": "acme"})
	v := newVerifier(t, is, func(c *oauth.Config) { c.RefetchInterval = 300 * time.Millisecond })
	ctx := context.Background()
	old := is.Sign(nil)
	for range 5 {
		if _, err := v.Verify(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.JWKSFetches(); n != 1 {
		t.Fatalf("%d JWKS fetches for five tokens, want 1 (cached)", n)
	}

	time.Sleep(300 * time.Millisecond)
	is.Rotate(t, false)
	rotated := is.Sign(nil)
	if _, err := v.Verify(ctx, rotated); err != nil {
		t.Fatalf("token of the rotated key: %v", err)
	}
	if n := is.JWKSFetches(); n != 2 {
		t.Fatalf("JWKS fetches after rotation = %d, want 2", n)
	}
	if _, err := v.Verify(ctx, old); !errors.Is(err, oauth.ErrInvalid) || !strings.Contains(err.Error(), "unknown signing key") {
		t.Fatalf("token of the withdrawn key: %v", err)
	}

	// Forged kids right after a fetch: no further fetch until the interval passed.
	fetches := is.JWKSFetches()
	for range 20 {
		forged := strings.Split(is.Sign(nil), ".")
		hdr, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": "forged-" + forged[2][:8]})
		forged[0] = base64.RawURLEncoding.EncodeToString(hdr)
		if _, err := v.Verify(ctx, strings.Join(forged, ".")); !errors.Is(err, oauth.ErrInvalid) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	if n := is.JWKSFetches() - fetches; n > 1 {
		t.Fatalf("%d JWKS fetches for 20 forged kids within the refetch interval, want at most 1", n)
	}

	// A graceful rotation (old key still published) keeps both working.
	time.Sleep(300 * time.Millisecond)
	is.Rotate(t, true)
	newer := is.Sign(nil)
	for _, tok := range []string{rotated, newer} {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("graceful rotation: %v", err)
		}
	}
}

// Keys age out: after MaxKeyAge a token makes a background fetch and is
// checked with the keys held; once the issuer withdrew the key, the next
// fetch ends it. An unreachable issuer leaves aged keys in use.
func TestKeysExpire(t *testing.T) {
	is := oauthtest.New(t, aud, map[string]any{"tenant": "acme"})
	v := newVerifier(t, is, func(c *oauth.Config) { c.MaxKeyAge = 200 * time.Millisecond })
	ctx := context.Background()
	tok := is.Sign(nil)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	is.Rotate(t, false) // the key of tok is withdrawn
	time.Sleep(250 * time.Millisecond)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("aged keys are used while the refresh runs: %v", err)
	}
	waitFor(t, func() bool { return is.JWKSFetches() == 2 }, "background fetch after MaxKeyAge")
	waitFor(t, func() bool {
		_, err := v.Verify(ctx, tok)
		return errors.Is(err, oauth.ErrInvalid)
	}, "the withdrawn key refused after the refresh")

	fresh := is.Sign(nil)
	if _, err := v.Verify(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	is.Close()
	time.Sleep(250 * time.Millisecond)
	start := time.Now()
	for range 5 {
		if _, err := v.Verify(ctx, fresh); err != nil {
			t.Fatalf("issuer down, aged keys held: %v", err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("five tokens took %s with the issuer down: requests must not wait for fetches", d)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An issuer that cannot be reached makes tokens unverifiable (503), not
// invalid (401).
func TestIssuerUnavailable(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close()
	v, err := oauth.New(oauth.Config{Issuer: url, Audiences: []string{aud}})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": url, "aud": aud, "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("k"))
	if _, err := v.Verify(context.Background(), tok); err == nil || errors.Is(err, oauth.ErrUnavailable) {
		// HS256 is refused before any key is looked up.
		t.Fatalf("HS256: %v, want ErrInvalid", err)
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rs, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": url, "aud": aud, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(rsaKey)
	if _, err := v.Verify(context.Background(), rs); !errors.Is(err, oauth.ErrUnavailable) {
		t.Fatalf("issuer down: %v, want ErrUnavailable", err)
	}
	// Within the refetch interval the next token is answered at once, from the last failure.
	start := time.Now()
	if _, err := v.Verify(context.Background(), rs); !errors.Is(err, oauth.ErrUnavailable) || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("second token with the issuer down: %v after %s", err, time.Since(start))
	}
	if err := v.Prefetch(context.Background()); err == nil {
		t.Fatal("Prefetch against a closed server succeeded")
	}
}

// RSA keys from an OpenID Connect issuer (discovery at
// {issuer}/.well-known/openid-configuration, issuer with a path).
func TestOpenIDDiscoveryRSA(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	issuer := srv.URL + "/realms/km"
	mux.HandleFunc("GET /realms/km/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": srv.URL + "/realms/km/certs"})
	})
	mux.HandleFunc("GET /realms/km/certs", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b64 := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "use": "enc", "kid": "enc1", "n": b64(key.N.Bytes()), "e": "AQAB"},
			{"kty": "RSA", "use": "sig", "kid": "rs1", "alg": "RS256", "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())},
		}})
	})
	v, err := oauth.New(oauth.Config{Issuer: issuer, Audiences: []string{"knowmind"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": issuer, "aud": []string{"account", "knowmind"},
		"exp": time.Now().Add(time.Minute).Unix(), "tenant": "acme", "scope": "read"})
	tok.Header["kid"] = "rs1"
	s, _ := tok.SignedString(key)
	if c, err := v.Verify(context.Background(), s); err != nil || c.Tenant != "acme" {
		t.Fatalf("%+v %v", c, err)
	}
	tok.Header["kid"] = "enc1" // an encryption key must not verify signatures
	s, _ = tok.SignedString(key)
	if _, err := v.Verify(context.Background(), s); !errors.Is(err, oauth.ErrInvalid) {
		t.Fatalf("signed with the enc key's kid: %v", err)
	}
}

func TestConfigChecks(t *testing.T) {
	for name, cfg := range map[string]oauth.Config{
		"no issuer":     {Audiences: []string{aud}},
		"http issuer":   {Issuer: "http://auth.example.com", Audiences: []string{aud}},
		"no audience":   {Issuer: "https://auth.example.com"},
		"relative path": {Issuer: "/auth", Audiences: []string{aud}},
	} {
		if _, err := oauth.New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// BenchmarkVerify: one access token checked against cached keys (ES256),
// the cost every OAuth request pays before its tool runs.
func BenchmarkVerify(b *testing.B) {
	is := oauthtest.New(b, aud, map[string]any{"tenant": "acme"})
	v, err := oauth.New(oauth.Config{Issuer: is.URL, Audiences: []string{aud}})
	if err != nil {
		b.Fatal(err)
	}
	tok := is.Sign(map[string]any{"scope": "read write"})
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
	if is.JWKSFetches() != 1 {
		b.Fatalf("JWKS fetched %d times", is.JWKSFetches())
	}
}
