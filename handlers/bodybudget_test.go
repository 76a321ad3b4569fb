package handlers

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

// A tools/call whose arguments hold a string longer than its tool allows is
// refused before the SDK reads the body (refuseOversized), with the answer
// the tool gives: the same code, message and data in the order guardCalls
// checks (unknown parameter, then validate tags, then the precheck), over
// JSON, SSE and a session alike; and it costs a few times its body, not the
// thirty it cost through the SDK.
func TestOversizedArgumentsAnswerAsTheTool(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, "oversized", knowmind.ScopeRead, knowmind.ScopeWrite)
	long := strings.Repeat("a", knowmind.MaxContentChars+1)
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	for _, tc := range []struct {
		name, body string
		code       int64
		message    string
		data       string
	}{
		{"content too long", call("knowmind_store_memory", `{"title":"t","content":"`+long+`"}`),
			-32603, "too_large", `{"detail":"content exceeds 1000000 characters","reason":"too_large"}`},
		{"unknown parameter first", call("knowmind_store_memory", `{"content":"`+long+`","colour":"red"}`),
			-32602, `unknown parameter "colour"`, `{"param":"colour"}`},
		{"validate tags before the precheck", call("knowmind_store_memory", `{"title":"`+strings.Repeat("t", 501)+`","content":"`+long+`"}`),
			-32602, "title must have at most 500 characters", `{"param":"title"}`},
		{"blank is content_required", call("knowmind_store_memory", `{"content":"`+strings.Repeat(" ", knowmind.MaxContentChars+1)+`"}`),
			-32603, "content_required", `{"detail":"content is required and must not be empty","reason":"content_required"}`},
		{"a query over its bound", call("knowmind_recall", `{"query":"`+strings.Repeat("q", 70_000)+`"}`),
			-32602, "query must have at most 4000 characters", `{"param":"query"}`},
	} {
		for _, accept := range []string{"application/json", "application/json, text/event-stream"} {
			r := send(t, url, token, tc.body, "Accept", accept)
			if r.Status != 200 || r.Error == nil || r.Error.Code != tc.code || r.Error.Message != tc.message ||
				string(r.Error.Data) != tc.data || string(r.ID) != "7" {
				t.Errorf("%s (Accept %s): HTTP %d %.300s; want %d %q %s", tc.name, accept, r.Status, r.Body, tc.code, tc.message, tc.data)
			}
		}
	}

	// In a session, and with a session the server does not know (the SDK's 404 first).
	sid := openSession(t, url, token)
	body := call("knowmind_store_memory", `{"content":"`+long+`"}`)
	if r := send(t, url, token, body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18"); r.Error == nil || r.Error.Message != "too_large" {
		t.Errorf("in a session: HTTP %d %.300s, want too_large", r.Status, r.Body)
	}
	if r := send(t, url, token, body, "Mcp-Session-Id", "no-such-session", "MCP-Protocol-Version", "2025-06-18"); r.Status != 404 {
		t.Errorf("unknown session: HTTP %d %.300s, want 404", r.Status, r.Body)
	}
	// A token without the write scope still gets the scope's 403 first.
	reader := newToken(t, "oversized", knowmind.ScopeRead)
	if r := send(t, url, reader, body); r.Status != 403 {
		t.Errorf("read-only token: HTTP %d %.300s, want 403", r.Status, r.Body)
	}

	// The largest body the cap lets through, refused: what the service
	// allocates for it, in multiples of the body.
	big := call("knowmind_store_memory", `{"content":"`+strings.Repeat("a", largestLegalBody-300)+`"}`)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 3
	for range calls {
		if r := send(t, url, token, big); r.Error == nil || r.Error.Message != "too_large" {
			t.Fatalf("cap-sized: HTTP %d %.300s, want too_large", r.Status, r.Body)
		}
	}
	runtime.ReadMemStats(&after)
	perBody := float64(after.TotalAlloc-before.TotalAlloc) / calls / float64(len(big))
	t.Logf("a refused call of %.1f MB allocates %.1f× its body", float64(len(big))/1e6, perBody)
	if perBody > 8 {
		t.Errorf("a refused call of %.1f MB allocates %.1f× its body, want at most 8×", float64(len(big))/1e6, perBody)
	}
}

// refuseOversized hands the SDK the body unchanged whenever the arguments
// pass their checks or the body is not the plain shape it reads.
func TestRefuseOversizedLeavesOtherBodiesAlone(t *testing.T) {
	d := testDeps(t)
	s := newService(d, d.Logger)
	newMCPServer(s)
	long := strings.Repeat("a", knowmind.MaxContentChars+1)
	// 999,999 characters written as 6-byte escapes: a long string, legal.
	escaped := strings.Repeat(`\u00e4`, knowmind.MaxContentChars-1)
	for name, body := range map[string]string{
		"legal after all":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"content":"` + escaped + `"}}}`,
		"params twice":        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"content":"` + long + `"}},"params":{"name":"knowmind_stats"}}`,
		"an escaped key":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","p\u0061rams":{"name":"knowmind_store_memory","arguments":{"content":"` + long + `"}}}`,
		"arguments not {}":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":["` + long + `"]}}`,
		"an unknown tool":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_nope","arguments":{"content":"` + long + `"}}}`,
		"unbounded parameter": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_create_note","arguments":{"project":"p","body":"` + long + `"}}}`,
		"nested too deep":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"content":"` + long + `","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}}}`,
	} {
		if !json.Valid([]byte(body)) {
			t.Fatalf("%s: not JSON", name)
		}
		got, err := s.refuseOversized([]byte(body))
		if err != nil || string(got) != body {
			t.Errorf("%s: refused (%v) or changed the body", name, err)
		}
	}
	// Refused: the same message with empty arguments, every other byte kept.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"knowmind_store_memory","arguments" : {"content":"` + long + `"} ,"x":[1,{"y":2}]}}`
	got, err := s.refuseOversized([]byte(body))
	want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":3},"name":"knowmind_store_memory","arguments" : {} ,"x":[1,{"y":2}]}}`
	if ke := knowmind.AsError(err); ke == nil || string(got) != want {
		t.Errorf("refused body %.200s, error %v; want %s and too_large", got, err, want)
	}
}
