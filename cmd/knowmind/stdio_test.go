package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// startStdio runs `knowmind stdio args...` as a subprocess and connects the
// MCP Go SDK's client to it over its stdin and stdout.
func startStdio(t *testing.T, env *dgraphtest.Env, args ...string) *mcp.ClientSession {
	t.Helper()
	return startStdioEnv(t, childEnv(t, env), args...)
}

// startStdioEnv is startStdio with the child's environment given.
func startStdioEnv(t *testing.T, envVars []string, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(os.Args[0], append([]string{"stdio"}, args...)...)
	cmd.Env = envVars
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to knowmind stdio: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		t.Fatalf("%s: isError %+v", name, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return json.Unmarshal(b, out)
}

// A desktop client's view: `knowmind stdio --token` lists the token's
// tools, stores and recalls in the token's tenant (the same store the HTTP
// service uses), refuses what the scopes do not allow, and stops serving
// the moment the token is revoked.
func TestStdioWithToken(t *testing.T) {
	env := sharedDgraph(t)
	ctx := context.Background()
	tenant := dgraphtest.TenantName(t)
	secret, tok, err := env.Client.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "desktop", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := startStdio(t, env, "--token", secret)
	names := toolNames(t, cs)
	if !slices.Contains(names, "knowmind_store_memory") || !slices.Contains(names, "knowmind_recall") {
		t.Fatalf("tools %v", names)
	}
	var stored struct {
		MemoryID string `json:"memory_id"`
		Status   string `json:"status"`
	}
	if err := callJSON(t, cs, "knowmind_store_memory", map[string]any{"title": "stdio", "content": "Desktop clients speak stdio to knowmind."}, &stored); err != nil || stored.MemoryID == "" {
		t.Fatalf("store: %+v %v", stored, err)
	}
	var recall knowmind.RecallResult
	if err := callJSON(t, cs, "knowmind_recall", map[string]any{"query": "desktop stdio"}, &recall); err != nil {
		t.Fatal(err)
	}
	if len(recall.Hits) == 0 || recall.Hits[0].MemoryID != stored.MemoryID {
		t.Fatalf("recall after store: %+v", recall)
	}
	// The same store: the memory is in the token's tenant, seen in-process.
	ten, err := env.Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ten.Stats(ctx); err != nil || st.Memories != 1 {
		t.Fatalf("tenant stats through the store: %+v %v", st, err)
	}

	if err := env.Client.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	var werr *jsonrpc.Error
	if err := callJSON(t, cs, "knowmind_stats", map[string]any{}, &struct{}{}); !errors.As(err, &werr) || werr.Code != 401 {
		t.Fatalf("after revocation: %v, want JSON-RPC error 401", err)
	}
}

// `knowmind stdio --tenant T --scopes read`: an operator's local access; the
// tenant is made on first use and write tools are neither listed nor run.
func TestStdioWithTenant(t *testing.T) {
	env := sharedDgraph(t)
	cs := startStdio(t, env, "--tenant", dgraphtest.TenantName(t), "--scopes", "read")
	names := toolNames(t, cs)
	if slices.Contains(names, "knowmind_store_memory") || !slices.Contains(names, "knowmind_stats") {
		t.Fatalf("tools of a read-only caller: %v", names)
	}
	var st knowmind.Stats
	if err := callJSON(t, cs, "knowmind_stats", map[string]any{}, &st); err != nil || st != (knowmind.Stats{}) {
		t.Fatalf("stats of a fresh tenant: %+v %v", st, err)
	}
	var werr *jsonrpc.Error
	if err := callJSON(t, cs, "knowmind_store_memory", map[string]any{"content": "x"}, &struct{}{}); !errors.As(err, &werr) || werr.Code != -32002 {
		t.Fatalf("write with read scope: %v, want -32002", err)
	}
}

// Wrong invocations fail before touching the store.
func TestStdioUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--token", "kmt_x", "--tenant", "a"}, {"--tenant", "../x"}, {"--tenant", "a", "--scopes", "root"}} {
		if err := runStdio(context.Background(), args); err == nil {
			t.Errorf("stdio %v: accepted", args)
		}
	}
}

// Issue 39: a client that writes its calls and closes stdin at once (a
// script, a desktop client quitting) gets an answer to every call: `knowmind
// stdio` finishes the calls in flight and writes their answers before it
// exits, instead of ending at EOF and dropping them.
func TestStdioAnswersCallsInFlightAtEOF(t *testing.T) {
	env := sharedDgraph(t)
	cmd := exec.Command(os.Args[0], "stdio", "--tenant", dgraphtest.TenantName(t))
	cmd.Env = childEnv(t, env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"eof","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	const calls = 6
	for i := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"title":"eof %d","content":"Antwort %d kommt noch, obwohl stdin schon zu ist."}}}`, i+2, i, i))
	}
	if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stdio exited: %v", err)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("stdio did not exit within 2 minutes of EOF")
	}
	answered := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.ID > 1 && strings.Contains(string(msg.Result), "chunks_written") {
			answered[msg.ID] = true
		}
	}
	if len(answered) != calls {
		t.Errorf("%d of %d store_memory calls answered after EOF; stdout:\n%s", len(answered), calls, stdout.String())
	}
}

// Issue 39: a token from KNOWMIND_TOKEN is reported as coming from the
// environment, in the error when it is refused and in the start line, so a
// stale variable in a client's config is not blamed on a --token flag.
func TestStdioNamesWhereTheTokenCameFrom(t *testing.T) {
	env := sharedDgraph(t)
	run := func(extraEnv []string, args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], append([]string{"stdio"}, args...)...)
		cmd.Env = append(childEnv(t, env), append([]string{"KNOWMIND_LOG_LEVEL=info"}, extraEnv...)...)
		cmd.Stdin = strings.NewReader("") // EOF at once: a good token serves nothing and exits
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	const unknown = "kmt_thisTokenWasNeverIssued0000000000000000"
	out, err := run([]string{"KNOWMIND_TOKEN=" + unknown})
	if err == nil || !strings.Contains(out, "the token from KNOWMIND_TOKEN") || strings.Contains(out, "--token") {
		t.Errorf("unknown token in KNOWMIND_TOKEN: err %v, stderr:\n%s", err, out)
	}
	out, err = run(nil, "--token", unknown)
	if err == nil || !strings.Contains(out, "the token from --token") {
		t.Errorf("unknown token in --token: err %v, stderr:\n%s", err, out)
	}
	secret, tok, err := env.Client.CreateToken(context.Background(), dgraphtest.TenantName(t), []knowmind.Scope{knowmind.ScopeRead}, "desktop", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err = run([]string{"KNOWMIND_TOKEN=" + secret})
	if err != nil || !strings.Contains(out, "token_from=KNOWMIND_TOKEN") || !strings.Contains(out, tok.ID) || strings.Contains(out, secret) {
		t.Errorf("good token in KNOWMIND_TOKEN: err %v, stderr:\n%s", err, out)
	}
}
