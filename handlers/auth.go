package handlers

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/oauth"
)

// Authentication happens at HTTP level, before the MCP SDK sees a request:
// a kmt_ token (looked up by hash in Dgraph on every request, so revocation
// is immediate), an access token of the configured OAuth issuer (package
// oauth: keys from the issuer's JWKS) or a JWT signed with a configured key.
// Failures are 401 with WWW-Authenticate
// pointing at the RFC 9728 metadata. Success yields an auth.TokenInfo whose
// Extra carries the knowmind.Principal; the SDK hands it to every MCP request
// and pins each session to its token's UserID.

// Keys of auth.TokenInfo.Extra.
const (
	extraPrincipal = "principal" // knowmind.Principal
	extraJWT       = "jwt"       // true for JWT principals
	extraCreate    = "create"    // true: the principal's tenant gets its workspace on first use
	// extraOutputSchemas: the request asked tools/list for output schemas (toolsets.go).
	extraOutputSchemas = "output_schemas"
	// extraRefusal: the error a tools/call's arguments already earned before
	// the SDK decoded them (refuseOversized, bodybudget.go).
	extraRefusal = "refusal"
)

// touchEvery throttles last_used_at writes: bookkeeping, not security.
const touchEvery = time.Minute

// tokenLookupTimeout bounds the Dgraph lookup of a kmt_ token, so a paused
// store answers 503 in time for knowmind_health's promise (health.go)
// instead of holding the request until the client gives up. A store that is
// merely slow does not lock out the tokens in use: one the store confirmed
// within slowStoreGrace stands in for a lookup that ran out of time.
const (
	tokenLookupTimeout = time.Second
	slowStoreGrace     = time.Minute
)

// JWTConfig enables signed JWT bearer tokens beside kmt_ tokens, for
// deployments with an identity provider. Claims: tenant (string, under
// TenantClaim), scope (space-separated) or scopes (array), exp (required),
// nbf, aud, iss.
type JWTConfig struct {
	Secret     []byte             // HS256 key; empty = no HS256
	PublicKeys []crypto.PublicKey // *rsa.PublicKey for RS256, P-256 *ecdsa.PublicKey for ES256
	Audience   string             // required aud; "" = aud not checked
	Issuer     string             // required iss; "" = iss not checked
	// TenantClaim names the claim holding the tenant; "" = "tenant".
	TenantClaim string
	// CreateTenants lets a JWT whose tenant has no workspace yet create it;
	// off, such a JWT is refused (403) and workspaces come from `knowmind
	// tenant create` or `token create`.
	CreateTenants bool
}

func (c JWTConfig) enabled() bool { return len(c.Secret) > 0 || len(c.PublicKeys) > 0 }

// ParsePublicKeys reads RS256/ES256 verification keys from PEM blocks
// (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE).
func ParsePublicKeys(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var key any
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", block.Type, err)
		}
		switch k := key.(type) {
		case *rsa.PublicKey:
			keys = append(keys, k)
		case *ecdsa.PublicKey:
			if k.Curve != elliptic.P256() {
				return nil, errors.New("only P-256 ECDSA keys (ES256) are supported")
			}
			keys = append(keys, k)
		default:
			return nil, fmt.Errorf("unsupported public key type %T", key)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no public key found in PEM data")
	}
	return keys, nil
}

// TokenStore is what authentication needs: a graph.Client, or the cells' directory.
type TokenStore interface {
	VerifyToken(ctx context.Context, plaintext string) (graph.Token, error)
	TouchToken(ctx context.Context, id string, at time.Time) error
}

type authenticator struct {
	tokens    TokenStore
	oauth     *oauth.Verifier // nil = no OAuth issuer
	jwt       JWTConfig
	jwtParser *jwt.Parser
	log       *slog.Logger
	lastTouch sync.Map // token id → time.Time of the last last_used_at write
	// verified holds the hashes of kmt_ tokens that authenticated since
	// start (at most maxVerified): they are looked up even from an address
	// whose failed-lookup budget strangers have spent. Each is still looked
	// up, so revocation stays immediate while the store answers.
	verifiedMu sync.Mutex
	verified   map[string]verifiedToken
}

// verifiedToken is a kmt_ token as the store last confirmed it.
type verifiedToken struct {
	tok graph.Token
	at  time.Time
}

// maxVerified bounds the remembered token hashes (64 bytes each).
const maxVerified = 100_000

func newAuthenticator(tokens TokenStore, cfg JWTConfig, log *slog.Logger) *authenticator {
	a := &authenticator{tokens: tokens, jwt: cfg, log: log}
	if cfg.enabled() {
		var methods []string
		if len(cfg.Secret) > 0 {
			methods = append(methods, "HS256")
		}
		for _, k := range cfg.PublicKeys {
			switch k.(type) {
			case *rsa.PublicKey:
				methods = append(methods, "RS256")
			case *ecdsa.PublicKey:
				methods = append(methods, "ES256")
			}
		}
		opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(), jwt.WithLeeway(30 * time.Second)}
		if cfg.Audience != "" {
			opts = append(opts, jwt.WithAudience(cfg.Audience))
		}
		if cfg.Issuer != "" {
			opts = append(opts, jwt.WithIssuer(cfg.Issuer))
		}
		a.jwtParser = jwt.NewParser(opts...)
	}
	return a
}

// authenticate verifies the request's bearer token. Errors are EUNAUTHORIZED
// (answer 401 with the message) or anything else (the store failed: 503).
func (a *authenticator) authenticate(r *http.Request) (*auth.TokenInfo, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "bearer token missing")
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "malformed Authorization header (want: Bearer <token>)")
	}
	if strings.HasPrefix(token, graph.TokenPrefix) {
		return a.opaque(r.Context(), token)
	}
	if strings.Count(token, ".") == 2 {
		if a.oauth != nil && (a.jwtParser == nil || a.oauth.Accepts(token)) {
			return a.accessToken(r.Context(), token)
		}
		if a.jwtParser != nil {
			return a.parseJWT(token)
		}
	}
	return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "malformed token")
}

// costsLookup reports whether authenticating r asks Dgraph (a kmt_ token)
// while its token has not been seen valid before: only such requests spend
// and are refused by a client address's failed-lookup budget.
func (a *authenticator) costsLookup(r *http.Request) bool {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(token, graph.TokenPrefix) {
		return false
	}
	a.verifiedMu.Lock()
	defer a.verifiedMu.Unlock()
	_, known := a.verified[graph.HashToken(token)]
	return !known
}

func (a *authenticator) opaque(ctx context.Context, token string) (*auth.TokenInfo, error) {
	hash := graph.HashToken(token)
	lookup, cancel := context.WithTimeout(ctx, tokenLookupTimeout)
	defer cancel()
	tok, err := a.tokens.VerifyToken(lookup, token)
	now := time.Now()
	switch {
	case err == nil:
		a.verifiedMu.Lock()
		if a.verified == nil || len(a.verified) >= maxVerified {
			a.verified = map[string]verifiedToken{} // forgetting costs only a lookup counted again
		}
		a.verified[hash] = verifiedToken{tok: tok, at: now}
		a.verifiedMu.Unlock()
		a.touch(tok)
	case ctx.Err() == nil && (lookup.Err() != nil || graph.Unreachable(err)):
		// The store did not answer in time (the caller is still waiting).
		a.verifiedMu.Lock()
		v, ok := a.verified[hash]
		a.verifiedMu.Unlock()
		if !ok || now.Sub(v.at) > slowStoreGrace || (v.tok.ExpiresAt != nil && !now.Before(*v.tok.ExpiresAt)) {
			return nil, err
		}
		tok = v.tok
	default:
		return nil, err
	}
	p := tok.Principal()
	ti := &auth.TokenInfo{UserID: p.TokenID, Scopes: scopeStrings(p.Scopes),
		Extra: map[string]any{extraPrincipal: p, extraJWT: false}}
	if tok.ExpiresAt != nil {
		ti.Expiration = *tok.ExpiresAt
	}
	return ti, nil
}

// touch records last_used_at at most once a minute per token, off the
// request path.
func (a *authenticator) touch(tok graph.Token) {
	now := time.Now()
	if tok.LastUsedAt != nil && now.Sub(*tok.LastUsedAt) < touchEvery {
		return
	}
	if last, ok := a.lastTouch.Load(tok.ID); ok && now.Sub(last.(time.Time)) < touchEvery {
		return
	}
	a.lastTouch.Store(tok.ID, now)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.tokens.TouchToken(ctx, tok.ID, now); err != nil {
			a.log.Warn("record token use", "token", tok.ID, "err", err)
		}
	}()
}

func (a *authenticator) parseJWT(token string) (*auth.TokenInfo, error) {
	claims := jwt.MapClaims{}
	_, err := a.jwtParser.ParseWithClaims(token, claims, a.jwtKey)
	if err != nil {
		if errors.Is(err, jwt.ErrTokenExpired) {
			return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "token expired")
		}
		return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token")
	}
	tenantClaim := a.jwt.TenantClaim
	if tenantClaim == "" {
		tenantClaim = "tenant"
	}
	tenant, _ := claims[tenantClaim].(string)
	if graph.ValidTenantName(tenant) != nil {
		return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token: %s claim missing or invalid", tenantClaim)
	}
	scope, _ := claims["scope"].(string)
	var listed []string
	if list, ok := claims["scopes"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				listed = append(listed, s)
			}
		}
	}
	issuer, _ := claims.GetIssuer()
	subject, _ := claims.GetSubject()
	exp, _ := claims.GetExpirationTime()
	// Unknown scopes (openid, profile, ...) are an identity provider's, not ours.
	var scopes []knowmind.Scope
	for _, s := range append(strings.Fields(scope), listed...) {
		if sc, ok := knowmind.ParseScope(s); ok {
			scopes = append(scopes, sc)
		}
	}
	id := "jwt:" + issuer + ":" + subject
	if subject == "" {
		id = "jwt:" + issuer + ":tenant:" + tenant
	}
	p := knowmind.Principal{Tenant: tenant, Scopes: scopes, TokenID: id}
	return &auth.TokenInfo{UserID: id, Scopes: scopeStrings(scopes), Expiration: exp.Time,
		Extra: map[string]any{extraPrincipal: p, extraJWT: true, extraCreate: a.jwt.CreateTenants}}, nil
}

// accessToken verifies an access token of the OAuth issuer. Its tenant's
// namespace is created on first use, as for other JWTs.
func (a *authenticator) accessToken(ctx context.Context, token string) (*auth.TokenInfo, error) {
	c, err := a.oauth.Verify(ctx, token)
	if err != nil {
		if errors.Is(err, oauth.ErrInvalid) {
			return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "%s", err.Error())
		}
		return nil, err // issuer unreachable: 503
	}
	if graph.ValidTenantName(c.Tenant) != nil {
		return nil, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token: tenant claim invalid")
	}
	id := "oauth:" + c.Issuer + ":" + c.Subject
	if c.Subject == "" {
		id = "oauth:" + c.Issuer + ":tenant:" + c.Tenant
	}
	p := knowmind.Principal{Tenant: c.Tenant, Scopes: c.Scopes, TokenID: id}
	return &auth.TokenInfo{UserID: id, Scopes: scopeStrings(c.Scopes), Expiration: c.Expiry,
		Extra: map[string]any{extraPrincipal: p, extraJWT: true, extraCreate: true}}, nil
}

// jwtKey picks the verification keys for the token's algorithm; the parser
// has already refused algorithms that are not configured.
func (a *authenticator) jwtKey(t *jwt.Token) (any, error) {
	switch t.Method.Alg() {
	case "HS256":
		return a.jwt.Secret, nil
	case "RS256", "ES256":
		var set jwt.VerificationKeySet
		for _, k := range a.jwt.PublicKeys {
			_, isRSA := k.(*rsa.PublicKey)
			if isRSA == (t.Method.Alg() == "RS256") {
				set.Keys = append(set.Keys, k)
			}
		}
		return set, nil
	}
	return nil, fmt.Errorf("unexpected algorithm %s", t.Method.Alg())
}

func scopeStrings(s []knowmind.Scope) []string {
	out := make([]string, len(s))
	for i, sc := range s {
		out[i] = string(sc)
	}
	return out
}

// withTokenInfo puts ti into the request context under the SDK's own key
// (which is private: only auth.RequireBearerToken can set it). The token was
// verified already; the verifier here only hands the result over.
func withTokenInfo(next http.Handler) http.Handler {
	return auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		ti, ok := ctx.Value(tokenInfoKey{}).(*auth.TokenInfo)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return ti, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: time.Minute})(next)
}

type tokenInfoKey struct{}

// unauthorized answers 401 with the RFC 6750 challenge; with an OAuth
// issuer it names the RFC 9728 metadata (metadataURL "" = none).
// id is the request's JSON-RPC id when it could be read (nil otherwise).
func unauthorized(w http.ResponseWriter, metadataURL string, err *knowmind.Error, tokenPresent bool, id json.RawMessage) {
	challenge := `Bearer realm="knowmind"`
	if metadataURL != "" {
		challenge = fmt.Sprintf("Bearer resource_metadata=%q", metadataURL)
	}
	if tokenPresent {
		challenge += fmt.Sprintf(", error=\"invalid_token\", error_description=%q", err.Message)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeHTTPError(w, http.StatusUnauthorized, id, codeUnauthorize, err.Message, nil)
}

// resourceMetadata serves RFC 9728 protected resource metadata: the
// authorization server to get tokens from, which scopes exist and that
// tokens go in the Authorization header. It is served only with an OAuth
// issuer: the MCP authorization spec requires authorization_servers in it,
// and without one tokens come from `knowmind token create` instead.
func resourceMetadata(base func(*http.Request) string, issuer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, metadataPath)
		if path == "" || path == "/" {
			path = mcpPath
		}
		md := oauthex.ProtectedResourceMetadata{
			Resource:               base(r) + path,
			AuthorizationServers:   []string{issuer},
			ScopesSupported:        []string{"read", "write", "admin"},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "knowmind",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_ = json.NewEncoder(w).Encode(md)
	})
}

// withExtra is a copy of ti with the extra values set (ti itself may be shared).
func withExtra(ti *auth.TokenInfo, set map[string]any) *auth.TokenInfo {
	c := *ti
	c.Extra = maps.Clone(ti.Extra)
	maps.Copy(c.Extra, set)
	return &c
}
