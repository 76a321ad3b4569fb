package handlers

import (
	"net/http"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Issue 13: sessions per token were unbounded — a token opening sessions in a
// loop grew the process until each idled out after 30 minutes. Now a token
// holds at most SessionsPerToken; opening one more closes its least recently
// used session, and other tokens' sessions are untouched.
func TestSessionsPerTokenBounded(t *testing.T) {
	srv := newTestServer(t, func(d *Deps) { d.SessionsPerToken = 3 })
	url := srv.URL + mcpPath
	tenant := dgraphtest.TenantName(t)
	tok, other := newToken(t, tenant, knowmind.ScopeRead), newToken(t, tenant, knowmind.ScopeRead)
	alive := func(token, sid string) bool {
		t.Helper()
		r := send(t, url, token, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"knowmind_health","arguments":{}}}`,
			"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
		switch {
		case r.Status == http.StatusOK && r.Error == nil:
			return true
		case r.Status == http.StatusNotFound:
			return false
		}
		t.Fatalf("call in session %s: HTTP %d %s", sid, r.Status, r.Body)
		return false
	}
	otherSID := openSession(t, url, other)
	var sids []string
	for range 3 {
		sids = append(sids, openSession(t, url, tok))
	}
	// The first is used now, so the second is the least recently used.
	if !alive(tok, sids[0]) {
		t.Fatal("session 1 closed while the token held 3")
	}
	sids = append(sids, openSession(t, url, tok), openSession(t, url, tok))
	want := []bool{true, false, false, true, true}
	for i, sid := range sids {
		if got := alive(tok, sid); got != want[i] {
			t.Errorf("session %d of 5 alive: %v, want %v", i+1, got, want[i])
		}
	}
	if !alive(other, otherSID) {
		t.Error("another token's session was closed")
	}
	// A client's DELETE frees its place: the next session closes none.
	if r := do(t, http.MethodDelete, url, tok, "", "Mcp-Session-Id", sids[0], "MCP-Protocol-Version", "2025-06-18"); r.Status >= 300 {
		t.Fatalf("DELETE: HTTP %d %s", r.Status, r.Body)
	}
	openSession(t, url, tok)
	for _, i := range []int{3, 4} {
		if !alive(tok, sids[i]) {
			t.Errorf("session %d closed after a DELETE made room", i+1)
		}
	}
}
