package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/oauth/oauthtest"
)

// `knowmind serve` with its defaults keeps each tenant's index snapshot in data-dir/index: a
// serve stopped and started again on the same data dir answers the tenant's first recall from it
// (knowmind_index_snapshot_loads_total{result="loaded"}), finding what the first one stored.
func TestServeRestartReadsIndexSnapshot(t *testing.T) {
	env := sharedDgraph(t)
	const aud = "knowmind-snapshot-test"
	is := oauthtest.New(t, aud, map[string]any{"tenant": dgraphtest.TenantName(t)})
	dataDir := t.TempDir()
	start := func() (base, metrics string, stop func()) {
		addr, metricsAddr := freeAddr(t), freeAddr(t)
		cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--metrics-addr", metricsAddr, "--data-dir", dataDir,
			"--oauth-issuer", is.URL, "--oauth-audience", aud)
		cmd.Env = childEnv(t, env)
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop = func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("serve did not stop on SIGTERM\n%s", stderr.String())
			}
		}
		base = "http://" + addr
		deadline := time.Now().Add(time.Minute)
		for {
			if resp, err := http.Get(base + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return base, "http://" + metricsAddr + "/metrics", stop
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
	}
	token := is.Sign(map[string]any{"scope": "write"})
	call := func(base, name, args string) string {
		t.Helper()
		status, _, body := postMCP(t, base+"/mcp", token, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args))
		if status != http.StatusOK || strings.Contains(body, `"error"`) {
			t.Fatalf("%s: HTTP %d %s", name, status, body)
		}
		return body
	}

	base, _, stop := start()
	for i := range 5 {
		call(base, "knowmind_store_memory", fmt.Sprintf(`{"content":"Das Ersatzteillager %d liegt hinter der Montagehalle."}`, i))
	}
	call(base, "knowmind_store_memory", `{"content":"Die Kalibrierung der Drehmomentschlüssel erfolgt quartalsweise."}`)
	call(base, "knowmind_recall", `{"query":"Drehmomentschlüssel Kalibrierung"}`)
	stop()

	base, metrics, stop := start()
	defer stop()
	if body := call(base, "knowmind_recall", `{"query":"Drehmomentschlüssel Kalibrierung"}`); !strings.Contains(body, "quartalsweise") {
		t.Fatalf("recall after the restart: %s", body)
	}
	status, m := httpGet(t, metrics)
	if status != http.StatusOK || !strings.Contains(m, `knowmind_index_snapshot_loads_total{result="loaded"} 1`) {
		var lines []string
		for _, l := range strings.Split(m, "\n") {
			if strings.Contains(l, "snapshot") {
				lines = append(lines, l)
			}
		}
		t.Fatalf("/metrics after the restart (HTTP %d): %v", status, lines)
	}
}
