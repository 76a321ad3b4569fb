package handlers

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/oauth"
	"github.com/knowmind/knowmind/shapes"
	"github.com/knowmind/knowmind/ui"
)

// Readiness reports whether the service can serve requests, with a detail per
// dependency (e.g. one entry per Dgraph alpha) for /readyz.
type Readiness func(ctx context.Context) (ready bool, detail map[string]string)

// Deps are what the router needs; cmd/knowmind fills them.
type Deps struct {
	Ready Readiness
	// Graph serves the MCP endpoint (tenants, tokens); nil = probes only.
	Graph *graph.Client
	// Workspaces serve the tools the tenants' data; nil = Graph. Over stdio, Workspaces
	// alone is enough (tests hand it a fake).
	Workspaces knowmind.Workspaces
	// Tokens verify kmt_ tokens; nil = Graph. Serve hands it the cells' (cells.Serving), so a
	// token is checked in its tenant's cell.
	Tokens TokenStore
	Logger *slog.Logger
	// AllowedOrigins may call the MCP endpoint from a browser ("*" = any);
	// the same origin as the request's host (or PublicURL) always may.
	AllowedOrigins []string
	// PublicURL is the external base URL (resource metadata, WWW-Authenticate).
	PublicURL string
	JWT       JWTConfig
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the
	// client: failed authentications are counted per client address, which is
	// the peer's unless the peer is one of these.
	TrustedProxies []netip.Prefix
	// CallTimeout is the deadline of one tool call, which cancels its Dgraph
	// work; 0 = DefaultCallTimeout, negative = none.
	CallTimeout time.Duration
	// TenantInFlight bounds the tool calls one tenant has running at once
	// (more are refused with 429); 0 = DefaultTenantInFlight, negative = none.
	TenantInFlight int
	// Metrics, when set, counts tool calls, auth failures and (wired by the
	// caller into graph.Config.ObserveRPC) Dgraph round trips.
	Metrics *Metrics
	// MetricsToken serves Metrics at /metrics on this router to requests
	// bearing it; "" = not served here (use a separate listener).
	MetricsToken string
	// OAuth verifies access tokens of an external authorization server and
	// turns on the RFC 9728 metadata naming it; nil = none.
	OAuth *oauth.Verifier
	// SessionsPerToken bounds the MCP sessions one token holds; opening one
	// more closes its least recently used; 0 = DefaultSessionsPerToken, negative = none.
	SessionsPerToken int
	// RateLimit requests per second per token, with RateBurst; 0 = unlimited.
	// TenantRateLimit and TenantRateBurst the same for all tokens of a tenant.
	// A request over a rate waits for its turn up to RateWait (0 =
	// DefaultRateWait, negative = not at all) before it is refused with 429.
	RateLimit       float64
	RateBurst       int
	TenantRateLimit float64
	TenantRateBurst int
	RateWait        time.Duration
	// MaxBodyBytes bounds a POST body; 0 = the largest legal request (bodybudget.go).
	MaxBodyBytes int64
	// BodyBudgetBytes bounds the bytes of POST bodies being read and handled
	// at once, across all tokens and tenants; more are refused with 503.
	// 0 = DefaultBodyBudget, negative = none.
	BodyBudgetBytes int64
	// BodyReadTimeout bounds the time to receive a POST body; 0 = 2 minutes.
	BodyReadTimeout time.Duration
	// Extractors serve knowmind_capture; the zero value offers the offline rules extractor.
	Extractors Extractors
	// Vocabulary reads the domain's entity types and categories (the shape files); nil =
	// the graph client's shapes as loaded at start. Read at most every VocabularyTTL
	// (0 = 5 minutes) for tool descriptions and capture.
	Vocabulary    func() (entityTypes, categories []string, err error)
	VocabularyTTL time.Duration
}

// NewRouter builds the HTTP handler.
func NewRouter(d Deps) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	// Liveness: the process is up and serving HTTP.
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	if d.Graph != nil {
		mountMCP(r, d)
		mountUI(r)
	}
	// Readiness: the state for anyone (probes); which alpha is unreachable or
	// restarting only for the operator (the metrics token), since it maps the
	// deployment: an admin token belongs to one tenant, not to whoever runs
	// the service.
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
		defer cancel()
		ok, detail := d.Ready(ctx)
		status := http.StatusOK
		state := "ready"
		if !ok {
			status, state = http.StatusServiceUnavailable, "not_ready"
		}
		body := gin.H{"status": state}
		if isOperator(c.Request, d.MetricsToken) {
			body["checks"] = detail
		}
		c.JSON(status, body)
	})
	if d.Metrics != nil && d.MetricsToken != "" {
		r.GET("/metrics", gin.WrapH(d.Metrics.ProtectedHandler(d.MetricsToken)))
	}
	return r
}

// isOperator reports whether r bears the operator's token (--metrics-token);
// false when none is configured.
func isOperator(r *http.Request, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) == 1
}

// mountUI serves the graph explorer (package ui) at /ui. The page talks to
// the MCP endpoint only, with the token its user signs in with.
func mountUI(r *gin.Engine) {
	h := gin.WrapH(ui.Handler())
	r.GET(ui.Path, h)
	r.HEAD(ui.Path, h)
	r.GET(ui.Path+"/*asset", h)
	r.HEAD(ui.Path+"/*asset", h)
}

// mountMCP serves the MCP endpoint at /api/mcp/v1 and /mcp, and its RFC 9728
// protected resource metadata.
func mountMCP(r *gin.Engine, d Deps) *endpoint {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := newService(d, log)
	var tokens TokenStore = d.Graph
	if d.Tokens != nil {
		tokens = d.Tokens
	}
	a := newAuthenticator(tokens, d.JWT, log)
	a.oauth = d.OAuth
	e := newEndpoint(newMCPServer(s), a, d, log)
	e.metrics = d.Metrics
	e.svc = s
	h := gin.WrapH(e)
	for _, p := range []string{mcpPath, mcpAltPath} {
		r.Any(p, h)
	}
	if d.OAuth != nil {
		md := gin.WrapH(resourceMetadata(e.baseURL, d.OAuth.Issuer()))
		r.GET(metadataPath, md)
		r.GET(metadataPath+"/*resource", md)
	}
	return e
}

// Defaults of Deps.CallTimeout and Deps.TenantInFlight. A document of
// 1,000,000 characters embeds and writes in well under the call timeout with
// the built-in embedder; slower model servers need a longer one.
const (
	DefaultCallTimeout    = 5 * time.Minute
	DefaultTenantInFlight = 32
)

// Defaults of the rate limits (Deps.RateLimit and the others), sized so 20
// sessions of one token calling as fast as they are answered are slowed, not
// refused (TestFleetOfOneToken), while one runaway token is held to
// DefaultRateLimit and a tenant's tokens together to DefaultTenantRateLimit.
const (
	DefaultRateLimit       = 100
	DefaultRateBurst       = 200
	DefaultTenantRateLimit = 400
	DefaultTenantRateBurst = 800
	DefaultRateWait        = 2 * time.Second
)

func newService(d Deps, log *slog.Logger) *service {
	s := &service{workspaces: workspacesOf(d), shapeSet: shapesOf(d), ready: d.Ready, log: log, tools: map[string]*registeredTool{},
		metrics: d.Metrics, engine: newEngine(d.Extractors, newVocabulary(d, shapesOf(d))),
		callTimeout: d.CallTimeout, inFlight: &inFlight{max: d.TenantInFlight}}
	if s.callTimeout == 0 {
		s.callTimeout = DefaultCallTimeout
	}
	if s.inFlight.max == 0 {
		s.inFlight.max = DefaultTenantInFlight
	}
	return s
}

// workspacesOf is what the tools read the tenants' data through: d.Workspaces, or else d.Graph.
func workspacesOf(d Deps) knowmind.Workspaces {
	if d.Workspaces != nil {
		return d.Workspaces
	}
	if d.Graph != nil {
		return d.Graph
	}
	return nil
}

// shapesOf is the relation shape set of d's graph client; nil = the default.
func shapesOf(d Deps) *shapes.Set {
	if d.Graph != nil {
		return d.Graph.Shapes()
	}
	return nil
}
