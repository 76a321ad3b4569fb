// Package oauth makes knowmind an OAuth 2.1 resource server for an external
// authorization server: it finds the issuer's signing keys (RFC 8414 or
// OpenID discovery → jwks_uri), keeps them cached, fetches them again when
// they age or a token names a key it does not know (rotation), and verifies
// access tokens (signature, iss, aud, exp, nbf) into a tenant and knowmind
// scopes.
//
// It knows nothing of HTTP handlers, MCP or Dgraph: package handlers turns a
// Claims into a principal and an error into 401 or 503.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/knowmind/knowmind"
)

// Defaults of Config.
const (
	DefaultTenantClaim = "tenant"
	// DefaultMaxKeyAge: keys older than this are fetched again on the next
	// token, so a key the issuer withdrew stops working within the hour.
	DefaultMaxKeyAge = time.Hour
	// DefaultRefetchInterval bounds JWKS fetches caused by tokens naming an
	// unknown kid: a flood of forged kids costs the issuer one fetch a minute.
	DefaultRefetchInterval = time.Minute
	fetchTimeout           = 10 * time.Second
	maxDocumentBytes       = 1 << 20
	leeway                 = 30 * time.Second
)

// Algorithms accepted in access tokens: asymmetric only, since the
// authorization server alone must be able to sign.
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Config says which issuer to trust and how to read its tokens.
type Config struct {
	// Issuer is the authorization server's issuer identifier (its metadata's
	// "issuer"), e.g. https://auth.example.com/realms/knowmind.
	Issuer string
	// Audiences: a token's aud must hold one of them (RFC 8707 / RFC 9068:
	// the resource's URL or an API identifier). Required.
	Audiences []string
	// TenantClaim names the claim holding the tenant; "" = "tenant".
	TenantClaim string
	// DefaultTenant is used when a token lacks the tenant claim; "" = such
	// tokens are refused.
	DefaultTenant string
	// ScopeMap maps the issuer's scope values to knowmind scopes; nil = the
	// identity read→read, write→write, admin→admin. Unmapped scopes
	// (openid, profile, ...) are ignored.
	ScopeMap map[string]knowmind.Scope
	// MaxKeyAge, RefetchInterval: see the defaults.
	MaxKeyAge       time.Duration
	RefetchInterval time.Duration
	HTTPClient      *http.Client // nil = a client with a 10 s timeout
	Logger          *slog.Logger
}

// Claims is what a verified access token says about its caller.
type Claims struct {
	Issuer  string
	Subject string
	Tenant  string
	Scopes  []knowmind.Scope
	Expiry  time.Time
}

// ErrInvalid wraps every reason to refuse a token (answer 401).
var ErrInvalid = errors.New("invalid token")

var errWrongIssuer = errors.New("wrong issuer")

// ErrUnavailable: the issuer's keys could not be fetched (answer 503; the
// token may well be valid).
var ErrUnavailable = errors.New("authorization server keys unavailable")

// Verifier verifies access tokens of one issuer. Safe for concurrent use.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser
	keys   *keySet
}

// New checks cfg and returns a Verifier. It fetches nothing yet: the first
// token (or Prefetch) does, so the service starts while the issuer is down.
func New(cfg Config) (*Verifier, error) {
	cfg.Issuer = strings.TrimSpace(cfg.Issuer)
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: issuer required")
	}
	if err := checkIssuerURL(cfg.Issuer); err != nil {
		return nil, err
	}
	if len(cfg.Audiences) == 0 {
		return nil, errors.New("oauth: at least one audience is required (the resource URL or an API identifier)")
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = DefaultTenantClaim
	}
	if cfg.ScopeMap == nil {
		cfg.ScopeMap = map[string]knowmind.Scope{"read": knowmind.ScopeRead, "write": knowmind.ScopeWrite, "admin": knowmind.ScopeAdmin}
	}
	if cfg.MaxKeyAge <= 0 {
		cfg.MaxKeyAge = DefaultMaxKeyAge
	}
	if cfg.RefetchInterval <= 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: fetchTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &Verifier{cfg: cfg, keys: newKeySet(cfg)}
	v.parser = jwt.NewParser(jwt.WithValidMethods(Algorithms),
		jwt.WithAudience(cfg.Audiences...), jwt.WithExpirationRequired(), jwt.WithLeeway(leeway))
	return v, nil
}

// Issuer is the trusted issuer identifier, as configured.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// IssuerScopes are the issuer's scope values that grant s, sorted: what a
// client asks the issuer for when a call needs s (step-up authorization).
func (v *Verifier) IssuerScopes(s knowmind.Scope) []string {
	var out []string
	for issuer, sc := range v.cfg.ScopeMap {
		if sc == s {
			out = append(out, issuer)
		}
	}
	slices.Sort(out)
	return out
}

// Prefetch discovers the issuer's metadata and fetches its keys, e.g. at
// start-up to report a misconfiguration early.
func (v *Verifier) Prefetch(ctx context.Context) error {
	return v.keys.refresh(ctx, time.Time{})
}

// Accepts reports whether token claims (unverified) to come from this
// issuer, so a caller with other token kinds knows which one to try.
func (v *Verifier) Accepts(token string) bool {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return false
	}
	return issuersEqual(c.Issuer, v.cfg.Issuer)
}

// Verify checks token and returns its claims. Errors wrap ErrInvalid (with
// a reason fit for the client) or ErrUnavailable.
func (v *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		// Before any key lookup: another issuer's token must not make us
		// fetch keys.
		if iss, _ := claims.GetIssuer(); !issuersEqual(iss, v.cfg.Issuer) {
			return nil, errWrongIssuer
		}
		kid, _ := t.Header["kid"].(string)
		return v.keys.lookup(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		switch {
		case errors.Is(err, ErrUnavailable):
			return Claims{}, err
		case errors.Is(err, jwt.ErrTokenExpired):
			return Claims{}, fmt.Errorf("%w: token expired", ErrInvalid)
		case errors.Is(err, jwt.ErrTokenInvalidAudience):
			return Claims{}, fmt.Errorf("%w: wrong audience", ErrInvalid)
		case errors.Is(err, errWrongIssuer):
			return Claims{}, fmt.Errorf("%w: wrong issuer", ErrInvalid)
		case errors.Is(err, errUnknownKey):
			return Claims{}, fmt.Errorf("%w: unknown signing key", ErrInvalid)
		}
		return Claims{}, fmt.Errorf("%w: %s", ErrInvalid, shortReason(err))
	}
	out := Claims{Issuer: v.cfg.Issuer}
	out.Subject, _ = claims["sub"].(string)
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		out.Expiry = exp.Time
	}
	switch tenant := claims[v.cfg.TenantClaim].(type) {
	case string:
		out.Tenant = tenant
	case nil:
		out.Tenant = v.cfg.DefaultTenant
	}
	if out.Tenant == "" {
		return Claims{}, fmt.Errorf("%w: tenant claim %q missing", ErrInvalid, v.cfg.TenantClaim)
	}
	seen := map[knowmind.Scope]bool{}
	for _, s := range scopeValues(claims) {
		if sc, ok := v.cfg.ScopeMap[s]; ok && !seen[sc] {
			seen[sc] = true
			out.Scopes = append(out.Scopes, sc)
		}
	}
	return out, nil
}

// scopeValues reads "scope" (RFC 9068: space-separated), "scp" (string or
// array, as some identity providers send it) and "scopes" (array).
func scopeValues(c jwt.MapClaims) []string {
	var out []string
	for _, name := range []string{"scope", "scp", "scopes"} {
		switch v := c[name].(type) {
		case string:
			out = append(out, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if str, ok := s.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

func shortReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "bad signature"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "not valid yet"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "required claim (exp, aud) missing"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "unverifiable"
	}
	return "rejected"
}

// issuersEqual compares issuer identifiers, ignoring one trailing slash
// (identity providers differ in whether their metadata has it).
func issuersEqual(a, b string) bool {
	return a != "" && strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
