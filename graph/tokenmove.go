package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
)

// Tokens moving with their tenant between cells (package cells): a token is a row of a
// cluster's default namespace naming its tenant, so a tenant moved to another cluster keeps its
// agents' credentials when its token rows are copied there, hash and all (the plaintext is
// never stored, and none is needed). A copy keeps the id the token was created with
// (Token.origin), so the principal an agent's private notes and visits are kept under stays
// the same in every cell.

// tenantTokensQuery reads every token of a tenant, revoked and expired ones included: they
// must stay refused in the new cell as they were in the old.
const tenantTokensQuery = `query q($tenant: string) {
  t(func: eq(Token.tenant, $tenant)) @filter(has(Token.hash)) { ` + tokenFields + ` }
}`

// tokenByHashQuery finds a token's row in the target by its hash.
const tokenByHashQuery = `query q($h: string) { t(func: eq(Token.hash, $h), first: 2) { uid Token.revoked_at } }`

// CopyTokens makes this cluster's token rows of tenant what they are in from's (the tenant's
// cell until now): a row missing here is written, one here is set to the source's scopes,
// projects, toolsets, expiry and revocation (a revocation on either side stays: a token is
// never revived), and a row of the tenant here that the source does not hold is revoked.
// originPrefix qualifies the source's ids ("" for home's, "b:" for cell b's) for the copies'
// Token.origin. It returns how many of the source's rows it wrote or changed.
func (c *Client) CopyTokens(ctx context.Context, from *Client, tenant, originPrefix string) (int, error) {
	if err := ValidTenantName(tenant); err != nil {
		return 0, err
	}
	source, err := tenantTokens(ctx, from.galaxy, tenant)
	if err != nil {
		return 0, fmt.Errorf("copy tokens: read: %w", err)
	}
	here, err := tenantTokens(ctx, c.galaxy, tenant)
	if err != nil {
		return 0, fmt.Errorf("copy tokens: read the target's: %w", err)
	}
	held := map[string]tokenNode{}
	for _, n := range here {
		held[n.Hash] = n
	}
	written := 0
	for _, n := range source {
		origin := n.Origin
		if origin == "" {
			origin = originPrefix + n.UID
		}
		if h, ok := held[n.Hash]; ok && sameToken(h, n, origin) {
			delete(held, n.Hash)
			continue
		}
		delete(held, n.Hash)
		if err := c.writeTokenCopy(ctx, n, origin); err != nil {
			return written, fmt.Errorf("copy tokens: write: %w", err)
		}
		written++
	}
	// What the target holds of the tenant beyond the source's rows is an older copy of a token
	// the tenant's cell no longer knows: refused from now on.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, n := range held {
		if n.RevokedAt != nil {
			continue
		}
		if _, err := c.galaxy.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true,
			SetNquads: []byte(fmt.Sprintf("<%s> <Token.revoked_at> %q .", n.UID, now))}); err != nil {
			return written, fmt.Errorf("copy tokens: revoke a stale copy: %w", err)
		}
	}
	return written, nil
}

func tenantTokens(ctx context.Context, dg *dgo.Dgraph, tenant string) ([]tokenNode, error) {
	resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx, tenantTokensQuery, map[string]string{"$tenant": tenant})
	if err != nil {
		return nil, err
	}
	var out struct{ T []tokenNode }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, err
	}
	return out.T, nil
}

// sameToken: the target's row h says what the source's row n says (the revocation on either
// side counts).
func sameToken(h, n tokenNode, origin string) bool {
	a, _ := json.Marshal([]any{h.Tenant, h.Name, h.Scopes, h.Projects, h.Toolsets, h.CreatedAt.UTC(), timeOf(h.ExpiresAt), h.Origin})
	b, _ := json.Marshal([]any{n.Tenant, n.Name, n.Scopes, n.Projects, n.Toolsets, n.CreatedAt.UTC(), timeOf(n.ExpiresAt), origin})
	return string(a) == string(b) && (n.RevokedAt == nil || h.RevokedAt != nil)
}

func timeOf(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// writeTokenCopy writes the source's row n into this cluster: a new row, or the one with its
// hash set to n's values (its lists replaced, its revocation kept).
func (c *Client) writeTokenCopy(ctx context.Context, n tokenNode, origin string) error {
	return runTxn(ctx, c.galaxy, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, tokenByHashQuery, map[string]string{"$h": n.Hash})
		if err != nil {
			return err
		}
		var out struct{ T []tokenNode }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.T) > 1 {
			return fmt.Errorf("two rows share a token's hash")
		}
		node := map[string]any{
			"uid": "_:t", "dgraph.type": "Token", "Token.hash": n.Hash, "Token.tenant": n.Tenant,
			"Token.name": n.Name, "Token.scopes": n.Scopes, "Token.created_at": n.CreatedAt.UTC().Format(time.RFC3339Nano),
			"Token.origin": origin,
		}
		if len(out.T) == 1 {
			uid := out.T[0].UID
			node["uid"] = uid
			del := fmt.Sprintf("<%[1]s> <Token.scopes> * .\n<%[1]s> <Token.projects> * .\n<%[1]s> <Token.toolsets> * .\n<%[1]s> <Token.expires_at> * .", uid)
			if _, err := txn.Mutate(ctx, &api.Mutation{DelNquads: []byte(del)}); err != nil {
				return err
			}
		}
		if len(n.Projects) > 0 {
			node["Token.projects"] = n.Projects
		}
		if len(n.Toolsets) > 0 {
			node["Token.toolsets"] = n.Toolsets
		}
		for pred, at := range map[string]*time.Time{"Token.last_used_at": n.LastUsedAt, "Token.expires_at": n.ExpiresAt, "Token.revoked_at": n.RevokedAt} {
			if at != nil {
				node[pred] = at.UTC().Format(time.RFC3339Nano)
			}
		}
		if len(out.T) == 1 && out.T[0].RevokedAt != nil {
			delete(node, "Token.revoked_at") // the first revocation's time stays
		}
		body, _ := json.Marshal(node)
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
}
