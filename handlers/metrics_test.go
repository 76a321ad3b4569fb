package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// scrape GETs /metrics with the given bearer token.
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A tool call moves its counter and histogram; errors are counted by code;
// ingests count stored and unchanged; /metrics on the main address needs
// the metrics token; per-tenant index gauges appear after a recall.
func TestMetrics(t *testing.T) {
	env := dgraphtest.Shared(t)
	m := NewMetrics(env.Client.IndexSizes)
	srv := newTestServer(t, func(d *Deps) { d.Metrics, d.MetricsToken = m, "metrics-secret" })
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	token := newToken(t, tenant, knowmind.ScopeRead, knowmind.ScopeWrite)

	calls := func(tool, code string) float64 { return counterValue(m.toolCalls.WithLabelValues(tool, code)) }
	before := calls("knowmind_health", "ok")
	var h HealthResult
	structured(t, callTool(t, url, token, "knowmind_health", map[string]any{}), &h)
	if got := calls("knowmind_health", "ok"); got != before+1 {
		t.Errorf("health ok counter %v → %v", before, got)
	}
	wantRPCError(t, callTool(t, url, token, "knowmind_list_recent", map[string]any{"k": 0}), -32602, "k")
	if got := calls("knowmind_list_recent", "-32602"); got != 1 {
		t.Errorf("list_recent -32602 counter = %v", got)
	}
	structured(t, callTool(t, url, token, "knowmind_store_memory", map[string]any{"title": "m", "content": "metrics are counted"}), &StoreMemoryResult{})
	structured(t, callTool(t, url, token, "knowmind_store_memory", map[string]any{"title": "m", "content": "metrics are counted"}), &StoreMemoryResult{})
	if s, u := counterValue(m.ingests.WithLabelValues("knowmind_store_memory", "stored")), counterValue(m.ingests.WithLabelValues("knowmind_store_memory", "unchanged")); s != 1 || u != 1 {
		t.Errorf("ingests stored %v unchanged %v, want 1 and 1", s, u)
	}
	structured(t, callTool(t, url, token, "knowmind_recall", map[string]any{"query": "metrics"}), &map[string]any{})
	callTool(t, url, "kmt_wrong", "knowmind_health", map[string]any{})

	if status, _ := scrape(t, srv.URL+"/metrics", ""); status != http.StatusUnauthorized {
		t.Errorf("/metrics without token: HTTP %d", status)
	}
	if status, _ := scrape(t, srv.URL+"/metrics", "wrong"); status != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: HTTP %d", status)
	}
	status, body := scrape(t, srv.URL+"/metrics", "metrics-secret")
	if status != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d", status)
	}
	for _, want := range []string{
		`knowmind_tool_calls_total{code="ok",tool="knowmind_health"}`,
		`knowmind_tool_call_duration_seconds_count{tool="knowmind_health"}`,
		`knowmind_tool_call_duration_seconds_bucket{tool="knowmind_recall",le="+Inf"} 1`,
		`knowmind_ingest_chunks_total{tool="knowmind_store_memory"} 1`,
		`knowmind_auth_failures_total{reason="unauthorized"}`,
		`knowmind_index_memories{tenant="` + tenant + `"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Without a token configured /metrics is not on the main address.
	plain := newTestServer(t, func(d *Deps) { d.Metrics = m })
	if status, _ := scrape(t, plain.URL+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("/metrics without --metrics-token: HTTP %d, want 404", status)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var d dto.Metric
	if err := c.Write(&d); err != nil {
		panic(err)
	}
	return d.GetCounter().GetValue()
}

// Per-tenant gauges stay bounded however many tenants are open: the 50
// with the most memories get a series each, the rest one "_other".
func TestIndexGaugesBounded(t *testing.T) {
	var sizes []graph.IndexSize
	for i := range 60 {
		sizes = append(sizes, graph.IndexSize{Tenant: fmt.Sprintf("t%02d", i), Memories: i + 1, Vectors: 2 * (i + 1), VectorBytes: 8})
	}
	m := NewMetrics(func() []graph.IndexSize { return sizes })
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "knowmind_index_memories" {
			continue
		}
		byTenant := map[string]float64{}
		for _, mt := range f.GetMetric() {
			byTenant[mt.GetLabel()[0].GetValue()] = mt.GetGauge().GetValue()
		}
		// t00..t09 hold 1..10 memories: the ten smallest, summed.
		if len(byTenant) != 51 || byTenant["_other"] != 55 || byTenant["t59"] != 60 || byTenant["t05"] != 0 {
			t.Fatalf("%d series, _other %v, t59 %v", len(byTenant), byTenant["_other"], byTenant["t59"])
		}
		return
	}
	t.Fatal("knowmind_index_memories not gathered")
}

// TestAccessLogAtInfo: every tool call writes one info line with the tool, its outcome, the
// duration in ms and the token's id, never the token itself.
func TestAccessLogAtInfo(t *testing.T) {
	var buf syncBuffer
	srv := newTestServer(t, func(d *Deps) {
		d.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	tenant := dgraphtest.TenantName(t)
	secret, tok, err := dgraphtest.Shared(t).Client.CreateToken(context.Background(), tenant, []knowmind.Scope{knowmind.ScopeRead}, "log", nil)
	if err != nil {
		t.Fatal(err)
	}
	structured(t, callTool(t, srv.URL+"/api/mcp/v1", secret, "knowmind_stats", map[string]any{}), new(StatsResult))
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "tool call" {
			continue
		}
		found = true
		if rec["level"] != "INFO" || rec["tool"] != "knowmind_stats" || rec["code"] != "ok" || !strings.HasSuffix(fmt.Sprint(rec["token"]), tok.ID) ||
			rec["tenant"] != tenant || rec["ms"] == nil {
			t.Errorf("access log line %s", line)
		}
	}
	if !found {
		t.Fatalf("no access log line at info:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), secret) {
		t.Error("the log holds the token")
	}
}

// syncBuffer is a bytes.Buffer the server's goroutines may log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadmeListsTheMetrics: the README's metric table names exactly the knowmind_ metrics the
// registry serves (the per-tenant index gauges with their collector).
func TestReadmeListsTheMetrics(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)[strings.Index(string(readme), "| metric | labels |"):]
	section = section[:strings.Index(section, "\n\n")]
	documented := map[string]bool{}
	for _, row := range strings.Split(section, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		for _, name := range regexp.MustCompile("`(knowmind_[a-z_]+)`").FindAllStringSubmatch(cells[1], -1) {
			documented[name[1]] = true
		}
	}
	m := NewMetrics(func() []graph.IndexSize { return nil })
	ch := make(chan *prometheus.Desc, 100)
	go func() { m.Registry().Describe(ch); close(ch) }()
	served := map[string]bool{}
	fqName := regexp.MustCompile(`fqName: "(knowmind_[a-z_]+)"`)
	for d := range ch {
		if n := fqName.FindStringSubmatch(d.String()); n != nil {
			served[n[1]] = true
		}
	}
	for n := range served {
		if !documented[n] {
			t.Errorf("/metrics serves %s, which the README's table does not list", n)
		}
	}
	for n := range documented {
		if !served[n] {
			t.Errorf("the README lists %s, which /metrics does not serve", n)
		}
	}
}
