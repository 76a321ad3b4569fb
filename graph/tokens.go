package graph

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// API tokens live in the galaxy namespace, which only the service's guardian
// login reads. A token is `kmt_` + 43 base62 characters (~256 random bits);
// only its SHA-256 is stored, so a database dump reveals no usable token.

// TokenPrefix starts every opaque knowmind token.
const TokenPrefix = "kmt_"

const (
	tokenRandomChars = 43 // 43 × log2(62) ≈ 256 bits
	base62           = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// tokenShape bounds what VerifyToken looks up: anything else is malformed and
// never reaches Dgraph.
var tokenShape = regexp.MustCompile(`^kmt_[0-9A-Za-z]{32,128}$`)

// Token is a stored API token (never its secret).
type Token struct {
	ID         string           `json:"id"` // Dgraph uid in the galaxy namespace
	Tenant     string           `json:"tenant"`
	Name       string           `json:"name"`
	Scopes     []knowmind.Scope `json:"scopes"`
	Projects   []string         `json:"projects,omitempty"` // notes projects it reaches; nil = all
	Toolsets   []string         `json:"toolsets,omitempty"` // MCP toolsets it reaches; nil = no limit (knowmind.DefaultToolsets unless a request asks for more)
	CreatedAt  time.Time        `json:"created_at"`
	LastUsedAt *time.Time       `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time       `json:"expires_at,omitempty"`
	RevokedAt  *time.Time       `json:"revoked_at,omitempty"`
	// Origin is the id the token was created with, in the cell it was created in, when this
	// row is a copy a move wrote (tokenmove.go); "" for the original.
	Origin string `json:"origin,omitempty"`
}

// Principal is what a verified token authorises.
func (t Token) Principal() knowmind.Principal {
	id := t.ID
	if t.Origin != "" {
		id = t.Origin // the same principal in every cell: its private notes and visits stay its own
	}
	return knowmind.Principal{Tenant: t.Tenant, Scopes: slices.Clone(t.Scopes), TokenID: "tok:" + id,
		Projects: slices.Clone(t.Projects), Toolsets: slices.Clone(t.Toolsets)}
}

// tokenNode is Token as Dgraph returns it.
type tokenNode struct {
	UID        string     `json:"uid"`
	Hash       string     `json:"Token.hash"`
	Tenant     string     `json:"Token.tenant"`
	Name       string     `json:"Token.name"`
	Scopes     []string   `json:"Token.scopes"`
	Projects   []string   `json:"Token.projects"`
	Toolsets   []string   `json:"Token.toolsets"`
	CreatedAt  time.Time  `json:"Token.created_at"`
	LastUsedAt *time.Time `json:"Token.last_used_at"`
	ExpiresAt  *time.Time `json:"Token.expires_at"`
	RevokedAt  *time.Time `json:"Token.revoked_at"`
	Origin     string     `json:"Token.origin"`
}

func (n tokenNode) token() Token {
	t := Token{ID: n.UID, Tenant: n.Tenant, Name: n.Name, Projects: n.Projects, Toolsets: n.Toolsets, CreatedAt: n.CreatedAt,
		LastUsedAt: n.LastUsedAt, ExpiresAt: n.ExpiresAt, RevokedAt: n.RevokedAt, Origin: n.Origin}
	for _, s := range n.Scopes {
		if sc, ok := knowmind.ParseScope(s); ok {
			t.Scopes = append(t.Scopes, sc)
		}
	}
	slices.Sort(t.Scopes)
	return t
}

const tokenFields = `uid Token.hash Token.tenant Token.name Token.scopes Token.projects Token.toolsets Token.created_at Token.last_used_at Token.expires_at Token.revoked_at Token.origin`

// HashToken is the stored form of a token: hex SHA-256 of the whole string.
// A fast hash is right here: the token carries 256 random bits, so there is
// nothing to brute-force that a slow KDF would protect.
func HashToken(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

func newTokenSecret() (string, error) {
	var b strings.Builder
	b.WriteString(TokenPrefix)
	buf := make([]byte, 64)
	for b.Len() < len(TokenPrefix)+tokenRandomChars {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, c := range buf {
			// Rejection sampling: 248 = 4×62, so c%62 is uniform below it.
			if c < 248 && b.Len() < len(TokenPrefix)+tokenRandomChars {
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String(), nil
}

// CreateToken stores a new token for tenant and returns its plaintext, which
// is shown once and never stored. The tenant's namespace and schema are
// created if it is new. expiresAt nil = no expiry.
func (c *Client) CreateToken(ctx context.Context, tenant string, scopes []knowmind.Scope, name string, expiresAt *time.Time) (string, Token, error) {
	return c.CreateProjectToken(ctx, tenant, scopes, nil, name, expiresAt)
}

// CreateProjectToken is CreateToken for a token limited to some notes projects of the tenant
// (nil: all). The projects must exist.
func (c *Client) CreateProjectToken(ctx context.Context, tenant string, scopes []knowmind.Scope, projects []string, name string, expiresAt *time.Time) (string, Token, error) {
	return c.CreateLimitedToken(ctx, tenant, scopes, projects, nil, name, expiresAt)
}

// CreateLimitedToken is CreateProjectToken for a token that also reaches only some toolsets
// (nil: no limit, see knowmind.DefaultToolsets).
func (c *Client) CreateLimitedToken(ctx context.Context, tenant string, scopes []knowmind.Scope, projects, toolsets []string, name string, expiresAt *time.Time) (string, Token, error) {
	if toolsets != nil {
		if err := knowmind.CheckToolsets(toolsets); err != nil {
			return "", Token{}, err
		}
	}
	if err := ValidTenantName(tenant); err != nil {
		return "", Token{}, err
	}
	if len(scopes) == 0 {
		return "", Token{}, knowmind.InvalidParam("scopes", "at least one scope (read, write, admin) is required")
	}
	var scopeNames []string
	for _, s := range scopes {
		if _, ok := knowmind.ParseScope(string(s)); !ok {
			return "", Token{}, knowmind.InvalidParam("scopes", "unknown scope %q (read, write, admin)", s)
		}
		if !slices.Contains(scopeNames, string(s)) {
			scopeNames = append(scopeNames, string(s))
		}
	}
	if len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", Token{}, knowmind.InvalidParam("name", "name must be at most 200 printable characters")
	}
	now := time.Now().UTC()
	if expiresAt != nil && !expiresAt.After(now) {
		return "", Token{}, knowmind.InvalidParam("expires", "expiry must be in the future")
	}
	// The namespace first: a token must never point at a tenant without one.
	ten, err := c.Tenant(ctx, tenant, true)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: tenant %q: %w", tenant, err)
	}
	if projects != nil {
		if err := ten.checkProjectsExist(ctx, projects); err != nil {
			return "", Token{}, err
		}
	}
	secret, err := newTokenSecret()
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	node := map[string]any{
		"uid":              "_:t",
		"dgraph.type":      "Token",
		"Token.hash":       HashToken(secret),
		"Token.tenant":     tenant,
		"Token.name":       name,
		"Token.scopes":     scopeNames,
		"Token.created_at": now.Format(time.RFC3339Nano),
	}
	if len(projects) > 0 {
		node["Token.projects"] = projects
	}
	if len(toolsets) > 0 {
		node["Token.toolsets"] = toolsets
	}
	if expiresAt != nil {
		node["Token.expires_at"] = expiresAt.UTC().Format(time.RFC3339Nano)
	}
	body, _ := json.Marshal(node)
	resp, err := c.galaxy.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true, SetJson: body})
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	tok := tokenNode{UID: resp.Uids["t"], Tenant: tenant, Name: name, Scopes: scopeNames, Projects: projects, Toolsets: toolsets, CreatedAt: now, ExpiresAt: expiresAt}.token()
	c.log.Info("token created", "id", tok.ID, "tenant", tenant, "name", name, "scopes", scopeNames)
	return secret, tok, nil
}

// ListTokens lists the tokens of tenant ("" = all tenants), oldest first.
func (c *Client) ListTokens(ctx context.Context, tenant string) ([]Token, error) {
	q := `{ t(func: has(Token.hash), orderasc: Token.created_at) { ` + tokenFields + ` } }`
	vars := map[string]string{}
	if tenant != "" {
		q = `query q($tenant: string) { t(func: eq(Token.tenant, $tenant), orderasc: Token.created_at) @filter(has(Token.hash)) { ` + tokenFields + ` } }`
		vars["$tenant"] = tenant
	}
	resp, err := c.galaxy.NewReadOnlyTxn().QueryWithVars(ctx, q, vars)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	var out struct{ T []tokenNode }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	toks := make([]Token, len(out.T))
	for i, n := range out.T {
		toks[i] = n.token()
	}
	return toks, nil
}

// HasTokens reports whether any token exists (revoked ones included), so
// `knowmind serve` creates a development token only on a fresh store.
func (c *Client) HasTokens(ctx context.Context) (bool, error) {
	resp, err := c.galaxy.NewReadOnlyTxn().Query(ctx, `{ t(func: has(Token.hash), first: 1) { uid } }`)
	if err != nil {
		return false, fmt.Errorf("look for tokens: %w", err)
	}
	var out struct{ T []struct{ UID string } }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return false, err
	}
	return len(out.T) > 0, nil
}

var uidShape = regexp.MustCompile(`^0x[0-9a-f]{1,16}$`)

// RevokeToken marks a token revoked; from the next request on it is refused.
// Revoking a revoked token keeps the first revocation time.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	if !uidShape.MatchString(id) {
		return knowmind.Errorf(knowmind.ENOTFOUND, "token %q not found", id)
	}
	return runTxn(ctx, c.galaxy, func(ctx context.Context, txn *dgo.Txn) error {
		// The id is a checked hex uid, so it can sit in the query text.
		resp, err := txn.Query(ctx, `{ t(func: uid(`+id+`)) @filter(has(Token.hash)) { uid Token.revoked_at } }`)
		if err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		var out struct{ T []tokenNode }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.T) == 0 {
			return knowmind.Errorf(knowmind.ENOTFOUND, "token %q not found", id)
		}
		if out.T[0].RevokedAt != nil {
			return nil
		}
		_, err = txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(fmt.Sprintf("<%s> <Token.revoked_at> %q .",
			id, time.Now().UTC().Format(time.RFC3339Nano)))})
		return err
	})
}

// VerifyToken checks an opaque token: well-formed, known (by hash, compared in
// constant time), not revoked, not expired. Every call reads Dgraph, so a
// revocation takes effect on the very next request. Failures are
// EUNAUTHORIZED with a message safe to show.
func (c *Client) VerifyToken(ctx context.Context, plaintext string) (Token, error) {
	tok, found, err := c.LookupToken(ctx, plaintext)
	if err != nil {
		return Token{}, err
	}
	if !found {
		return Token{}, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token")
	}
	return tok, tok.Check(time.Now())
}

// LookupToken finds the row of an opaque token in this cluster, revoked and expired ones
// included (found false: no row has its hash). Callers decide with Token.Check, after
// deciding whether this cluster's row is the one that counts (package cells: the row in the
// cell of the token's tenant).
func (c *Client) LookupToken(ctx context.Context, plaintext string) (Token, bool, error) {
	if !tokenShape.MatchString(plaintext) {
		return Token{}, false, knowmind.Errorf(knowmind.EUNAUTHORIZED, "malformed token")
	}
	hash := HashToken(plaintext)
	resp, err := c.galaxy.NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($h: string) { t(func: eq(Token.hash, $h), first: 2) { `+tokenFields+` } }`,
		map[string]string{"$h": hash})
	if err != nil {
		return Token{}, false, fmt.Errorf("verify token: %w", err)
	}
	var out struct{ T []tokenNode }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return Token{}, false, fmt.Errorf("verify token: %w", err)
	}
	// The index lookup already matched; comparing the stored hash again in
	// constant time keeps the decision itself free of timing differences.
	if len(out.T) != 1 || subtle.ConstantTimeCompare([]byte(out.T[0].Hash), []byte(hash)) != 1 {
		return Token{}, false, nil
	}
	return out.T[0].token(), true, nil
}

// Check is the verdict on a token row at now: nil, or EUNAUTHORIZED (revoked, expired).
func (t Token) Check(now time.Time) error {
	if t.RevokedAt != nil {
		return knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token")
	}
	if t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) {
		return knowmind.Errorf(knowmind.EUNAUTHORIZED, "token expired")
	}
	return nil
}

// TouchToken records a token's last use. Callers throttle it: it is
// bookkeeping, not part of authentication.
func (c *Client) TouchToken(ctx context.Context, id string, at time.Time) error {
	if !uidShape.MatchString(id) {
		return knowmind.Errorf(knowmind.ENOTFOUND, "token %q not found", id)
	}
	return runTxn(ctx, c.galaxy, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(fmt.Sprintf("<%s> <Token.last_used_at> %q .",
			id, at.UTC().Format(time.RFC3339Nano)))})
		return err
	})
}

// TokenByID is the token row with this id (a uid of this cluster), revoked and expired ones
// included.
func (c *Client) TokenByID(ctx context.Context, id string) (Token, error) {
	if !uidShape.MatchString(id) {
		return Token{}, knowmind.Errorf(knowmind.ENOTFOUND, "token %q not found", id)
	}
	// The id is a checked hex uid, so it can sit in the query text.
	resp, err := c.galaxy.NewReadOnlyTxn().Query(ctx, `{ t(func: uid(`+id+`)) @filter(has(Token.hash)) { `+tokenFields+` } }`)
	if err != nil {
		return Token{}, fmt.Errorf("read token: %w", err)
	}
	var out struct{ T []tokenNode }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return Token{}, err
	}
	if len(out.T) == 0 {
		return Token{}, knowmind.Errorf(knowmind.ENOTFOUND, "token %q not found", id)
	}
	return out.T[0].token(), nil
}
