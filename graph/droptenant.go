package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
)

// Dropping a tenant's namespace is for the copy a move between cells leaves in the cell the
// tenant left (package cells): nothing else ever erases a tenant.

// DropTenant deletes the tenant's namespace and its Tenant record in this cluster, and forgets
// it here; a tenant this cluster does not hold is no error. Its token rows stay: they are no
// longer the tenant's tokens once it lives elsewhere, and a move back sets them anew.
func (c *Client) DropTenant(ctx context.Context, name string) error {
	if err := ValidTenantName(name); err != nil {
		return err
	}
	ns, found, err := c.lookupNamespace(ctx, name)
	if err != nil {
		return err
	}
	c.Forget(name)
	if !found {
		return nil
	}
	if ns == 0 {
		return fmt.Errorf("drop tenant %q: it is recorded in the default namespace", name)
	}
	q := `mutation($ns: Int!) { deleteNamespace(input: {namespaceId: $ns}) { namespaceId message } }`
	var out struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := c.adminGraphQL(ctx, alterTimeout, c.galaxy.GetJwt().AccessJwt, q, map[string]any{"ns": ns}, &out); err != nil {
		return fmt.Errorf("drop tenant %q: %w", name, err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("drop tenant %q: namespace %d: %s", name, ns, out.Errors[0].Message)
	}
	// The record goes after the namespace: a crash between the two leaves a record naming a
	// deleted namespace, which the next drop (or move) deletes again.
	err = runTxn(ctx, c.galaxy, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, `query q($n: string) { t(func: eq(Tenant.name, $n)) { uid } }`, map[string]string{"$n": name})
		if err != nil {
			return err
		}
		var rec struct{ T []struct{ UID string } }
		if err := json.Unmarshal(resp.Json, &rec); err != nil {
			return err
		}
		for _, r := range rec.T {
			if _, err := txn.Mutate(ctx, &api.Mutation{DelNquads: []byte(fmt.Sprintf("<%s> * * .", r.UID))}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("drop tenant %q: its record: %w", name, err)
	}
	c.Forget(name)
	c.log.Info("tenant namespace dropped", "tenant", name, "namespace", ns)
	return nil
}

// Forget drops what this client holds of the tenant (its session and derived indexes): the next
// call opens it again from Dgraph, in whatever namespace the tenant has then. A serve forgets a
// tenant the cell directory moved, so a tenant moved back into a new namespace is not served
// from the old one.
func (c *Client) Forget(name string) {
	c.mu.Lock()
	delete(c.tenants, name)
	c.mu.Unlock()
}
