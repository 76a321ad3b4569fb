package handlers

import (
	"net/http"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Workload: one tools/call of knowmind_stats on a seeded tenant over
// loopback HTTP, including token verification (one Dgraph read) and the
// tenant's stats query. Run: go test ./handlers/ -run '^$' -bench . -benchtime 200x
func BenchmarkToolCall(b *testing.B) {
	srv := newTestServer(b, func(d *Deps) { d.RateLimit = 0 })
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(b)
	token := newToken(b, tenant, knowmind.ScopeRead)
	seedTenant(b, tenant, "bench")
	stats := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_stats","arguments":{}}}`
	health := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_health","arguments":{}}}`

	run := func(b *testing.B, body string, headers ...string) {
		for b.Loop() {
			if r := send(b, url, token, body, headers...); r.Status != http.StatusOK || r.Error != nil {
				b.Fatalf("HTTP %d %s", r.Status, r.Body)
			}
		}
	}
	b.Run("one-shot/json/stats", func(b *testing.B) { run(b, stats) })
	b.Run("one-shot/json/health", func(b *testing.B) { run(b, health) })
	b.Run("one-shot/json/ping", func(b *testing.B) { run(b, `{"jsonrpc":"2.0","id":1,"method":"ping"}`) })
	b.Run("session/sse/stats", func(b *testing.B) {
		sid := openSession(b, url, token)
		run(b, stats, "Mcp-Session-Id", sid, "Accept", "text/event-stream")
	})
}
