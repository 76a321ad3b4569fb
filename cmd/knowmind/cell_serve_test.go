package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// A running serve follows the cell directory: while a move's read-only mark is set (by another
// process, in the file) its writes to the tenant are refused with 503 and its reads go on; it
// confirms the mark, so `knowmind cell move` runs beside it; after the move it serves the
// tenant from the target cell — what was stored before is found there, what is stored after
// lands there and not in home.
func TestCellServeRoutesByDirectory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	home, other, envVars, dataDir := twoCells(t, ctx)
	dirFile := filepath.Join(dataDir, cells.DirectoryFileName)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = envVars
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("knowmind %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	passwordFile, secretFile := cellSecretFiles(t, other)
	run("cell", "add", "b", "--alphas", strings.Join(other.Alphas, ","), "--alphas-http", strings.Join(other.HTTP, ","),
		"--guardian-password-file", passwordFile, "--cell-secret-file", secretFile)

	tenant := dgraphtest.TenantName(t)
	token, _, err := home.Client.CreateToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "cells", nil)
	if err != nil {
		t.Fatal(err)
	}

	addr := freeAddr(t)
	serve := exec.Command(os.Args[0], "serve", "--addr", addr, "--rate-limit", "10000", "--rate-burst", "10000")
	serve.Env = envVars
	var stderr lockedBuffer
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = serve.Process.Kill()
		}
	}()
	waitReady(t, addr, true, time.Minute, exited)
	callAs := func(token, name, args string) (int, string) {
		t.Helper()
		status, _, body := postMCP(t, "http://"+addr+"/api/mcp/v1", token,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args))
		return status, body
	}
	call := func(name, args string) string {
		t.Helper()
		status, body := callAs(token, name, args)
		if status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", name, status, body)
		}
		return body
	}
	store := func(title string) string {
		return call("knowmind_store_memory", fmt.Sprintf(`{"title":%q,"content":"Der %s wurde im Werk Ost gewechselt."}`, title, title))
	}
	recall := func(query string) string {
		return call("knowmind_recall", fmt.Sprintf(`{"query":%q,"k":5}`, query))
	}
	if body := store("Zahnriemen"); !strings.Contains(body, "chunks_written") {
		t.Fatalf("store in home: %s", body)
	}

	// A mover's mark in the file: writes refused (503, retryable), reads go on, and the serve
	// confirms the mark in the serves' folder.
	mark := func(p *cells.Placement) {
		t.Helper()
		if err := cells.UpdateDirectory(dirFile, func(d *cells.Directory) error {
			if p == nil {
				delete(d.Tenants, tenant)
			} else {
				d.Tenants[tenant] = *p
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	mark(&cells.Placement{Cell: "home", ReadOnly: true, Move: "test-move"})
	if body := store("Nockenwelle"); !strings.Contains(body, `"code":503`) || !strings.Contains(body, "being moved") {
		t.Fatalf("a write during the read-only mark: %s", body)
	}
	if body := recall("Zahnriemen gewechselt"); !strings.Contains(body, "Zahnriemen") {
		t.Fatalf("a read during the read-only mark: %s", body)
	}
	confirmed := false
	for deadline := time.Now().Add(10 * time.Second); !confirmed && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		acks, _ := filepath.Glob(filepath.Join(dirFile+".serves", "*.acks"))
		for _, a := range acks {
			if data, _ := os.ReadFile(a); strings.Contains(string(data), `"test-move"`) {
				confirmed = true
			}
		}
	}
	if !confirmed {
		t.Fatalf("the serve did not confirm the mark\n%s", stderr.String())
	}
	mark(nil)

	// A real move beside the running serve, then the serve routes the tenant to cell b.
	out := run("cell", "move", "--tenant", tenant, "--to", "b")
	if !strings.Contains(out, "moved from home to b: 1 records") {
		t.Fatalf("cell move beside a serve:\n%s", out)
	}
	t.Logf("cell move beside a serve: %s", out)
	if body := recall("Zahnriemen gewechselt"); !strings.Contains(body, "Zahnriemen") {
		t.Fatalf("recall after the move: %s", body)
	}
	if body := store("Kurbelgehaeuse"); !strings.Contains(body, "chunks_written") {
		t.Fatalf("store after the move: %s", body)
	}
	for cell, want := range map[*dgraphtest.Env]bool{other: true, home: false} {
		ten, err := cell.Client.Tenant(ctx, tenant, false)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Kurbelgehaeuse gewechselt", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		found := len(res.Hits) > 0 && strings.Contains(res.Hits[0].Title, "Kurbelgehaeuse")
		if found != want {
			t.Errorf("the store after the move found in cell %v: %v, want %v", cell == other, found, want)
		}
	}

	// Tokens follow the tenant: one created after the move is written in cell b and works
	// through the serve; a revocation there (of it, or of the copied token) is refused at once,
	// although home still holds an unrevoked copy of the old one.
	stdout := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = envVars
		var errOut strings.Builder
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("knowmind %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return string(out)
	}
	fresh := strings.TrimSpace(stdout("token", "create", "--tenant", tenant, "--scopes", "read,write", "--name", "after-move"))
	if toks, err := other.Client.ListTokens(ctx, tenant); err != nil || len(toks) != 2 {
		t.Fatalf("cell b holds %d tokens of the tenant (%v), want the copied one and the new one", len(toks), err)
	}
	if status, body := callAs(fresh, "knowmind_recall", `{"query":"Kurbelgehaeuse gewechselt","k":3}`); status != http.StatusOK || !strings.Contains(body, "Kurbelgehaeuse") {
		t.Fatalf("a token created after the move: HTTP %d %s", status, body)
	}

	// stdio serves the moved tenant from cell b like serve, with the new token.
	cs := startStdioEnv(t, envVars, "--token", fresh)
	var recalled knowmind.RecallResult
	if err := callJSON(t, cs, "knowmind_recall", map[string]any{"query": "Zahnriemen gewechselt", "k": 3}, &recalled); err != nil ||
		len(recalled.Hits) == 0 || !strings.Contains(recalled.Hits[0].Title, "Zahnriemen") {
		t.Fatalf("stdio recall of the moved tenant: %+v %v", recalled.Hits, err)
	}
	var stored struct {
		MemoryID string `json:"memory_id"`
	}
	if err := callJSON(t, cs, "knowmind_store_memory", map[string]any{"title": "Oelwanne", "content": "Die Oelwanne wurde im Werk Ost abgedichtet."}, &stored); err != nil || stored.MemoryID == "" {
		t.Fatalf("stdio store: %+v %v", stored, err)
	}
	there, err := other.Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := there.Recall(ctx, knowmind.RecallQuery{Query: "Oelwanne abgedichtet", K: 3}); err != nil || len(res.Hits) == 0 || res.Hits[0].MemoryID != stored.MemoryID {
		t.Fatalf("the stdio store is not in cell b: %+v %v", res.Hits, err)
	}

	ids := map[string]string{}
	for _, line := range strings.Split(stdout("token", "list", "--tenant", tenant), "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[0], "b:0x") {
			ids[f[2]] = f[0]
		}
	}
	if ids["cells"] == "" || ids["after-move"] == "" {
		t.Fatalf("token list of the moved tenant: %v", ids)
	}
	stdout("token", "revoke", ids["cells"])
	if status, body := callAs(token, "knowmind_recall", `{"query":"Zahnriemen","k":3}`); status != http.StatusUnauthorized {
		t.Fatalf("the copied token revoked in cell b: HTTP %d %s", status, body)
	}
	if _, err := home.Client.VerifyToken(ctx, token); err != nil {
		t.Fatalf("home's copy of the old token should be unrevoked (the test's premise): %v", err)
	}
	stdout("token", "revoke", ids["after-move"])
	if status, body := callAs(fresh, "knowmind_recall", `{"query":"Zahnriemen","k":3}`); status != http.StatusUnauthorized {
		t.Fatalf("the new token revoked in cell b: HTTP %d %s", status, body)
	}
	var werr *jsonrpc.Error
	if err := callJSON(t, cs, "knowmind_stats", map[string]any{}, &struct{}{}); !errors.As(err, &werr) || werr.Code != 401 {
		t.Fatalf("stdio after the revocation in cell b: %v, want JSON-RPC error 401", err)
	}
}
