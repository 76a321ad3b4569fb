package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
)

// The stdio transport serves one local user, for desktop clients that start
// the server as a subprocess: the same tools, the same store, no HTTP. Who
// calls is fixed at start (a tenant and scopes, or a kmt_ token) instead of
// coming with each request.

// LocalCaller is the caller of every request on stdio.
type LocalCaller struct {
	Principal knowmind.Principal
	// CreateTenant: the tenant's namespace is made on first use (an
	// operator naming a tenant); false for a token's tenant, which exists.
	CreateTenant bool
	// Verify, when set, is asked before every call (a token: revocation and
	// expiry take effect at once, as over HTTP); its principal is used.
	Verify func(ctx context.Context) (knowmind.Principal, error)
}

func (c *LocalCaller) check(ctx context.Context) (knowmind.Principal, error) {
	if c.Verify == nil {
		return c.Principal, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tokenLookupTimeout)
	defer cancel()
	return c.Verify(ctx)
}

// principal is the caller of a request: its token's, or the local caller.
func (s *service) principal(extra *mcp.RequestExtra) (knowmind.Principal, bool) {
	if p, ok := principalOf(extra); ok {
		return p, true
	}
	if s.local != nil {
		return s.local.Principal, true
	}
	return knowmind.Principal{}, false
}

// ServeStdio serves the MCP tools over t (mcp.StdioTransport in the
// command) until the client closes it or ctx ends.
func ServeStdio(ctx context.Context, d Deps, caller LocalCaller, t mcp.Transport) error {
	if d.Graph == nil {
		return errors.New("stdio: no graph client")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ready := d.Ready
	if ready == nil {
		ready = func(ctx context.Context) (bool, map[string]string) {
			for alpha, err := range d.Graph.Ping(ctx) {
				if err != nil {
					return false, map[string]string{"alpha " + alpha: "unreachable"}
				}
			}
			return true, nil
		}
	}
	s := &service{graph: d.Graph, ready: ready, log: log, tools: map[string]*registeredTool{}, metrics: d.Metrics, local: &caller,
		engine: newEngine(d.Extractors, newVocabulary(d))}
	err := newMCPServer(s).Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
