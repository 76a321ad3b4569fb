package graph

import (
	"context"

	"github.com/knowmind/knowmind"
)

// NamespaceCredentials are what an analyst types into Ratel's login dialog
// to explore one tenant's graph: a tenant is a Dgraph namespace, and a
// login into it sees that namespace and nothing else (Dgraph enforces it,
// not our queries). See docs/analysts.md.
type NamespaceCredentials struct {
	Tenant    string
	Namespace uint64
	User      string // the namespace's guardian, "groot"
	Password  string // derived from the service secret; stable while it is
}

// NamespaceCredentials returns the login of an existing tenant's namespace.
// It creates nothing: an unknown tenant is ENOTFOUND. The password is the
// one the service itself logs in with, so it cannot be rotated for analysts
// alone; hand it out only to people allowed to read (and write) the tenant.
func (c *Client) NamespaceCredentials(ctx context.Context, tenant string) (NamespaceCredentials, error) {
	if err := ValidTenantName(tenant); err != nil {
		return NamespaceCredentials{}, err
	}
	ns, found, err := c.lookupNamespace(ctx, tenant)
	if err != nil {
		return NamespaceCredentials{}, err
	}
	if !found {
		return NamespaceCredentials{}, knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q does not exist", tenant)
	}
	return NamespaceCredentials{Tenant: tenant, Namespace: ns, User: "groot", Password: c.namespacePassword(tenant)}, nil
}
