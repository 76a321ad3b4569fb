package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Issue 34 item 6: with the alpha paused (SIGSTOP) every call is answered
// 503 within its deadline, knowmind_health within 2 s, and after SIGCONT the
// same calls succeed again. knowmind_dgraph_up follows: 1, 0 while paused, 1. The test runs its own Dgraph, since pausing the
// package's shared one would stall every other test.
func TestPausedAlphaAnswers503AndRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and pauses its own Dgraph")
	}
	ctx := context.Background()
	env, err := dgraphtest.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	const rpcTimeout = 2 * time.Second
	client, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, User: "groot",
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder, RPCTimeout: rpcTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	d := testDeps(t)
	d.Graph = client
	d.Ready = func(ctx context.Context) (bool, map[string]string) {
		for _, err := range client.Ping(ctx) {
			if err != nil {
				return false, nil
			}
		}
		return true, nil
	}
	const operator = "metrics-secret"
	d.Metrics, d.MetricsToken = NewMetrics(nil), operator
	d.Metrics.WatchDgraph(client.Ping)
	srv := httptest.NewServer(NewRouter(d))
	defer srv.Close()
	url := srv.URL + mcpPath
	dgraphUp := func(when, want string) {
		t.Helper()
		r := do(t, http.MethodGet, srv.URL+"/metrics", operator, "")
		line := fmt.Sprintf("knowmind_dgraph_up{alpha=%q} %s", env.Alphas[0], want)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), line+"\n") {
			t.Errorf("/metrics %s: HTTP %d, want the line %q in\n%s", when, r.Status, line, r.Body)
		}
	}
	dgraphUp("before the pause", "1")

	const tenant = "paused"
	kmt, _, err := client.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A token never used before the pause: its lookup cannot finish.
	kmtNew, _, err := client.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A JWT needs no lookup in Dgraph: its calls reach the tools' own queries.
	jwtToken := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scope": "read write", "aud": testJWTAudience,
		"exp": time.Now().Add(time.Hour).Unix()})
	store := callTool(t, url, jwtToken, "knowmind_store_memory", map[string]any{"title": "Pause", "content": "Der Alpha wird angehalten."})
	structured(t, store, &struct{}{})
	// The store confirmed kmt a moment ago: while it cannot answer, kmt
	// still authenticates, and its calls get the tools' own 503.
	structured(t, callTool(t, url, kmt, "knowmind_list_recent", map[string]any{}), &struct{}{})

	pid := env.Cluster.Pid("alpha1")
	if pid == 0 {
		t.Fatal("no alpha pid")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer resume()

	timed := func(name string, within time.Duration, call func() reply) reply {
		t.Helper()
		start := time.Now()
		r := call()
		if took := time.Since(start); took > within {
			t.Errorf("%s with the alpha paused: answered after %s, want within %s", name, took.Round(time.Millisecond), within)
		}
		return r
	}
	unavailable := func(name string, r reply) {
		t.Helper()
		if r.Status == http.StatusServiceUnavailable {
			return
		}
		if r.Error == nil || r.Error.Code != codeUnavailable {
			t.Errorf("%s with the alpha paused: HTTP %d, error %+v, want 503", name, r.Status, r.Error)
		}
	}
	r := timed("health (JWT)", 2*time.Second, func() reply { return callTool(t, url, jwtToken, "knowmind_health", map[string]any{}) })
	unavailable("health (JWT)", r)
	r = timed("health (kmt_ token seen before)", 2*time.Second, func() reply { return callTool(t, url, kmt, "knowmind_health", map[string]any{}) })
	unavailable("health (kmt_ token seen before)", r)
	if r.Status != http.StatusOK {
		t.Errorf("health (kmt_ token seen before): HTTP %d, want 200 with the JSON-RPC error 503 (the token stands while the store is slow)", r.Status)
	}
	r = timed("health (kmt_ token not seen before)", 2*time.Second, func() reply { return callTool(t, url, kmtNew, "knowmind_health", map[string]any{}) })
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("health (kmt_ token not seen before): HTTP %d, want 503", r.Status)
	}
	r = timed("recall (JWT)", rpcTimeout+2*time.Second, func() reply {
		return callTool(t, url, jwtToken, "knowmind_recall", map[string]any{"query": "Alpha angehalten"})
	})
	unavailable("recall (JWT)", r)
	r = timed("list_recent (kmt_ token)", time.Second+rpcTimeout+2*time.Second, func() reply {
		return callTool(t, url, kmt, "knowmind_list_recent", map[string]any{})
	})
	unavailable("list_recent (kmt_ token)", r)
	r = timed("readyz", rpcTimeout+time.Second, func() reply { return do(t, http.MethodGet, srv.URL+"/readyz", "", "") })
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the alpha paused: HTTP %d, want 503", r.Status)
	}
	dgraphUp("with the alpha paused", "0")

	resume()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = callTool(t, url, kmt, "knowmind_health", map[string]any{})
		if r.Status == http.StatusOK && r.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health after SIGCONT: HTTP %d, error %+v", r.Status, r.Error)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var recalled struct {
		Hits []struct {
			Title string `json:"title"`
		} `json:"hits"`
	}
	structured(t, callTool(t, url, jwtToken, "knowmind_recall", map[string]any{"query": "Alpha angehalten"}), &recalled)
	if len(recalled.Hits) == 0 || recalled.Hits[0].Title != "Pause" {
		t.Errorf("recall after SIGCONT: %+v", recalled)
	}
	structured(t, callTool(t, url, kmt, "knowmind_list_recent", map[string]any{}), &struct{}{})
	dgraphUp("after SIGCONT", "1")
}

// waitStopped waits until every thread of pid is stopped: a thread busy in
// the kernel (a disk write) stops only when it leaves it, and until then the
// alpha may still answer.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		running := 0
		for _, task := range tasks {
			stat, err := os.ReadFile(task)
			if err != nil {
				continue
			}
			// The state follows the command name in parentheses.
			if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
				running++
			}
		}
		if len(tasks) > 0 && running == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha %d: %d of %d threads not stopped 10 s after SIGSTOP", pid, running, len(tasks))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
