package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var errUnknownKey = errors.New("unknown signing key")

// keySet is the issuer's JWKS as last fetched. Lookups read it under mu;
// fetches are serialised by fetchMu, so concurrent tokens naming the same
// new kid cause one fetch, not one each.
type keySet struct {
	cfg     Config
	fetchMu sync.Mutex

	mu        sync.RWMutex
	jwksURI   string // from the issuer's metadata; "" = not discovered yet
	byKid     map[string]jwk
	anonymous []jwk // keys without kid, tried for tokens without kid
	fetchedAt time.Time
	tried     time.Time // last fetch attempt, successful or not
	lastErr   error     // of that attempt

	refreshing atomic.Bool // a background refresh of aged keys runs
}

type jwk struct {
	alg string // "" = any algorithm fitting the key type
	key any
}

func newKeySet(cfg Config) *keySet { return &keySet{cfg: cfg} }

// lookup returns the verification key for kid.
//
// Every fetch is throttled to one per RefetchInterval, so neither forged
// kids nor an issuer that is down make each request wait for a fetch:
//   - no keys yet: fetch now; while fetches fail the token is unverifiable
//     (ErrUnavailable: 503, not 401);
//   - keys older than MaxKeyAge: fetch in the background and use the ones
//     held (an unreachable issuer leaves them in use);
//   - an unknown kid: fetch now, since the issuer may have rotated.
func (s *keySet) lookup(ctx context.Context, kid, alg string) (any, error) {
	s.mu.RLock()
	fetched, tried, lastErr := s.fetchedAt, s.tried, s.lastErr
	s.mu.RUnlock()
	due := time.Since(tried) >= s.cfg.RefetchInterval
	switch {
	case fetched.IsZero() && (due || tried.IsZero()):
		if err := s.refresh(ctx, tried); err != nil {
			s.cfg.Logger.Warn("oauth: fetch issuer keys", "issuer", s.cfg.Issuer, "err", err)
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	case fetched.IsZero():
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, lastErr)
	case time.Since(fetched) > s.cfg.MaxKeyAge && due && s.refreshing.CompareAndSwap(false, true):
		go func() {
			defer s.refreshing.Store(false)
			if err := s.refresh(context.WithoutCancel(ctx), tried); err != nil {
				s.cfg.Logger.Warn("oauth: refresh issuer keys; the held ones stay in use", "issuer", s.cfg.Issuer, "err", err)
			}
		}()
	}
	if k, ok := s.find(kid, alg); ok {
		return k, nil
	}
	s.mu.RLock()
	tried = s.tried
	s.mu.RUnlock()
	if time.Since(tried) < s.cfg.RefetchInterval {
		return nil, errUnknownKey
	}
	if err := s.refresh(ctx, tried); err != nil {
		s.cfg.Logger.Warn("oauth: refetch issuer keys for an unknown kid", "issuer", s.cfg.Issuer, "kid", kid, "err", err)
		return nil, errUnknownKey
	}
	if k, ok := s.find(kid, alg); ok {
		return k, nil
	}
	return nil, errUnknownKey
}

func (s *keySet) find(kid, alg string) (any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	candidates := s.anonymous
	if kid != "" {
		k, ok := s.byKid[kid]
		if !ok {
			return nil, false
		}
		candidates = []jwk{k}
	}
	for _, k := range candidates {
		if k.alg == "" || k.alg == alg {
			return k.key, true
		}
	}
	return nil, false
}

// refresh fetches the JWKS (discovering jwks_uri first if needed) unless
// another caller attempted a fetch after `since` while this one waited.
func (s *keySet) refresh(ctx context.Context, since time.Time) error {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.RLock()
	tried, jwksURI := s.tried, s.jwksURI
	s.mu.RUnlock()
	if tried.After(since) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.lastErr // fetched (or failed) while this caller waited
	}
	start := time.Now()
	s.mu.Lock()
	s.tried = start
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	err := s.fetch(ctx, jwksURI, start)
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
	return err
}

func (s *keySet) fetch(ctx context.Context, jwksURI string, start time.Time) error {
	if jwksURI == "" {
		var err error
		if jwksURI, err = discoverJWKSURI(ctx, s.cfg.HTTPClient, s.cfg.Issuer); err != nil {
			return err
		}
	}
	byKid, anonymous, err := fetchJWKS(ctx, s.cfg.HTTPClient, jwksURI)
	if err != nil {
		// The issuer may have moved its keys: discover again next time.
		s.mu.Lock()
		s.jwksURI = ""
		s.mu.Unlock()
		return err
	}
	s.mu.Lock()
	s.jwksURI, s.byKid, s.anonymous, s.fetchedAt = jwksURI, byKid, anonymous, start
	s.mu.Unlock()
	s.cfg.Logger.Info("oauth: issuer keys fetched", "issuer", s.cfg.Issuer, "jwks_uri", jwksURI, "keys", len(byKid)+len(anonymous))
	return nil
}

// metadataURLs are where an issuer's metadata may be: RFC 8414 (path after
// the well-known part), then OpenID Connect Discovery (path before it).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	root := u.Scheme + "://" + u.Host
	return []string{
		root + "/.well-known/oauth-authorization-server" + path,
		root + path + "/.well-known/openid-configuration",
	}
}

func discoverJWKSURI(ctx context.Context, c *http.Client, issuer string) (string, error) {
	var errs []error
	for _, mdURL := range metadataURLs(issuer) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, c, mdURL, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if !issuersEqual(md.Issuer, issuer) {
			return "", fmt.Errorf("metadata at %s names issuer %q, want %q", mdURL, md.Issuer, issuer)
		}
		if md.JWKSURI == "" {
			return "", fmt.Errorf("metadata at %s has no jwks_uri", mdURL)
		}
		if err := checkIssuerURL(md.JWKSURI); err != nil {
			return "", fmt.Errorf("jwks_uri: %w", err)
		}
		return md.JWKSURI, nil
	}
	return "", fmt.Errorf("no authorization server metadata for %s: %w", issuer, errors.Join(errs...))
}

func fetchJWKS(ctx context.Context, c *http.Client, jwksURI string) (map[string]jwk, []jwk, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := getJSON(ctx, c, jwksURI, &doc); err != nil {
		return nil, nil, err
	}
	byKid := map[string]jwk{}
	var anonymous []jwk
	for _, raw := range doc.Keys {
		kid, k, err := parseJWK(raw)
		if err != nil {
			continue // a key type we do not use (e.g. an encryption key) must not hide the others
		}
		if kid == "" {
			anonymous = append(anonymous, k)
		} else {
			byKid[kid] = k
		}
	}
	if len(byKid)+len(anonymous) == 0 {
		return nil, nil, fmt.Errorf("JWKS at %s holds no usable signing key", jwksURI)
	}
	return byKid, anonymous, nil
}

// parseJWK reads an RSA, EC (P-256/384/521) or OKP (Ed25519) public key.
func parseJWK(raw json.RawMessage) (string, jwk, error) {
	var k struct {
		Kty, Kid, Use, Alg, Crv, N, E, X, Y string
	}
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", jwk{}, err
	}
	if k.Use != "" && k.Use != "sig" {
		return "", jwk{}, errors.New("not a signing key")
	}
	b64 := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil {
			return nil
		}
		return b
	}
	out := jwk{alg: k.Alg}
	switch k.Kty {
	case "RSA":
		n, e := b64(k.N), b64(k.E)
		if len(n) < 256 || len(e) == 0 || len(e) > 4 { // RSA keys under 2048 bits are refused
			return "", jwk{}, errors.New("bad RSA key")
		}
		out.key = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return "", jwk{}, errors.New("unsupported curve")
		}
		x, y := b64(k.X), b64(k.Y)
		size := (curve.Params().BitSize + 7) / 8
		if len(x) != size || len(y) != size {
			return "", jwk{}, errors.New("bad EC key")
		}
		// ecdsa.ParseUncompressedPublicKey checks the point is on the curve.
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return "", jwk{}, err
		}
		out.key = pub
	case "OKP":
		x := b64(k.X)
		if k.Crv != "Ed25519" || len(x) != ed25519.PublicKeySize {
			return "", jwk{}, errors.New("unsupported OKP key")
		}
		out.key = ed25519.PublicKey(x)
	default:
		return "", jwk{}, errors.New("unsupported key type")
	}
	return k.Kid, out, nil
}

func getJSON(ctx context.Context, c *http.Client, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && mt != "application/jwk-set+json" {
		return fmt.Errorf("GET %s: content type %q, want application/json", u, mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocumentBytes {
		return fmt.Errorf("GET %s: document over %d bytes", u, maxDocumentBytes)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// checkIssuerURL: HTTPS, or plain HTTP to a loopback host (development and
// tests), never anything else.
func checkIssuerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oauth: %q is not an absolute URL", s)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	if u.Scheme == "http" && (host == "localhost" || host == "127.0.0.1" || host == "::1") {
		return nil
	}
	return fmt.Errorf("oauth: %q must use https (plain http only for localhost)", s)
}
