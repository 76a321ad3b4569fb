package handlers

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if workspacesOf(d) == nil {
		return errors.New("stdio: no graph client")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ready := d.Ready
	if ready == nil && d.Graph == nil {
		ready = func(context.Context) (bool, map[string]string) { return true, nil }
	}
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
	s := &service{workspaces: workspacesOf(d), shapeSet: shapesOf(d), ready: ready, log: log, tools: map[string]*registeredTool{},
		metrics: d.Metrics, local: &caller, localSession: rand.Text(), engine: newEngine(d.Extractors, newVocabulary(d, shapesOf(d)))}
	err := newMCPServer(s).Run(ctx, drainingTransport{Transport: t, wait: stdioDrainTimeout})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stdioDrainTimeout bounds how long the calls still running when the client
// closes stdin may take to finish and be answered.
const stdioDrainTimeout = 30 * time.Second

// drainingTransport answers the calls in flight when the client closes its
// end: a client that writes its requests and closes stdin (a script, a
// desktop client quitting) gets every answer, instead of the SDK ending the
// session at EOF and dropping them. The wait is bounded by wait.
//
// The wrapper hides the SDK's own connection type, and with it the
// negotiated protocol version that connection uses to refuse JSON-RPC
// batches from 2025-06-18 on; over stdio batches are then served as the
// older protocol allowed.
type drainingTransport struct {
	mcp.Transport
	wait time.Duration
}

func (t drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainingConn{Connection: c, wait: t.wait, pending: map[jsonrpc.ID]struct{}{}}, nil
}

// drainingConn counts the calls read and not yet answered.
type drainingConn struct {
	mcp.Connection
	wait time.Duration

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{}
	idle    chan struct{} // closed when pending empties while the end is drained
}

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) {
			c.drain(ctx)
		}
		return msg, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = struct{}{}
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		if len(c.pending) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		c.mu.Unlock()
	}
	return err
}

// drain waits until every call read has been answered, c.wait at most.
func (c *drainingConn) drain(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	c.idle = idle
	c.mu.Unlock()
	timer := time.NewTimer(c.wait)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	}
}
