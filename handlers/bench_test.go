package handlers

import (
	"fmt"
	"net/http"
	"strings"
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

// Workload: one knowmind_capture of a German meeting note (11 lines: 2 facts
// stored, 3 drafts, small talk dropped) with the rules extractor, over
// loopback HTTP, each iteration with other numbers and dates so every fact is
// new and compared with the growing set of facts about the same entities.
// Run: go test ./handlers/ -run '^$' -bench Capture -benchtime 30x
func BenchmarkCapture(b *testing.B) {
	srv := newTestServer(b, func(d *Deps) { d.RateLimit = 0 })
	url := srv.URL + "/api/mcp/v1"
	token := newToken(b, dgraphtest.TenantName(b), knowmind.ScopeWrite)
	i := 0
	for b.Loop() {
		i++
		note := strings.NewReplacer("50.000", fmt.Sprintf("%d.000", 50+i), "15. Mai", fmt.Sprintf("%d. Mai", 1+i%28),
			"1. April", fmt.Sprintf("%d. April", 1+i%28)).Replace(meetingNote)
		var res knowmind.CaptureResult
		structured(b, callTool(b, url, token, "knowmind_capture", map[string]any{"text": note}), &res)
		if len(res.Stored) == 0 {
			b.Fatalf("nothing stored: %+v", res)
		}
	}
}
