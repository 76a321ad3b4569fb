package graph

import (
	"context"

	"github.com/knowmind/knowmind"
)

// A Tenant is a workspace of every capability the transport uses (the root package's service
// interfaces); a Client opens them.
var (
	_ knowmind.Memories   = (*Tenant)(nil)
	_ knowmind.Retrieval  = (*Tenant)(nil)
	_ knowmind.Relations  = (*Tenant)(nil)
	_ knowmind.Notes      = (*Tenant)(nil)
	_ knowmind.Projects   = (*Tenant)(nil)
	_ knowmind.Engine     = (*Tenant)(nil)
	_ knowmind.Goals      = (*Tenant)(nil)
	_ knowmind.Workspace  = (*Tenant)(nil)
	_ knowmind.Workspaces = (*Client)(nil)
)

// Workspace is Tenant as the service interface: a nil *Tenant never hides behind a non-nil
// interface.
func (c *Client) Workspace(ctx context.Context, tenant string, create bool) (knowmind.Workspace, error) {
	t, err := c.Tenant(ctx, tenant, create)
	if err != nil {
		return nil, err
	}
	return t, nil
}
