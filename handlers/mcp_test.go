package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func TestHandshake(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)

	r := send(t, url, token, initializeBody)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("initialize: HTTP %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string }
		Capabilities    map[string]json.RawMessage
	}
	if err := json.Unmarshal(r.Result, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "knowmind" || init.ServerInfo.Version != knowmind.Version || init.Capabilities["tools"] == nil {
		t.Fatalf("initialize result %s", r.Result)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	n := send(t, url, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if n.Status != http.StatusAccepted || len(n.Body) != 0 {
		t.Fatalf("notification: HTTP %d %s, want 202 without body", n.Status, n.Body)
	}
	l := send(t, url, token, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18",
		outputSchemasHeader, "true")
	var list struct {
		Tools []struct {
			Name         string
			Description  string
			InputSchema  map[string]any
			OutputSchema map[string]any
		}
	}
	if err := json.Unmarshal(l.Result, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %s %v", l.Body, err)
	}
	for _, tl := range list.Tools {
		if tl.Description == "" || tl.InputSchema["type"] != "object" || tl.OutputSchema["type"] != "object" {
			t.Errorf("tool %s lacks description or schemas: %+v", tl.Name, tl)
		}
	}
	if string(l.ID) != "2" {
		t.Errorf("response id %s, want 2", l.ID)
	}

	// The same session through /mcp.
	p := send(t, srv.URL+"/mcp", token, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "Mcp-Session-Id", sid)
	if p.Status != http.StatusOK || p.Error != nil {
		t.Fatalf("ping on /mcp: HTTP %d %s", p.Status, p.Body)
	}
}

func TestVersionNegotiation(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	for asked, want := range map[string]string{
		"2025-06-18": "2025-06-18",
		"2025-03-26": "2025-03-26", // a supported older version is echoed
		"2099-01-01": "2025-06-18", // an unknown one gets ours
		"2025-11-25": "2025-06-18",
	} {
		r := send(t, url, token, strings.Replace(initializeBody, "2025-06-18", asked, 1))
		var res struct{ ProtocolVersion string }
		_ = json.Unmarshal(r.Result, &res)
		if res.ProtocolVersion != want {
			t.Errorf("client asks %s: got %q (%s), want %s", asked, res.ProtocolVersion, r.Body, want)
		}
	}
	for _, bad := range []string{"1999-01-01", "2026-07-28", "foo"} {
		r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", bad)
		if r.Status != http.StatusBadRequest || r.Error == nil {
			t.Errorf("MCP-Protocol-Version %q: HTTP %d %s, want 400 with a JSON-RPC error", bad, r.Status, r.Body)
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	sid := openSession(t, url, token)

	// go-sdk v1.8.0 alone answers HTTP 400 text/plain here.
	for _, s := range []string{"", sid} {
		r := send(t, url, token, `{"jsonrpc":"2.0","id":"x1","method":"no/such/method","params":{}}`, "Mcp-Session-Id", s)
		wantRPCError(t, r, jsonrpc.CodeMethodNotFound, "")
		if r.Status != http.StatusOK || string(r.ID) != `"x1"` {
			t.Errorf("unknown method (session %q): HTTP %d id %s", s, r.Status, r.ID)
		}
	}
	r := send(t, url, token, `{"jsonrpc":"2.0","method":"notifications/whatever"}`, "Mcp-Session-Id", sid)
	if r.Status != http.StatusAccepted {
		t.Errorf("unknown notification: HTTP %d, want 202", r.Status)
	}

	r = send(t, url, token, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "Mcp-Session-Id", sid)
	if r.Status != http.StatusBadRequest {
		t.Errorf("batch: HTTP %d, want 400", r.Status)
	}
	wantRPCError(t, r, jsonrpc.CodeInvalidRequest, "")

	r = send(t, url, token, `{"jsonrpc":"2.0","id":1,`)
	if r.Status != http.StatusBadRequest {
		t.Errorf("broken JSON: HTTP %d", r.Status)
	}
	wantRPCError(t, r, jsonrpc.CodeParseError, "")

	r = send(t, url, token, `{"id":1,"method":"ping"}`)
	wantRPCError(t, r, jsonrpc.CodeInvalidRequest, "")

	r = callTool(t, url, token, "knowmind_no_such_tool", map[string]any{})
	if r.Error == nil {
		t.Errorf("unknown tool: %s, want a JSON-RPC error", r.Body)
	}

	r = do(t, http.MethodPut, url, token, `{}`)
	if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") == "" {
		t.Errorf("PUT: HTTP %d Allow %q", r.Status, r.Header.Get("Allow"))
	}

	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_health","arguments":{"x":"` + strings.Repeat("a", 17<<20) + `"}}}`
	if r := send(t, url, token, big); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("17 MiB body: HTTP %d, want 413", r.Status)
	}

	r = send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Accept", "text/html")
	if r.Status != http.StatusNotAcceptable {
		t.Errorf("Accept text/html: HTTP %d, want 406", r.Status)
	}
}

func TestSessionDeletion(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	sid := openSession(t, url, token)

	if r := do(t, http.MethodDelete, url, token, "", "Mcp-Session-Id", sid); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d %s", r.Status, r.Body)
	}
	r := send(t, url, token, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	if r.Status != http.StatusNotFound {
		t.Fatalf("after DELETE: HTTP %d %s, want 404", r.Status, r.Body)
	}
	if r := do(t, http.MethodDelete, url, token, "", "Mcp-Session-Id", sid); r.Status != http.StatusNotFound {
		t.Errorf("second DELETE: HTTP %d, want 404", r.Status)
	}
	if r := send(t, url, token, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", "no-such-session"); r.Status != http.StatusNotFound {
		t.Errorf("unknown session: HTTP %d, want 404", r.Status)
	}
}

func TestSessionBelongsToItsToken(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	owner := newToken(t, tenant, knowmind.ScopeRead)
	other := newToken(t, tenant, knowmind.ScopeRead)
	sid := openSession(t, url, owner)
	r := send(t, url, other, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	if r.Status != http.StatusForbidden {
		t.Fatalf("another token on the session: HTTP %d %s, want 403", r.Status, r.Body)
	}
}

func TestSSEAndJSONModes(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"knowmind_health","arguments":{}}}`

	for _, tc := range []struct {
		accept, wantType string
	}{
		{"application/json", "application/json"},
		{"", "application/json"},
		{"*/*", "application/json"},
		{"text/event-stream", "text/event-stream"},
		{"application/json, text/event-stream", "text/event-stream"},
	} {
		for _, session := range []bool{false, true} {
			hdr := []string{"Accept", tc.accept}
			if session {
				hdr = append(hdr, "Mcp-Session-Id", openSession(t, url, token))
			}
			r := send(t, url, token, call, hdr...)
			ct := r.Header.Get("Content-Type")
			if r.Status != http.StatusOK || !strings.HasPrefix(ct, tc.wantType) {
				t.Fatalf("Accept %q (session %v): HTTP %d %q, want %s", tc.accept, session, r.Status, ct, tc.wantType)
			}
			if tc.wantType == "text/event-stream" && !strings.HasPrefix(string(r.Body), "event: message\n") {
				t.Fatalf("SSE body %q", r.Body)
			}
			var health HealthResult
			structured(t, r, &health)
			if health.Status != "ok" || string(r.ID) != "5" {
				t.Fatalf("Accept %q: %s", tc.accept, r.Body)
			}
		}
	}
}

func TestGETStream(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)

	if r := do(t, http.MethodGet, url, token, "", "Accept", "text/event-stream"); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET without session: HTTP %d, want 405", r.Status)
	}
	sid := openSession(t, url, token)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET stream: HTTP %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("first SSE line %q, %v", line, err)
	}
}

func TestOrigin(t *testing.T) {
	srv := newTestServer(t, func(d *Deps) { d.AllowedOrigins = []string{"https://app.example"} })
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	for _, o := range []string{"https://evil.example", "null", "http://localhost:1"} {
		r := send(t, url, token, ping, "Origin", o)
		if r.Status != http.StatusForbidden {
			t.Errorf("Origin %s: HTTP %d, want 403", o, r.Status)
		}
	}
	// Refused before authentication: no token needed to be refused.
	if r := send(t, url, "", ping, "Origin", "https://evil.example"); r.Status != http.StatusForbidden {
		t.Errorf("foreign origin without token: HTTP %d, want 403", r.Status)
	}
	r := send(t, url, token, ping, "Origin", "https://app.example")
	if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("allowed origin: HTTP %d, ACAO %q", r.Status, r.Header.Get("Access-Control-Allow-Origin"))
	}
	if r := send(t, url, token, ping, "Origin", srv.URL); r.Status != http.StatusOK {
		t.Errorf("same origin: HTTP %d", r.Status)
	}
	if r := do(t, http.MethodOptions, url, "", "", "Origin", "https://app.example"); r.Status != http.StatusNoContent ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: HTTP %d %v", r.Status, r.Header)
	}
}

func TestRateLimitPerToken(t *testing.T) {
	srv := newTestServer(t, func(d *Deps) { d.RateLimit, d.RateBurst, d.RateWait = 0.5, 3, -1 })
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	noisy := newToken(t, tenant, knowmind.ScopeRead)
	quiet := newToken(t, tenant, knowmind.ScopeRead)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	var limited reply
	for i := 0; i < 10; i++ {
		if r := send(t, url, noisy, ping); r.Status == http.StatusTooManyRequests {
			limited = r
			break
		}
	}
	if limited.Status != http.StatusTooManyRequests {
		t.Fatal("10 requests at 0.5/s with burst 3 were never limited")
	}
	if s, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q", limited.Header.Get("Retry-After"))
	}
	wantRPCError(t, limited, 429, "")
	if string(limited.ID) != "1" {
		t.Errorf("429 echoes id %s, want the request's 1", limited.ID)
	}
	if r := send(t, url, quiet, ping); r.Status != http.StatusOK {
		t.Errorf("another token while the first is limited: HTTP %d", r.Status)
	}
}

func TestRateLimiterBuckets(t *testing.T) {
	l := newRateLimiter(1, 2)
	now := time.Now()
	for i := 0; i < 2; i++ {
		if ok, _ := l.allow("a", now); !ok {
			t.Fatalf("request %d within burst refused", i)
		}
	}
	ok, wait := l.allow("a", now)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("third request: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := l.allow("a", now.Add(time.Second)); !ok {
		t.Error("refused after refilling one token")
	}
	// An idle bucket is dropped at the next sweep.
	l.allow("b", now.Add(10*time.Minute))
	if _, kept := l.buckets["a"]; kept || len(l.buckets) != 1 {
		t.Errorf("buckets after sweep: %v", l.buckets)
	}
	if newRateLimiter(0, 0) != nil {
		t.Error("rate 0 must disable limiting")
	}
}

// A client that sends the headers and then trickles (or stalls) the body is
// answered 408 after BodyReadTimeout instead of holding its connection for
// ever; a body that arrives in time is served as usual.
func TestSlowBodyTimesOut(t *testing.T) {
	srv := newTestServer(t, func(d *Deps) { d.BodyReadTimeout = 500 * time.Millisecond })
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if _, err := fmt.Fprintf(conn, "POST /api/mcp/v1 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n%s",
		srv.Listener.Addr(), token, len(body)+100, body[:10]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("stalled body: no answer within 10 s: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled body: HTTP %d, want 408", resp.StatusCode)
	}
	// The deadline is lifted once the body is in: a normal call still works
	// on a server with a short body timeout.
	if r := send(t, srv.URL+"/api/mcp/v1", token, body); r.Status != http.StatusOK {
		t.Fatalf("ping: HTTP %d %s", r.Status, r.Body)
	}
}

// Guessing tokens is budgeted per client address: after the burst of
// failures the client gets 429 with Retry-After before any token lookup.
func TestFailedAuthenticationsAreLimited(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	var limited reply
	for i := 0; i < failedAuthBurst+10; i++ {
		r := send(t, url, fmt.Sprintf("kmt_guess%040d", i), ping)
		if r.Status == http.StatusTooManyRequests {
			limited = r
			break
		}
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: HTTP %d, want 401", i, r.Status)
		}
	}
	if limited.Status != http.StatusTooManyRequests {
		t.Fatalf("%d failed guesses were never limited", failedAuthBurst+10)
	}
	if s, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q", limited.Header.Get("Retry-After"))
	}
}

// Issue 13: 30 requests without a token from one address made every valid
// token from that address get 429 — behind a reverse proxy, every user's.
// Now only token lookups that fail are counted, a spent budget refuses only
// tokens not seen valid, and X-Forwarded-For is believed from trusted proxies
// only.
func TestStrangersCannotLockOutValidTokens(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tenant := dgraphtest.TenantName(t)
	inUse := newToken(t, tenant, knowmind.ScopeRead)
	if r := send(t, url, inUse, ping); r.Status != http.StatusOK {
		t.Fatalf("valid token: HTTP %d", r.Status)
	}
	for i := 0; i < 2*failedAuthBurst; i++ {
		if r := send(t, url, "", ping); r.Status != http.StatusUnauthorized {
			t.Fatalf("request %d without a token: HTTP %d, want 401", i, r.Status)
		}
		if r := send(t, url, "not-a-token", ping); r.Status != http.StatusUnauthorized {
			t.Fatalf("malformed token %d: HTTP %d, want 401", i, r.Status)
		}
	}
	// Requests that cost no lookup spend nothing: a token never seen before still works.
	fresh := newToken(t, tenant, knowmind.ScopeRead)
	if r := send(t, url, fresh, ping); r.Status != http.StatusOK {
		t.Fatalf("valid token after %d requests without one: HTTP %d %s", 2*failedAuthBurst, r.Status, r.Body)
	}
	// Guessed tokens from the same address (a spoofed X-Forwarded-For changes nothing
	// without trusted proxies) spend the budget; tokens in use keep working.
	limited := false
	for i := 0; i < failedAuthBurst+10 && !limited; i++ {
		r := send(t, url, fmt.Sprintf("kmt_guess%040d", i), ping, "X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i))
		limited = r.Status == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("guessed tokens were never limited")
	}
	for _, tok := range []string{inUse, fresh} {
		if r := send(t, url, tok, ping); r.Status != http.StatusOK {
			t.Fatalf("token in use while strangers guess: HTTP %d %s", r.Status, r.Body)
		}
	}
	jwtTok := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scope": "read", "aud": testJWTAudience,
		"exp": time.Now().Add(time.Hour).Unix()})
	if r := send(t, url, jwtTok, ping); r.Status != http.StatusOK {
		t.Fatalf("JWT while strangers guess: HTTP %d %s", r.Status, r.Body)
	}
}

// Behind a trusted proxy each client has its own budget: the proxy's
// X-Forwarded-For names the client, and what a client prepends itself is
// ignored.
func TestFailedAuthenticationsPerClientBehindTrustedProxy(t *testing.T) {
	srv := newTestServer(t, func(d *Deps) {
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	url := srv.URL + "/api/mcp/v1"
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	limited := false
	for i := 0; i < failedAuthBurst+10 && !limited; i++ {
		// The attacker varies the part it controls; the proxy appends the address it saw.
		xff := fmt.Sprintf("198.51.100.%d, 203.0.113.7", i)
		limited = send(t, url, fmt.Sprintf("kmt_guess%040d", i), ping, "X-Forwarded-For", xff).Status == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("guesses from one client behind the proxy were never limited")
	}
	// A token created now was never seen valid: only another client's budget lets it in.
	fresh := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	if r := send(t, url, fresh, ping, "X-Forwarded-For", "203.0.113.8"); r.Status != http.StatusOK {
		t.Fatalf("another client's new token behind the same proxy: HTTP %d %s", r.Status, r.Body)
	}
}

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct{ peer, xff, want string }{
		{"192.0.2.1:5000", "203.0.113.7", "192.0.2.1"},                     // untrusted peer: its header is ignored
		{"10.0.0.2:5000", "203.0.113.7", "203.0.113.7"},                    // the proxy names the client
		{"10.0.0.2:5000", "1.1.1.1, 203.0.113.7, 10.0.0.3", "203.0.113.7"}, // two proxies; the client's own part ignored
		{"10.0.0.2:5000", "", "10.0.0.2"},
		{"10.0.0.2:5000", "garbage", "10.0.0.2"},
		{"[::ffff:10.0.0.2]:5000", "203.0.113.7", "203.0.113.7"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := clientAddr(r, trusted); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
}
