package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"
)

// Tokens moving with their tenant between cells (package cells): a token is a row of a
// cluster's default namespace naming its tenant, so a tenant moved to another cluster keeps its
// agents' credentials when its token rows are copied there, hash and all (the plaintext is
// never stored, and none is needed).

// tenantTokensQuery reads every token of a tenant, revoked and expired ones included: they
// must stay refused in the new cell as they were in the old.
const tenantTokensQuery = `query q($tenant: string) {
  t(func: eq(Token.tenant, $tenant)) @filter(has(Token.hash)) { ` + tokenFields + ` }
}`

// copyTokenUpsert writes a token unless one with its hash exists already (a move retried).
const copyTokenUpsert = `query q($h: string) { t as var(func: eq(Token.hash, $h)) }`

// CopyTokens copies the tenant's tokens from another client's cluster into this one's, and
// returns how many it wrote (tokens already there by hash are left as they are).
func (c *Client) CopyTokens(ctx context.Context, from *Client, tenant string) (int, error) {
	if err := ValidTenantName(tenant); err != nil {
		return 0, err
	}
	resp, err := from.galaxy.NewReadOnlyTxn().QueryWithVars(ctx, tenantTokensQuery, map[string]string{"$tenant": tenant})
	if err != nil {
		return 0, fmt.Errorf("copy tokens: read: %w", err)
	}
	var out struct{ T []tokenNode }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return 0, fmt.Errorf("copy tokens: read: %w", err)
	}
	written := 0
	for _, n := range out.T {
		node := map[string]any{
			"uid": "uid(t)", "dgraph.type": "Token", "Token.hash": n.Hash, "Token.tenant": n.Tenant,
			"Token.name": n.Name, "Token.scopes": n.Scopes, "Token.created_at": n.CreatedAt.UTC().Format(time.RFC3339Nano),
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
		body, _ := json.Marshal(node)
		r, err := c.galaxy.NewTxn().Do(ctx, &api.Request{Query: copyTokenUpsert, Vars: map[string]string{"$h": n.Hash},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(t), 0))`, SetJson: body}}, CommitNow: true})
		if err != nil {
			return written, fmt.Errorf("copy tokens: write: %w", err)
		}
		if len(r.Uids) > 0 {
			written++
		}
	}
	return written, nil
}
