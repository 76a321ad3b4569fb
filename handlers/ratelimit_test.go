package handlers

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestFleetOfOneToken: 20 sessions of one token make 1,000 tool calls as fast as they are
// answered, at the default rate limits: none is refused (a fleet is slowed to the rate, not
// answered 429), and the slowed ones are counted in knowmind_rate_limited_total, not as auth
// failures. It prints the outcome.
func TestFleetOfOneToken(t *testing.T) {
	const sessions, calls = 20, 1000
	metrics := NewMetrics(nil)
	srv := newTestServer(t, func(d *Deps) {
		d.RateLimit, d.RateBurst = DefaultRateLimit, DefaultRateBurst
		d.TenantRateLimit, d.TenantRateBurst = DefaultTenantRateLimit, DefaultTenantRateBurst
		d.TenantInFlight, d.RateWait = 0, 0
		d.Metrics = metrics
	})
	url := srv.URL + "/api/mcp/v1"
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeRead)

	var refused, failed, done atomic.Int64
	var firstFailure sync.Once
	var failure string
	start := time.Now()
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := openSession(t, url, token)
			for i := range calls / sessions {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"knowmind_stats","arguments":{}}}`, s*1000+i)
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-06-18")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusTooManyRequests:
					refused.Add(1)
				case resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"error"`):
					failed.Add(1)
					firstFailure.Do(func() { failure = fmt.Sprintf("HTTP %d %s", resp.StatusCode, b) })
				default:
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	delayed := counterValue(metrics.rateLimits.WithLabelValues("token_delayed")) +
		counterValue(metrics.rateLimits.WithLabelValues("tenant_delayed"))
	t.Logf("%d sessions of one token, %d calls: %d answered, %d × 429, %d failed, %.0f slowed to the rate, %s (%.0f calls/s)",
		sessions, calls, done.Load(), refused.Load(), failed.Load(), delayed, elapsed.Round(time.Millisecond), float64(calls)/elapsed.Seconds())
	if refused.Load() != 0 || failed.Load() != 0 || done.Load() != calls {
		t.Errorf("want all %d calls answered, none refused: %s", calls, failure)
	}
	if n := counterValue(metrics.authFailures.WithLabelValues("rate_limited")); n != 0 {
		t.Errorf("%v rate-limited requests counted as auth failures", n)
	}
}
