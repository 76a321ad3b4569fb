package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// Fuzz targets of the transport. They need no Dgraph: tokens come from
// fuzzTokens, and a tool that would open a tenant panics on the nil graph,
// which the call's recovery turns into -32603.

const fuzzToken = "kmt_fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz"

type fuzzTokens struct{}

func (fuzzTokens) VerifyToken(_ context.Context, plaintext string) (graph.Token, error) {
	if plaintext != fuzzToken {
		return graph.Token{}, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token")
	}
	return graph.Token{ID: "0x1", Tenant: "fuzz", Scopes: []knowmind.Scope{knowmind.ScopeAdmin}}, nil
}

func (fuzzTokens) TouchToken(context.Context, string, time.Time) error { return nil }

func fuzzEndpoint(tb testing.TB) (*endpoint, *service) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d := Deps{Logger: log, Ready: func(context.Context) (bool, map[string]string) { return true, nil }}
	s := newService(d, log)
	return newEndpoint(newMCPServer(s), newAuthenticator(fuzzTokens{}, d.JWT, log), d, log), s
}

// FuzzToolParams: every tool's strict parameter decoding takes any JSON
// without panicking, and what it accepts is a JSON object.
func FuzzToolParams(f *testing.F) {
	f.Add([]byte(`{"query":"Onboarding","k":5,"hops":1}`))
	f.Add([]byte(`{"as_of":"2026-03-14T00:00:00Z","query":"x"}`))
	f.Add([]byte(`{"content":"x","tags":["a","a"],"memory_type":"semantic"}`))
	f.Add([]byte(`{"from_id":"a","to_id":"b","rel_type":"FOR_CLIENT"}`))
	f.Add([]byte(`{"k":1e400,"hops":-0,"query":null}`))
	f.Add([]byte(`[]`))
	_, s := fuzzEndpoint(f)
	f.Fuzz(func(t *testing.T, args []byte) {
		for name, tool := range s.tools {
			if err := tool.check(args); err == nil {
				var obj map[string]json.RawMessage
				if json.Unmarshal(args, &obj) != nil && len(bytes.TrimSpace(args)) > 0 {
					t.Fatalf("%s accepted non-object arguments %q", name, args)
				}
			}
		}
	})
}

// FuzzJSONRPC: any POST body gets an HTTP answer with a status, never a panic.
func FuzzJSONRPC(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_health","arguments":{}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"knowmind_recall","arguments":{"query":"a"}}}`))
	f.Add([]byte(initializeBody))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":{},"method":"ping"}`))
	e, _ := fuzzEndpoint(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, mcpPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fuzzToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code < 200 || w.Code > 599 {
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}
