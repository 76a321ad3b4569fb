package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func TestMain(m *testing.M) {
	// A fuzzing run (go test -fuzz, and each of its workers) runs only a
	// fuzz target, which needs no Dgraph (fuzz_test.go).
	for _, arg := range os.Args[1:] {
		if strings.HasPrefix(arg, "-test.fuzz") && !strings.HasPrefix(arg, "-test.fuzzcachedir") {
			os.Exit(m.Run())
		}
	}
	dgraphtest.Main(m, nil)
}

const (
	testJWTSecret   = "test-secret-for-hs256-at-least-32-bytes!"
	testJWTAudience = "knowmind"
)

func testLogger() *slog.Logger {
	if os.Getenv("KNOWMIND_TEST_VERBOSE") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testDeps are the Deps of a test server: the shared Dgraph, HS256 JWTs,
// a rate limit high enough not to interfere.
func testDeps(t testing.TB) Deps {
	env := dgraphtest.Shared(t)
	return Deps{
		Ready: func(ctx context.Context) (bool, map[string]string) {
			for _, err := range env.Client.Ping(ctx) {
				if err != nil {
					return false, nil
				}
			}
			return true, nil
		},
		Graph:     env.Client,
		Logger:    testLogger(),
		JWT:       JWTConfig{Secret: []byte(testJWTSecret), Audience: testJWTAudience},
		RateLimit: 1000,
		RateBurst: 1000,
	}
}

// newTestServer serves the router built from testDeps, changed by edit.
func newTestServer(t testing.TB, edit func(*Deps)) *httptest.Server {
	d := testDeps(t)
	if edit != nil {
		edit(&d)
	}
	srv := httptest.NewServer(NewRouter(d))
	t.Cleanup(srv.Close)
	return srv
}

// newToken creates a kmt_ token for tenant (creating the tenant).
func newToken(t testing.TB, tenant string, scopes ...knowmind.Scope) string {
	t.Helper()
	secret, _, err := dgraphtest.Shared(t).Client.CreateToken(context.Background(), tenant, scopes, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// newDefaultToken is newToken: a token without a toolset list, shown knowmind.DefaultToolsets.
func newDefaultToken(t testing.TB, tenant string, scopes ...knowmind.Scope) string {
	t.Helper()
	return newToken(t, tenant, scopes...)
}

// hsJWT signs claims with the test HS256 secret.
func hsJWT(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testJWTSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reply is an HTTP answer of the MCP endpoint.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
	// The JSON-RPC response, when the body is one.
	ID     json.RawMessage
	Result json.RawMessage
	Error  *jsonrpc.Error
}

// send POSTs body to url with a bearer token and headers (key, value pairs).
// Accept defaults to application/json, as curl users send it.
func send(t testing.TB, url, token, body string, headers ...string) reply {
	t.Helper()
	return do(t, http.MethodPost, url, token, body, headers...)
}

func do(t testing.TB, method, url, token, body string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
	payload := data
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		payload = lastResponse(data)
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(payload, &msg) == nil {
		r.ID, r.Result, r.Error = msg.ID, msg.Result, msg.Error
	}
	return r
}

// callTool sends a one-shot tools/call (no session, as in the spec's examples).
func callTool(t testing.TB, url, token, name string, args any) reply {
	t.Helper()
	a, _ := json.Marshal(args)
	return send(t, url, token, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a))
}

// structured decodes a successful tool result's structuredContent into out
// and checks the text block carries the same JSON.
func structured(t testing.TB, r reply, out any) {
	t.Helper()
	if r.Status != http.StatusOK || r.Error != nil {
		t.Fatalf("tool call failed: HTTP %d, error %+v, body %s", r.Status, r.Error, r.Body)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError {
		t.Fatalf("tool result %s: %v", r.Result, err)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || !jsonEqual(res.Content[0].Text, string(res.StructuredContent)) {
		t.Fatalf("text content must repeat structuredContent: %s", r.Result)
	}
	if err := json.Unmarshal(res.StructuredContent, out); err != nil {
		t.Fatal(err)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// wantRPCError checks a JSON-RPC error code (and, if param != "", data.param).
func wantRPCError(t testing.TB, r reply, code int64, param string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("want JSON-RPC error %d, got HTTP %d %s", code, r.Status, r.Body)
	}
	if r.Error.Code != code {
		t.Fatalf("error code = %d (%s), want %d", r.Error.Code, r.Error.Message, code)
	}
	if param != "" {
		var data struct{ Param string }
		_ = json.Unmarshal(r.Error.Data, &data)
		if data.Param != param || !strings.Contains(r.Error.Message, param) {
			t.Fatalf("error %q data %s: want it to name parameter %q", r.Error.Message, r.Error.Data, param)
		}
	}
}

// seedTenant writes two memories, one chunk with a vector and one relation
// into tenant straight through Dgraph, as an ingest would leave them.
func seedTenant(t testing.TB, tenant, title string) {
	t.Helper()
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	ten, err := env.Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]string, env.Embedder.Dim())
	for i := range vec {
		vec[i] = "0"
	}
	vec[0] = "1"
	now := time.Now().UTC()
	nq := fmt.Sprintf(`
_:m <dgraph.type> "Memory" .
_:m <Memory.id> "mem-%[1]s-1" .
_:m <Memory.kind> "memory" .
_:m <Memory.title> %[2]q .
_:m <Memory.content> "content of %[1]s" .
_:m <Memory.status> "indexed" .
_:m <Memory.created_at> %[3]q .
_:m <Memory.updated_at> %[3]q .
_:m <Memory.valid_from> %[3]q .
_:m <Memory.chunks> _:c .
_:c <dgraph.type> "Chunk" .
_:c <Chunk.text> "content of %[1]s" .
_:c <Chunk.embedding> "[%[5]s]" .
_:d <dgraph.type> "Memory" .
_:d <Memory.id> "mem-%[1]s-2" .
_:d <Memory.kind> "document" .
_:d <Memory.title> "second of %[1]s" .
_:d <Memory.status> "indexed" .
_:d <Memory.created_at> %[4]q .
_:d <Memory.updated_at> %[4]q .
_:d <Memory.valid_from> %[4]q .
_:m <RELATES_TO> _:d .
`, tenant, title, now.Add(-time.Hour).Format(time.RFC3339), now.Format(time.RFC3339), strings.Join(vec, ","))
	dgraphtest.SetNquads(t, ten, nq)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// openSession initializes a session and sends notifications/initialized.
func openSession(t testing.TB, url, token string) string {
	t.Helper()
	r := send(t, url, token, initializeBody)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d %s (session %q)", r.Status, r.Body, sid)
	}
	n := send(t, url, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	if n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %s, want 202", n.Status, n.Body)
	}
	return sid
}
