package handlers

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// Metrics are the service's Prometheus metrics, in a registry of their own.
// Every label has a bounded set of values: tool names are the registered
// tools' (anything else is "unknown"), codes the spec's, Dgraph methods the
// gRPC API's, and tenants are the largest maxTenantSeries (the rest are
// summed as "_other").
type Metrics struct {
	registry      *prometheus.Registry
	toolCalls     *prometheus.CounterVec
	toolSeconds   *prometheus.HistogramVec
	ingests       *prometheus.CounterVec
	ingestChunks  *prometheus.CounterVec
	authFailures  *prometheus.CounterVec
	rateLimits    *prometheus.CounterVec
	dgraphSeconds *prometheus.HistogramVec
	snapshotLoads *prometheus.CounterVec
	dgraphUp      *dgraphUpCollector
}

// maxTenantSeries bounds the per-tenant index gauges.
const maxTenantSeries = 50

// NewMetrics registers the metrics. indexSizes (may be nil) is read at each
// scrape for the per-tenant index gauges.
func NewMetrics(indexSizes func() []graph.IndexSize) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_tool_calls_total",
			Help: "MCP tool calls by tool and outcome: code is ok, tool_error (an isError result) or the JSON-RPC error code.",
		}, []string{"tool", "code"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "knowmind_tool_call_duration_seconds",
			Help:    "MCP tool call latency, from the call's arrival to its answer.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
		ingests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_ingests_total",
			Help: "Successful ingests by tool and result (stored, or unchanged when the same content was there; failed for a refused item of knowmind_store_memories).",
		}, []string{"tool", "result"}),
		ingestChunks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_ingest_chunks_total",
			Help: "Chunks written by ingests.",
		}, []string{"tool"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_auth_failures_total",
			Help: "Requests refused before MCP: unauthorized (401), unavailable (503, token store or issuer down).",
		}, []string{"reason"}),
		rateLimits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_rate_limited_total",
			Help: "Requests over a rate limit: refused with 429 (limit token, tenant or failed_auth) or slowed to the rate (token_delayed, tenant_delayed).",
		}, []string{"limit"}),
		snapshotLoads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "knowmind_index_snapshot_loads_total",
			Help: "Tenants' first index loads by how their snapshot served: loaded (read and caught up), missing, stale, corrupt or unreconciled (the last three rebuilt from Dgraph).",
		}, []string{"result"}),
		dgraphSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "knowmind_dgraph_rpc_duration_seconds",
			Help:    "Round trips to Dgraph by gRPC method (Query covers queries and mutations) and outcome.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"method", "outcome"}),
	}
	m.registry.MustRegister(m.toolCalls, m.toolSeconds, m.ingests, m.ingestChunks, m.authFailures, m.rateLimits, m.dgraphSeconds, m.snapshotLoads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "knowmind_build_info",
		Help: "Always 1; the labels say which knowmind and Go build serves.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(knowmind.Version, runtime.Version()).Set(1)
	m.registry.MustRegister(buildInfo)
	if indexSizes != nil {
		m.registry.MustRegister(indexCollector{sizes: indexSizes})
	}
	m.dgraphUp = &dgraphUpCollector{}
	m.registry.MustRegister(m.dgraphUp)
	return m
}

// WatchDgraph makes each scrape ask every alpha whether it answers (ping is
// graph.Client.Ping) and report it as knowmind_dgraph_up. Until it is
// called the gauge is absent, not 0: nothing was asked.
func (m *Metrics) WatchDgraph(ping func(context.Context) map[string]error) {
	if m != nil {
		m.dgraphUp.ping.Store(&ping)
	}
}

// Registry is where the metrics live (e.g. for a test's Gather).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// ProtectedHandler serves the metrics only to requests bearing token, for
// serving them on the main address beside the MCP endpoint.
func (m *Metrics) ProtectedHandler(token string) http.Handler {
	h := m.Handler()
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="knowmind-metrics"`)
			http.Error(w, "metrics need the metrics token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ObserveDgraph records one Dgraph round trip (graph.Config.ObserveRPC).
func (m *Metrics) ObserveDgraph(method string, d time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.dgraphSeconds.WithLabelValues(method, outcome).Observe(d.Seconds())
}

// ObserveSnapshotLoad counts how a tenant's first index load used its snapshot
// (graph.Config.ObserveSnapshotLoad).
func (m *Metrics) ObserveSnapshotLoad(result string) {
	if m != nil {
		m.snapshotLoads.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) rateLimited(limit string) {
	if m != nil {
		m.rateLimits.WithLabelValues(limit).Inc()
	}
}

func (m *Metrics) authFailed(reason string) {
	if m != nil {
		m.authFailures.WithLabelValues(reason).Inc()
	}
}

// observeCalls is the outermost MCP receiving middleware: it gives every
// tools/call a request id in its context (the HTTP request's, or a new one
// on stdio) so each log line of the call carries it, logs the call, and
// times and counts its outcome, whatever answered it (the scope and
// argument checks of guardCalls, the SDK, or the tool).
func (s *service) observeCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		var reqID string
		if extra := call.GetExtra(); extra != nil && extra.Header != nil {
			reqID = extra.Header.Get(requestIDHeader)
		}
		if reqID == "" {
			reqID = newRequestID()
		}
		ctx = withRequestID(ctx, reqID)
		tool := call.Params.Name
		if s.tools[tool] == nil {
			tool = "unknown"
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		elapsed := time.Since(start)
		code := "ok"
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			code = strconv.FormatInt(werr.Code, 10)
		case err != nil:
			code = "internal"
		}
		r, isResult := res.(*mcp.CallToolResult)
		if isResult && err == nil && r.IsError {
			code = "tool_error"
		}
		// The access log: one line per call at info, with the token's id (never its secret).
		p, _ := s.principal(call.GetExtra())
		s.log.InfoContext(ctx, "tool call", "tool", tool, "code", code, "ms", elapsed.Milliseconds(),
			"token", p.TokenID, "tenant", p.Tenant)
		if s.metrics != nil {
			s.metrics.toolSeconds.WithLabelValues(tool).Observe(elapsed.Seconds())
			s.metrics.toolCalls.WithLabelValues(tool, code).Inc()
			if code == "ok" && isResult {
				s.metrics.countIngest(tool, r.StructuredContent)
			}
		}
		return res, err
	}
}

// ingestTools write chunks; their results say how many and whether the
// content was already there.
var ingestTools = map[string]bool{storeMemoryTool.Name: true, uploadDocumentTool.Name: true, updateFactTool.Name: true}

func (m *Metrics) countIngest(tool string, structured any) {
	if tool == storeMemoriesTool.Name && structured != nil {
		m.countBatchIngest(tool, structured)
		return
	}
	if !ingestTools[tool] || structured == nil {
		return
	}
	raw, err := json.Marshal(structured)
	if err != nil {
		return
	}
	var r struct {
		ChunksWritten int  `json:"chunks_written"`
		IndexedChunks int  `json:"indexed_chunks"`
		Unchanged     bool `json:"unchanged"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return
	}
	result := "stored"
	if r.Unchanged {
		result = "unchanged"
	}
	m.ingests.WithLabelValues(tool, result).Inc()
	m.ingestChunks.WithLabelValues(tool).Add(float64(r.ChunksWritten + r.IndexedChunks))
}

// countBatchIngest counts each item of knowmind_store_memories as one ingest (stored,
// unchanged or failed).
func (m *Metrics) countBatchIngest(tool string, structured any) {
	raw, err := json.Marshal(structured)
	if err != nil {
		return
	}
	var r StoreMemoriesResult
	if json.Unmarshal(raw, &r) != nil {
		return
	}
	chunks := 0
	for _, it := range r.Results {
		result := map[string]string{knowmind.ItemIndexed: "stored", knowmind.ItemUnchanged: "unchanged"}[it.Status]
		if result == "" {
			result = "failed"
		}
		m.ingests.WithLabelValues(tool, result).Inc()
		chunks += it.ChunksWritten
	}
	m.ingestChunks.WithLabelValues(tool).Add(float64(chunks))
}

// dgraphUpCollector asks the alphas at scrape time, so the gauge is as
// fresh as the scrape; a paused or dead alpha costs the scrape at most
// Ping's own timeout. The label values are the configured alphas.
type dgraphUpCollector struct {
	ping atomic.Pointer[func(context.Context) map[string]error]
}

var dgraphUpDesc = prometheus.NewDesc("knowmind_dgraph_up",
	"1 if the Dgraph alpha answered a version check at this scrape, else 0.", []string{"alpha"}, nil)

func (c *dgraphUpCollector) Describe(ch chan<- *prometheus.Desc) { ch <- dgraphUpDesc }

func (c *dgraphUpCollector) Collect(ch chan<- prometheus.Metric) {
	ping := c.ping.Load()
	if ping == nil {
		return
	}
	for alpha, err := range (*ping)(context.Background()) {
		up := 1.0
		if err != nil {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(dgraphUpDesc, prometheus.GaugeValue, up, alpha)
	}
}

// indexCollector reports the in-process recall indexes per tenant at scrape
// time: the maxTenantSeries tenants with the most memories, the rest as "_other".
type indexCollector struct{ sizes func() []graph.IndexSize }

var (
	indexMemoriesDesc = prometheus.NewDesc("knowmind_index_memories",
		"Memories held in a tenant's in-process BM25 statistics.", []string{"tenant"}, nil)
	indexVectorsDesc = prometheus.NewDesc("knowmind_index_vectors",
		"Chunk vectors held in a tenant's in-process exact vector index.", []string{"tenant"}, nil)
	indexBytesDesc = prometheus.NewDesc("knowmind_index_vector_bytes",
		"Memory of a tenant's in-process chunk vectors.", []string{"tenant"}, nil)
	indexTenantsDesc = prometheus.NewDesc("knowmind_index_tenants",
		"Tenants with in-process indexes open.", nil, nil)
)

func (c indexCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- indexMemoriesDesc
	ch <- indexVectorsDesc
	ch <- indexBytesDesc
	ch <- indexTenantsDesc
}

func (c indexCollector) Collect(ch chan<- prometheus.Metric) {
	sizes := c.sizes()
	ch <- prometheus.MustNewConstMetric(indexTenantsDesc, prometheus.GaugeValue, float64(len(sizes)))
	sort.Slice(sizes, func(i, j int) bool {
		if sizes[i].Memories != sizes[j].Memories {
			return sizes[i].Memories > sizes[j].Memories
		}
		return strings.Compare(sizes[i].Tenant, sizes[j].Tenant) < 0
	})
	if len(sizes) > maxTenantSeries {
		other := graph.IndexSize{Tenant: "_other"}
		for _, s := range sizes[maxTenantSeries:] {
			other.Memories += s.Memories
			other.Vectors += s.Vectors
			other.VectorBytes += s.VectorBytes
		}
		sizes = append(sizes[:maxTenantSeries], other)
	}
	for _, s := range sizes {
		ch <- prometheus.MustNewConstMetric(indexMemoriesDesc, prometheus.GaugeValue, float64(s.Memories), s.Tenant)
		ch <- prometheus.MustNewConstMetric(indexVectorsDesc, prometheus.GaugeValue, float64(s.Vectors), s.Tenant)
		ch <- prometheus.MustNewConstMetric(indexBytesDesc, prometheus.GaugeValue, float64(s.VectorBytes), s.Tenant)
	}
}
