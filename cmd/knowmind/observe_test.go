package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/oauth/oauthtest"
)

// lockedBuffer collects a subprocess's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func postMCP(t *testing.T, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// `knowmind serve` as deployed with an identity provider and a metrics
// scraper: --oauth-issuer (a local test issuer), --metrics-addr, JSON logs.
// A token of the issuer calls tools; the metrics listener shows the calls'
// counters and histograms and Dgraph's round trips; /metrics is not on the
// MCP address; every log line is JSON and a call's lines carry its request id.
func TestServeOAuthMetricsJSONLogs(t *testing.T) {
	env := sharedDgraph(t)
	const aud = "knowmind-serve-test"
	is := oauthtest.New(t, aud, map[string]any{"tenant": dgraphtest.TenantName(t)})
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--metrics-addr", metricsAddr,
		"--oauth-issuer", is.URL, "--oauth-audience", aud, "--log-format", "json", "--log-level", "debug")
	cmd.Env = childEnv(t, env)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	base := "http://" + addr
	deadline := time.Now().Add(time.Minute)
	for {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready within a minute\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	if status, body := httpGet(t, base+"/.well-known/oauth-protected-resource"); status != http.StatusOK || !strings.Contains(body, `"authorization_servers":["`+is.URL+`"]`) {
		t.Fatalf("resource metadata: HTTP %d %s", status, body)
	}
	token := is.Sign(map[string]any{"scope": "read"})
	call := func(name, args string) (int, http.Header, string) {
		return postMCP(t, base+"/mcp", token, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args))
	}
	if status, _, body := call("knowmind_stats", "{}"); status != http.StatusOK || !strings.Contains(body, `"memories":0`) {
		t.Fatalf("stats with the issuer's token: HTTP %d %s", status, body)
	}
	_, hdr, body := call("knowmind_list_recent", `{"k":0}`)
	badID := hdr.Get("X-Request-Id")
	if !strings.Contains(body, "-32602") || badID == "" {
		t.Fatalf("list_recent k=0: %s (request id %q)", body, badID)
	}

	status, metrics := httpGet(t, "http://"+metricsAddr+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("metrics listener: HTTP %d", status)
	}
	for _, want := range []string{
		`knowmind_tool_calls_total{code="ok",tool="knowmind_stats"} 1`,
		`knowmind_tool_calls_total{code="-32602",tool="knowmind_list_recent"} 1`,
		`knowmind_tool_call_duration_seconds_count{tool="knowmind_stats"} 1`,
		`knowmind_dgraph_rpc_duration_seconds_count{method="Query",outcome="ok"}`,
		`knowmind_index_tenants`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if status, _ := httpGet(t, base+"/metrics"); status != http.StatusNotFound {
		t.Errorf("/metrics on the MCP address without --metrics-token: HTTP %d, want 404", status)
	}

	// Give the last lines a moment to be written, then read them.
	time.Sleep(200 * time.Millisecond)
	var ofCall []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if line["request_id"] == badID {
			ofCall = append(ofCall, line)
		}
	}
	msgs := map[string]bool{}
	for _, l := range ofCall {
		msgs[fmt.Sprint(l["msg"])] = true
	}
	if !msgs["tool call"] || !msgs["mcp request"] {
		t.Errorf("lines carrying the failed call's request id: %v, want its tool call line and its request line", msgs)
	}
}
