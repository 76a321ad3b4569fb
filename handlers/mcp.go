package handlers

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/shapes"
)

// The MCP endpoint is the official Go SDK's Streamable HTTP handler behind a
// thin HTTP layer that does what the SDK does not (or not as the spec wants):
// Origin check, authentication, per-token rate limit, MCP-Protocol-Version
// check, JSON-RPC errors for batches (-32600) and unknown methods (-32601,
// where go-sdk v1.8.0 answers HTTP 400 text/plain), a JSON or SSE response
// per request by the client's Accept header, and one-shot calls without a
// session (`curl` with a tools/call, as in the spec's examples).

const (
	mcpPath         = "/api/mcp/v1"
	mcpAltPath      = "/mcp"
	metadataPath    = "/.well-known/oauth-protected-resource"
	requestIDHeader = "X-Request-Id"
	sessionHeader   = "Mcp-Session-Id"
	protocolHeader  = "MCP-Protocol-Version"
	defaultMaxBody  = largestLegalBody // bodybudget.go
	// defaultBodyTimeout bounds receiving a POST body: the server's
	// ReadHeaderTimeout covers only the headers, and a client trickling a body
	// would otherwise hold its connection, goroutine and buffer for ever.
	// 16 MiB in 2 minutes needs about 140 KB/s.
	defaultBodyTimeout = 2 * time.Minute
	// Failed token lookups per client address: 2 per second, bursts of 30.
	failedAuthRate  = 2
	failedAuthBurst = 30
	sessionIdle     = 30 * time.Minute
)

// protocolVersions the endpoint speaks, newest first. initialize echoes one
// of these when the client asks for it and offers the first otherwise.
var protocolVersions = []string{"2025-06-18", "2025-03-26"}

// mcpMethods are the requests the server answers; everything else is -32601.
var mcpMethods = map[string]bool{"initialize": true, "ping": true, "tools/list": true, "tools/call": true}

// mcpNotifications are passed to the SDK; other notifications are ignored (202).
var mcpNotifications = map[string]bool{
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// service holds what tools need. Each tool is a method in its own file.
type service struct {
	// workspaces hold the tenants' data; shapeSet is the relation shape set links are checked
	// against (nil = the default).
	workspaces knowmind.Workspaces
	shapeSet   *shapes.Set
	ready      Readiness
	log        *slog.Logger
	tools      map[string]*registeredTool
	// metrics counts tool calls; nil = none.
	metrics *Metrics
	// local is the caller of every request on a transport without
	// authentication of its own (stdio: one local user); nil over HTTP.
	local *LocalCaller
	// localSession names the one MCP session of a stdio process (two desktop clients on one
	// data dir are two conversations); empty over HTTP.
	localSession string
	// engine holds knowmind_capture's extractors (engine_tools.go).
	engine      engine
	callTimeout time.Duration // deadline of one tool call, its Dgraph work included; 0 = none
	inFlight    *inFlight     // tool calls running per tenant
}

func newMCPServer(s *service) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "knowmind", Title: "knowmind memory", Version: knowmind.Version},
		&mcp.ServerOptions{
			// Replaced per caller by the steps of its toolsets (guardCalls, toolsets.go).
			Instructions: "knowmind is a long-term memory: recall before answering from memory, " +
				"store what should be remembered. Every call works in the workspace of your token.",
			Logger:                    quiet(s.log),
			Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			SupportedProtocolVersions: protocolVersions,
		})
	srv.AddReceivingMiddleware(s.guardCalls)
	srv.AddReceivingMiddleware(s.observeCalls) // added last: outermost, sees every outcome
	s.registerTools(srv)
	return srv
}

// endpoint is the HTTP handler of /api/mcp/v1 and /mcp.
type endpoint struct {
	sessions http.Handler // stateful: initialize, then Mcp-Session-Id
	oneShot  http.Handler // stateless: a request without session and without initialize
	auth     *authenticator
	limits   *rateLimiter // per token
	tenants  *rateLimiter // per tenant, all its tokens together
	rateWait time.Duration
	// failures budgets failed token lookups per client address, so a flood
	// of guessed tokens cannot load Dgraph with lookups. Only lookups are
	// counted (a missing, malformed or badly signed token costs nothing), and
	// a spent budget refuses only tokens not seen valid before: strangers
	// sharing an address (a proxy's) cannot lock out the tokens in use.
	failures  *rateLimiter
	trusted   []netip.Prefix
	origins   []string
	publicURL string
	maxBody   int64
	budget    *bodyBudget // bytes of bodies being handled at once, all tokens together (bodybudget.go)
	bodyTime  time.Duration
	log       *slog.Logger
	metrics   *Metrics // nil = none
	// svc is the service behind the endpoint, for the tools' scopes
	// (insufficientScope); nil in tests that build an endpoint on a bare server.
	svc *service
	// sessionLimit bounds the sessions each token holds (sessions.go).
	sessionLimit *sessionLimit
}

func newEndpoint(srv *mcp.Server, a *authenticator, d Deps, log *slog.Logger) *endpoint {
	maxBody := d.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = defaultMaxBody
	}
	getServer := func(*http.Request) *mcp.Server { return srv }
	sdkLog := quiet(log)
	// Behind a proxy that names its public URL the Host header is the
	// public name; the SDK's localhost DNS-rebinding check would refuse it.
	// Origin checking (below) still applies.
	behindProxy := d.PublicURL != ""
	e := &endpoint{
		sessions: withTokenInfo(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger: sdkLog, SessionTimeout: sessionIdle, MaxRequestBodyBytes: maxBody + 1,
			DisableLocalhostProtection: behindProxy,
		})),
		oneShot: withTokenInfo(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger: sdkLog, Stateless: true, MaxRequestBodyBytes: maxBody + 1,
			DisableLocalhostProtection: behindProxy,
		})),
		auth:      a,
		limits:    newRateLimiter(d.RateLimit, d.RateBurst),
		tenants:   newRateLimiter(d.TenantRateLimit, d.TenantRateBurst),
		rateWait:  d.RateWait,
		failures:  newRateLimiter(failedAuthRate, failedAuthBurst),
		trusted:   d.TrustedProxies,
		publicURL: strings.TrimRight(d.PublicURL, "/"),
		maxBody:   maxBody,
		budget:    newBodyBudget(d.BodyBudgetBytes),
		bodyTime:  d.BodyReadTimeout,
		log:       log,

		sessionLimit: newSessionLimit(d.SessionsPerToken),
	}
	if e.bodyTime <= 0 {
		e.bodyTime = defaultBodyTimeout
	}
	switch {
	case e.rateWait == 0:
		e.rateWait = DefaultRateWait
	case e.rateWait < 0:
		e.rateWait = 0
	}
	for _, o := range d.AllowedOrigins {
		e.origins = append(e.origins, strings.TrimRight(o, "/"))
	}
	return e
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := newRequestID()
	r.Header.Set(requestIDHeader, reqID) // tools read it from the request headers the SDK passes on
	r = r.WithContext(withRequestID(r.Context(), reqID))
	w.Header().Set(requestIDHeader, reqID)
	sw := &statusWriter{ResponseWriter: w}
	principal := e.serve(sw, r)
	e.log.Debug("mcp request", "request_id", reqID, "http_method", r.Method, "status", sw.status,
		"tenant", principal.Tenant, "token", principal.TokenID, "ms", time.Since(start).Milliseconds())
}

func (e *endpoint) serve(w http.ResponseWriter, r *http.Request) knowmind.Principal {
	// A browser page must not drive the server: foreign origins are refused
	// before anything else.
	if origin := r.Header.Get("Origin"); origin != "" {
		if !e.originAllowed(origin, r) {
			writeHTTPError(w, http.StatusForbidden, nil, codeForbidden, "origin not allowed", nil)
			return knowmind.Principal{}
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate, Retry-After, X-Request-Id")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, "+toolsetsHeader+", "+outputSchemasHeader)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return knowmind.Principal{}
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeHTTPError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "method not allowed", nil)
		return knowmind.Principal{}
	}

	client := clientAddr(r, e.trusted)
	lookup := e.auth.costsLookup(r)
	if lookup {
		if blocked, wait := e.failures.exhausted(client, time.Now()); blocked {
			secs := retryAfterSeconds(wait)
			e.metrics.rateLimited("failed_auth")
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeHTTPError(w, http.StatusTooManyRequests, unauthenticatedID(r), codeRateLimited, "too many failed authentications",
				map[string]any{"retry_after_s": secs})
			return knowmind.Principal{}
		}
	}
	ti, err := e.auth.authenticate(r)
	if err != nil {
		if ke := knowmind.AsError(err); ke != nil && ke.Code == knowmind.EUNAUTHORIZED {
			if lookup {
				e.failures.allow(client, time.Now())
			}
			e.metrics.authFailed("unauthorized")
			unauthorized(w, e.metadataURL(r), ke, r.Header.Get("Authorization") != "", unauthenticatedID(r))
			return knowmind.Principal{}
		}
		e.log.Error("authenticate", "request_id", r.Header.Get(requestIDHeader), "err", err)
		e.metrics.authFailed("unavailable")
		writeHTTPError(w, http.StatusServiceUnavailable, nil, codeUnavailable, "service unavailable", nil)
		return knowmind.Principal{}
	}
	p := ti.Extra[extraPrincipal].(knowmind.Principal)
	if asked := askedToolsets(r); asked != "" || askedOutputSchemas(r) {
		if asked != "" {
			sel, err := selectToolsets(p.Toolsets, asked)
			if err != nil {
				writeHTTPError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidParams, err.Error(), map[string]any{"param": "toolsets"})
				return p
			}
			p.Toolsets = sel
		}
		ti = withExtra(ti, map[string]any{extraPrincipal: p, extraOutputSchemas: askedOutputSchemas(r)})
	}

	if !e.throttle(w, r, p) {
		return p
	}

	// The SDK lets any header >= "2026-07-28" through (string comparison, so
	// "foo" too); only versions we speak are valid.
	if v := r.Header.Get(protocolHeader); v != "" && !slices.Contains(protocolVersions, v) {
		writeHTTPError(w, http.StatusBadRequest, nil, mcp.CodeUnsupportedProtocolVersion,
			fmt.Sprintf("unsupported %s %q", protocolHeader, v),
			map[string]any{"supported": protocolVersions, "requested": v})
		return p
	}

	r = r.WithContext(context.WithValue(r.Context(), tokenInfoKey{}, ti))
	if sid := r.Header.Get(sessionHeader); sid != "" {
		e.sessionLimit.used(ti, sid, time.Now())
		if r.Method == http.MethodDelete {
			defer e.sessionLimit.closed(ti, sid)
		}
	}
	switch r.Method {
	case http.MethodGet:
		// The server's event stream belongs to a session.
		if r.Header.Get(sessionHeader) == "" {
			w.Header().Set("Allow", "POST, DELETE")
			writeHTTPError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest,
				"GET opens a session's event stream: send Mcp-Session-Id from initialize", nil)
			return p
		}
		e.sessions.ServeHTTP(w, r)
	case http.MethodDelete:
		e.sessions.ServeHTTP(w, r)
	case http.MethodPost:
		e.post(w, r)
	}
	return p
}

// throttle holds r to its token's and its tenant's rate: it waits for its
// turn (up to rateWait) or is refused with 429, the JSON-RPC id of its body
// echoed (false: answered).
func (e *endpoint) throttle(w http.ResponseWriter, r *http.Request, p knowmind.Principal) bool {
	now := time.Now()
	limit := "token"
	ok, wait := e.limits.reserve(p.TokenID, now, e.rateWait)
	if ok {
		var tenantWait time.Duration
		limit = "tenant"
		if ok, tenantWait = e.tenants.reserve(p.Tenant, now, e.rateWait); ok {
			wait = max(wait, tenantWait)
		} else {
			wait = tenantWait
		}
	}
	if !ok {
		secs := retryAfterSeconds(wait)
		e.metrics.rateLimited(limit)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeHTTPError(w, http.StatusTooManyRequests, unauthenticatedID(r), codeRateLimited, "rate limit exceeded ("+limit+")",
			map[string]any{"retry_after_s": secs})
		return false
	}
	if wait > 0 {
		e.metrics.rateLimited(limit + "_delayed")
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return false // the client left; nobody reads an answer
		}
	}
	return true
}

// unauthenticatedIDBytes bounds what is read of a request that failed
// authentication, only to echo its id in the 401.
const unauthenticatedIDBytes = 64 << 10

// unauthenticatedID is the JSON-RPC id of a POST that failed authentication,
// so the client can match the 401 to its request; nil when the body is
// larger than unauthenticatedIDBytes, slow, or holds no valid id.
func unauthenticatedID(r *http.Request) json.RawMessage {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r.Body, unauthenticatedIDBytes+1))
		done <- b
	}()
	var body []byte
	select {
	case body = <-done:
	case <-ctx.Done():
		return nil
	}
	if len(body) > unauthenticatedIDBytes {
		return nil
	}
	var msg rpcMessage
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || !validID(msg.ID) {
		return nil
	}
	return msg.ID
}

// rpcMessage is enough of a JSON-RPC message to route it.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
}

func (e *endpoint) post(w http.ResponseWriter, r *http.Request) {
	// The deadline covers the body only; it is lifted before the SDK runs,
	// so a long tool call or SSE answer is not cut off by it.
	rc := http.NewResponseController(w)
	deadlineSet := rc.SetReadDeadline(time.Now().Add(e.bodyTime)) == nil
	body, release, err := e.budget.readBody(w, r, e.maxBody)
	defer release()
	if deadlineSet {
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			w.Header().Set("Connection", "close") // the rest of the body is not read
			writeHTTPError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", e.maxBody), nil)
			return
		}
		if errors.Is(err, errBudget) {
			e.log.Warn("request refused: body budget exhausted", "request_id", r.Header.Get(requestIDHeader), "content_length", r.ContentLength)
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "1")
			writeHTTPError(w, http.StatusServiceUnavailable, nil, codeUnavailable,
				"server busy: too many large requests are being read at once, retry shortly", map[string]any{"retry_after_s": 1})
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			writeHTTPError(w, http.StatusRequestTimeout, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body not received within %s", e.bodyTime), nil)
			return
		}
		writeHTTPError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "cannot read request body", nil)
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		writeHTTPError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
			"JSON-RPC batches are not supported (MCP 2025-06-18): send one message per request", nil)
		return
	}
	var msg rpcMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		writeHTTPError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body is not a JSON-RPC message", nil)
		return
	}
	isCall := len(msg.ID) > 0 && string(msg.ID) != "null"
	if isCall && !validID(msg.ID) {
		writeHTTPError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number", nil)
		return
	}
	if msg.JSONRPC != "2.0" || (msg.Method == "" && !isCall) {
		writeHTTPError(w, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message", nil)
		return
	}
	if msg.Method != "" && !mcpMethods[msg.Method] && !mcpNotifications[msg.Method] {
		if !isCall {
			w.WriteHeader(http.StatusAccepted) // notifications get no answer, unknown ones included
			return
		}
		writeHTTPError(w, http.StatusOK, msg.ID, jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method, nil)
		return
	}

	jsonOK, sseOK := accepts(r.Header.Values("Accept"))
	if !jsonOK && !sseOK {
		writeHTTPError(w, http.StatusNotAcceptable, msg.ID, jsonrpc.CodeInvalidRequest,
			"Accept must allow application/json or text/event-stream", nil)
		return
	}
	if msg.Method == "tools/call" {
		if e.insufficientScope(w, r, msg.ID, body) {
			return
		}
		if e.svc != nil && len(body) > freeBodyBytes {
			small, refusal := e.svc.refuseOversized(body)
			if ti, _ := r.Context().Value(tokenInfoKey{}).(*auth.TokenInfo); refusal != nil && ti != nil {
				body = small
				ti = withExtra(ti, map[string]any{extraRefusal: refusal})
				r = r.WithContext(context.WithValue(r.Context(), tokenInfoKey{}, ti))
			}
		}
	}
	// The SDK insists on both media types and fixes JSON vs SSE per handler;
	// it always streams SSE here, and JSON clients get the response unwrapped.
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	h := e.sessions
	if r.Header.Get(sessionHeader) == "" && msg.Method != "initialize" {
		h = e.oneShot
	}
	if msg.Method == "initialize" && r.Header.Get(sessionHeader) == "" {
		// The new session's id is in the answer's header.
		defer func(header http.Header) {
			ti, _ := r.Context().Value(tokenInfoKey{}).(*auth.TokenInfo)
			if sid := header.Get(sessionHeader); sid != "" && ti != nil {
				e.closeSessions(e.sessionLimit.opened(ti, sid, time.Now()))
			}
		}(w.Header())
	}
	if sseOK {
		h.ServeHTTP(w, r)
		return
	}
	buf := &sseBuffer{header: http.Header{}}
	h.ServeHTTP(buf, r)
	buf.writeJSON(w, e.log)
}

// insufficientScope answers a tools/call whose token lacks the tool's scope
// as the MCP authorization spec asks: HTTP 403 with a WWW-Authenticate
// challenge naming the scope (error="insufficient_scope"), so an OAuth client
// can step up, and the JSON-RPC error in the body for clients that read only
// that (true: answered). Other refusals stay with callContext.
func (e *endpoint) insufficientScope(w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte) bool {
	ti, _ := r.Context().Value(tokenInfoKey{}).(*auth.TokenInfo)
	if e.svc == nil || ti == nil {
		return false
	}
	p, _ := ti.Extra[extraPrincipal].(knowmind.Principal)
	var call struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &call) != nil {
		return false
	}
	t := e.svc.tools[call.Params.Name]
	if t == nil || t.Scope == "" || p.Has(t.Scope) || !e.svc.reaches(p, t.Name) {
		return false
	}
	code := t.ScopeError
	if code == 0 {
		code = codeScope
	}
	scope := string(t.Scope)
	if e.auth.oauth != nil && ti.Extra[extraJWT] == true {
		if names := e.auth.oauth.IssuerScopes(t.Scope); len(names) > 0 {
			scope = strings.Join(names, " ")
		}
	}
	challenge := fmt.Sprintf("Bearer error=\"insufficient_scope\", scope=%q", scope)
	if e.auth.oauth != nil {
		challenge += fmt.Sprintf(", resource_metadata=%q", e.metadataURL(r))
	}
	challenge += fmt.Sprintf(", error_description=%q", "the tool "+t.Name+" needs the scope "+string(t.Scope))
	w.Header().Set("WWW-Authenticate", challenge)
	writeHTTPError(w, http.StatusForbidden, id, code, fmt.Sprintf("scope %s missing", t.Scope),
		map[string]any{"scope": string(t.Scope), "tool": t.Name})
	return true
}

func validID(id json.RawMessage) bool {
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// accepts reads an Accept header: JSON is the default (no header, */*,
// application/json); SSE only when text/event-stream is named.
func accepts(values []string) (jsonOK, sseOK bool) {
	named := false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			named = true
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
				continue
			}
			switch mt {
			case "text/event-stream":
				sseOK = true
			case "application/json", "application/*", "*/*":
				jsonOK = true
			}
		}
	}
	if !named {
		return true, false
	}
	return jsonOK, sseOK
}

// originAllowed: configured origins ("*" = any), or the same origin as the
// request's host (or as --public-url).
func (e *endpoint) originAllowed(origin string, r *http.Request) bool {
	origin = strings.TrimRight(origin, "/")
	for _, o := range e.origins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes the opaque origin "null"
	}
	if e.publicURL != "" {
		pu, err := url.Parse(e.publicURL)
		return err == nil && strings.EqualFold(u.Scheme, pu.Scheme) && strings.EqualFold(u.Host, pu.Host)
	}
	return strings.EqualFold(u.Host, r.Host)
}

// metadataURL is the RFC 9728 metadata of the endpoint r asked for; "" when
// none is served (no OAuth issuer).
func (e *endpoint) metadataURL(r *http.Request) string {
	if e.auth.oauth == nil {
		return ""
	}
	return e.baseURL(r) + metadataPath + r.URL.Path
}

// baseURL is where clients reach this service: --public-url; else the
// request's Host when it names the host of an allowed origin, else the
// address the connection came in on. The Host header is the client's to
// choose: echoed into WWW-Authenticate and the resource metadata it would
// send other clients (through a cache) to a server of its choosing.
func (e *endpoint) baseURL(r *http.Request) string {
	if e.publicURL != "" {
		return e.publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	for _, o := range e.origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
			return scheme + "://" + u.Host
		}
	}
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return scheme + "://" + local.String()
	}
	return scheme + "://localhost"
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sseBuffer collects the SDK's SSE answer to one POST so it can be sent as a
// single application/json body. Only the JSON-RPC response is kept;
// notifications sent while the request ran (progress, logs) are dropped,
// since a JSON client cannot receive them on this request.
type sseBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *sseBuffer) Header() http.Header { return b.header }
func (b *sseBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}
func (b *sseBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}
func (b *sseBuffer) Flush() {}

func (b *sseBuffer) writeJSON(w http.ResponseWriter, log *slog.Logger) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	for k, v := range b.header {
		w.Header()[k] = v
	}
	ct, _, _ := mime.ParseMediaType(b.header.Get("Content-Type"))
	if b.status != http.StatusOK || ct != "text/event-stream" {
		w.WriteHeader(b.status)
		_, _ = w.Write(b.body.Bytes())
		return
	}
	resp := lastResponse(b.body.Bytes())
	w.Header().Del("Connection")
	w.Header().Set("Content-Type", "application/json")
	if resp == nil {
		log.Error("mcp: SSE answer held no JSON-RPC response", "bytes", b.body.Len())
		writeHTTPError(w, http.StatusInternalServerError, nil, jsonrpc.CodeInternalError, "internal error", nil)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp)
}

// lastResponse returns the data of the last SSE event that is a JSON-RPC
// response (an id and no method).
func lastResponse(stream []byte) []byte {
	var found []byte
	var data bytes.Buffer
	flush := func() {
		if data.Len() == 0 {
			return
		}
		var m rpcMessage
		if json.Unmarshal(data.Bytes(), &m) == nil && m.Method == "" && len(m.ID) > 0 {
			found = bytes.Clone(data.Bytes())
		}
		data.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
	flush()
	return found
}

// statusWriter records the status for the request log; Unwrap lets the SDK
// flush SSE through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// quiet passes on only warnings and errors: the SDK logs every session's
// connect and disconnect at info, and one-shot calls are a session each.
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(minLevel{log.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

// clientAddr is the address failed token lookups are counted against: the
// peer's IP, or, when the peer is a trusted proxy, the rightmost address of
// X-Forwarded-For that is not a trusted proxy (the leftmost ones are the
// client's to choose, so they are never believed).
func clientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap()
	if !isTrusted(addr, trusted) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // unreadable: stop at the last address known good
		}
		addr = hop.Unmap()
		if !isTrusted(addr, trusted) {
			break
		}
	}
	return addr.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
