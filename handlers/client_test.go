package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// bearer adds the token to every request of the SDK client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestOfficialGoClient drives the endpoint with the MCP Go SDK's own client,
// as an independent implementation would: initialize, list, call.
func TestOfficialGoClient(t *testing.T) {
	srv := newTestServer(t, nil)
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, path := range []string{"/api/mcp/v1", "/mcp"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "knowmind-test-client", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   srv.URL + path,
			HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
		}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", path, err)
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
			t.Errorf("negotiated %q", v)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		if !slices.Contains(names, "knowmind_health") || !slices.Contains(names, "knowmind_list_recent") {
			t.Fatalf("tools %v", names)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "knowmind_health", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call health: %v %+v", err, res)
		}
		var h HealthResult
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &h) != nil || h.Status != "ok" || h.Version != knowmind.Version {
			t.Fatalf("health %s", b)
		}

		// A spec error arrives as a JSON-RPC error naming the parameter.
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "knowmind_list_recent", Arguments: map[string]any{"k": 0}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("k=0: %v, want -32602", err)
		}
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}
