package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func TestTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	tenant := dgraphtest.TenantName(t)

	secret, tok, err := c.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeWrite, knowmind.ScopeRead}, "ci", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, graph.TokenPrefix) || len(secret) < len(graph.TokenPrefix)+32 {
		t.Fatalf("token %q: want kmt_ and at least 32 random characters", secret)
	}
	// Creating the token created the tenant's namespace.
	if _, err := c.Tenant(ctx, tenant, false); err != nil {
		t.Fatalf("tenant of a new token: %v", err)
	}

	got, err := c.VerifyToken(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	p := got.Principal()
	if got.ID != tok.ID || p.Tenant != tenant || !p.Has(knowmind.ScopeWrite) || p.Has(knowmind.ScopeAdmin) {
		t.Fatalf("verified %+v principal %+v; created %+v", got, p, tok)
	}

	// Only the hash is stored.
	resp, err := dgraphtest.Shared(t).Galaxy(t).NewReadOnlyTxn().Query(ctx, fmt.Sprintf(`{ t(func: uid(%s)) { expand(_all_) } }`, tok.ID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(resp.Json), secret[len(graph.TokenPrefix):]) || !strings.Contains(string(resp.Json), graph.HashToken(secret)) {
		t.Fatalf("stored token node %s must hold the hash and not the secret", resp.Json)
	}

	list, err := c.ListTokens(ctx, tenant)
	if err != nil || len(list) != 1 || list[0].ID != tok.ID || list[0].Name != "ci" {
		t.Fatalf("ListTokens = %+v, %v", list, err)
	}

	if err := c.TouchToken(ctx, tok.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.VerifyToken(ctx, secret); got.LastUsedAt == nil {
		t.Error("last_used_at not recorded")
	}

	if err := c.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.VerifyToken(ctx, secret); knowmind.ErrorCode(err) != knowmind.EUNAUTHORIZED {
		t.Fatalf("revoked token verified: %v", err)
	}
	if err := c.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	if err := c.RevokeToken(ctx, "0xfffffff"); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Fatalf("revoke unknown = %v, want ENOTFOUND", err)
	}
}

func TestVerifyTokenRejects(t *testing.T) {
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	secret, tok, err := c.CreateToken(ctx, dgraphtest.TenantName(t), []knowmind.Scope{knowmind.ScopeRead}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Expire it by moving expires_at into the past.
	dgraphtest.Shared(t).SetGalaxyNquads(t, fmt.Sprintf(`<%s> <Token.expires_at> %q .`, tok.ID, time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)))
	for name, tc := range map[string]struct{ token, msg string }{
		"expired":   {secret, "token expired"},
		"unknown":   {graph.TokenPrefix + strings.Repeat("a", 43), "invalid token"},
		"malformed": {"kmt_short", "malformed token"},
		"not kmt":   {"Bearer xyz", "malformed token"},
		"bad chars": {graph.TokenPrefix + strings.Repeat("-", 43), "malformed token"},
	} {
		_, err := c.VerifyToken(ctx, tc.token)
		if e := knowmind.AsError(err); e == nil || e.Code != knowmind.EUNAUTHORIZED || e.Message != tc.msg {
			t.Errorf("%s: err = %v, want unauthorized %q", name, err, tc.msg)
		}
	}
}

func TestCreateTokenValidates(t *testing.T) {
	ctx := context.Background()
	c := dgraphtest.Shared(t).Client
	past := time.Now().Add(-time.Hour)
	for name, tc := range map[string]struct {
		tenant string
		scopes []knowmind.Scope
		exp    *time.Time
		param  string
	}{
		"bad tenant":   {"Acme Corp", []knowmind.Scope{"read"}, nil, "tenant"},
		"no scopes":    {"acme", nil, nil, "scopes"},
		"bad scope":    {"acme", []knowmind.Scope{"root"}, nil, "scopes"},
		"past expiry":  {"acme", []knowmind.Scope{"read"}, &past, "expires"},
		"empty tenant": {"", []knowmind.Scope{"read"}, nil, "tenant"},
	} {
		_, _, err := c.CreateToken(ctx, tc.tenant, tc.scopes, "", tc.exp)
		if e := knowmind.AsError(err); e == nil || e.Code != knowmind.EINVALID || e.Param != tc.param {
			t.Errorf("%s: err = %v, want invalid %s", name, err, tc.param)
		}
	}
}
