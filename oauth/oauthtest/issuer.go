// Package oauthtest is a small OAuth 2.1 authorization server for tests: RFC
// 8414 metadata, a JWKS, and a token endpoint for the client credentials
// grant. Keys are generated in the test and can be rotated.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is a running test authorization server.
type Issuer struct {
	URL string // issuer identifier and base URL
	// Audience goes into every token's aud; Claims are added to every token
	// (e.g. the tenant).
	Audience string
	Claims   map[string]any
	// ClientID and ClientSecret are the one registered client.
	ClientID, ClientSecret string

	srv         *httptest.Server
	mu          sync.Mutex
	keys        []signingKey // published; the last one signs
	jwksFetches atomic.Int64
}

type signingKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

// New starts an issuer whose tokens carry aud and claims; it stops with t.
func New(t testing.TB, aud string, claims map[string]any) *Issuer {
	t.Helper()
	is := &Issuer{Audience: aud, Claims: claims, ClientID: "test-client", ClientSecret: "test-client-secret"}
	is.keys = []signingKey{newKey(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", is.metadata)
	mux.HandleFunc("GET /jwks", is.jwks)
	mux.HandleFunc("POST /token", is.token)
	is.srv = httptest.NewServer(mux)
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

func newKey(t testing.TB) signingKey {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	kid := make([]byte, 6)
	_, _ = rand.Read(kid)
	return signingKey{kid: hex.EncodeToString(kid), priv: priv}
}

// Rotate makes a new signing key. keepOld keeps the previous keys in the
// JWKS (a graceful rotation); otherwise they are withdrawn.
func (is *Issuer) Rotate(t testing.TB, keepOld bool) {
	k := newKey(t)
	is.mu.Lock()
	defer is.mu.Unlock()
	if keepOld {
		is.keys = append(is.keys, k)
	} else {
		is.keys = []signingKey{k}
	}
}

// Close stops the server (an issuer that went away).
func (is *Issuer) Close() { is.srv.Close() }

// JWKSFetches counts GETs of the JWKS.
func (is *Issuer) JWKSFetches() int { return int(is.jwksFetches.Load()) }

// Sign issues a token: iss, aud, exp (an hour), iat and the issuer's Claims,
// then extra (which may override or, with nil values, delete any of them).
func (is *Issuer) Sign(extra map[string]any) string {
	now := time.Now()
	c := jwt.MapClaims{"iss": is.URL, "aud": is.Audience, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "sub": "test-user"}
	for k, v := range is.Claims {
		c[k] = v
	}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	is.mu.Lock()
	k := is.keys[len(is.keys)-1]
	is.mu.Unlock()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = k.kid
	tok.Header["typ"] = "at+jwt"
	s, err := tok.SignedString(k.priv)
	if err != nil {
		panic(err)
	}
	return s
}

func (is *Issuer) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer":                                is.URL,
		"authorization_endpoint":                is.URL + "/authorize",
		"token_endpoint":                        is.URL + "/token",
		"jwks_uri":                              is.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (is *Issuer) jwks(w http.ResponseWriter, _ *http.Request) {
	is.jwksFetches.Add(1)
	is.mu.Lock()
	defer is.mu.Unlock()
	var keys []map[string]string
	for _, k := range is.keys {
		b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
		pub, _ := k.priv.PublicKey.Bytes() // 0x04 || X || Y
		keys = append(keys, map[string]string{"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": k.kid,
			"x": b64(pub[1:33]), "y": b64(pub[33:])})
	}
	writeJSON(w, map[string]any{"keys": keys})
}

// token serves the client credentials grant (RFC 6749 §4.4): the scopes
// asked for are granted.
func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != is.ClientID || secret != is.ClientSecret {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]string{"error": "invalid_client"})
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	scope := strings.Join(strings.Fields(r.PostForm.Get("scope")), " ")
	writeJSON(w, map[string]any{
		"access_token": is.Sign(map[string]any{"scope": scope, "sub": id, "client_id": id}),
		"token_type":   "Bearer",
		"expires_in":   3600,
		"scope":        scope,
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
