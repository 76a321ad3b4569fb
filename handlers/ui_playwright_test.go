package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestUIPlaywright runs the explorer's playwright-core test (ui/e2e/explorer.js)
// against a test service on the shared Dgraph, seeded like TestUIBrowser:
// wrong token, sign in, search, open a memory, its neighbours and the
// superseded version, the slider to the old version, sign out, a read-only
// token without write controls and with the client's entities shown. The
// script saves a screenshot per state in $KNOWMIND_UI_ARTIFACTS/playwright.
// It needs node, `npm ci` in ui/e2e and a Chromium; without one it skips,
// saying which.
func TestUIPlaywright(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the playwright-core browser test needs it (Debian: apt-get install -y nodejs npm)")
	}
	e2e, err := filepath.Abs(filepath.Join("..", "ui", "e2e"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Skip("ui/e2e/node_modules lacks playwright-core: run `(cd ui/e2e && npm ci)` first")
	}
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no Chromium installed: the browser test needs one (Debian: apt-get install -y chromium; or set KNOWMIND_CHROMIUM)")
	}
	artifacts := os.Getenv("KNOWMIND_UI_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "knowmind-ui-screenshots")
	}
	artifacts = filepath.Join(artifacts, "playwright")

	tenant := dgraphtest.TenantName(t)
	writeToken := newToken(t, tenant, knowmind.ScopeRead, knowmind.ScopeWrite)
	readToken := newToken(t, tenant, knowmind.ScopeRead)
	srv := newTestServer(t, nil)
	g := seedUIGraph(t, tenant, srv.URL+"/api/mcp/v1", writeToken)
	ids, err := json.Marshal(map[string]string{"client": g.client, "workshop": g.workshop, "address": g.address, "newAddress": g.newAddress})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "explorer.js")
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(),
		"KNOWMIND_UI_URL="+srv.URL,
		"KNOWMIND_UI_WRITE_TOKEN="+writeToken,
		"KNOWMIND_UI_READ_TOKEN="+readToken,
		"KNOWMIND_UI_IDS="+string(ids),
		"KNOWMIND_UI_ARTIFACTS="+artifacts,
		"KNOWMIND_CHROMIUM="+browser,
	)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	log := strings.TrimSpace(string(out))
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("node explorer.js ran past 2 minutes:\n%s", log)
	case errors.As(err, &exit):
		t.Fatalf("node explorer.js failed (exit %d):\n%s", exit.ExitCode(), log)
	case err != nil:
		t.Fatalf("run node explorer.js: %v", err)
	}
	if !strings.Contains(log, "ok all steps") || !strings.Contains(log, "ok 07-read-only") {
		t.Fatalf("node explorer.js did not report every step:\n%s", log)
	}
	for _, name := range []string{"01-wrong-token", "04-memory", "05-as-of", "07-read-only"} {
		if fi, err := os.Stat(filepath.Join(artifacts, name+".png")); err != nil || fi.Size() == 0 {
			t.Fatalf("screenshot %s missing: %v", name, err)
		}
	}
	t.Log(log)
}
