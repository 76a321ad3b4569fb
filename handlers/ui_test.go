package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/ui"
)

func TestUIServesPageWithStrictCSP(t *testing.T) {
	srv := newTestServer(t, nil)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	for _, path := range []string{"/ui", "/ui/"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(body, "knowmind explorer") {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); csp != ui.ContentSecurityPolicy ||
			!strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
			t.Fatalf("GET %s: CSP %q", path, csp)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "style=") || strings.Contains(body, "http") {
			t.Fatalf("GET %s: the page must hold no inline script or style and load nothing from elsewhere", path)
		}
	}
	for path, ctype := range map[string]string{
		"/ui/app.js": "text/javascript", "/ui/app.css": "text/css", "/ui/vendor/cytoscape.min.js": "text/javascript",
	} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || len(body) == 0 ||
			resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if resp, _ := get("/ui/missing.js"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /ui/missing.js: %d, want 404", resp.StatusCode)
	}
}

// chromiumPath finds a Chromium to drive: KNOWMIND_CHROMIUM, else the usual
// names on PATH (Debian: apt-get install -y chromium).
func chromiumPath() string {
	if p := os.Getenv("KNOWMIND_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// uiBrowserOrSkip skips a browser test without a Chromium, and names the folder its screenshots
// go to (KNOWMIND_UI_ARTIFACTS, default: a knowmind-ui-screenshots folder in the temp dir).
func uiBrowserOrSkip(t *testing.T) (browser, artifacts string) {
	t.Helper()
	browser = chromiumPath()
	if browser == "" {
		t.Skip("no Chromium installed: the explorer's browser test needs one (Debian: apt-get install -y chromium; or set KNOWMIND_CHROMIUM)")
	}
	artifacts = os.Getenv("KNOWMIND_UI_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "knowmind-ui-screenshots")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return browser, artifacts
}

// uiBrowser is one headless Chromium driving the explorer for a test, closed when it ends.
type uiBrowser struct {
	t         *testing.T
	ctx       context.Context // the page's, with the test's 2-minute bound
	artifacts string
	settle    time.Duration // how long a screenshot waits for the page's animations
}

// openUIBrowser starts Chromium with the flags this machine's closed network needs.
func openUIBrowser(t *testing.T, browser, artifacts string, settle time.Duration) *uiBrowser {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(browser),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return &uiBrowser{t: t, ctx: ctx, artifacts: artifacts, settle: settle}
}

// run does one step of actions, failing the test with the step's name.
func (b *uiBrowser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// shot writes a screenshot of the page as <name>.png into the artifacts folder.
func (b *uiBrowser) shot(name string) {
	b.t.Helper()
	b.run("settle "+name, chromedp.Sleep(b.settle))
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.artifacts, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// uiIdle waits for the page's MCP calls to finish (app.js counts them).
var uiIdle = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := chromedp.Poll[bool](`document.body.dataset.busy === "0"`, chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
	return chromedp.Void{}, err
})

// uiGraph seeds what the browser test looks at: a client (stored through
// knowmind_store_memory at url with two entities), a workshop for it, and the
// client's address, updated once ("umgezogen").
type uiGraph struct{ client, workshop, address, newAddress, contract, failed string }

func seedUIGraph(t *testing.T, tenant, url, writeToken string) uiGraph {
	t.Helper()
	ctx := context.Background()
	ten, err := dgraphtest.Shared(t).Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	store := func(title, content string, tags ...string) string {
		r, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return r.MemoryID
	}
	link := func(from, to, rel string) {
		if _, err := ten.Link(ctx, from, to, rel); err != nil {
			t.Fatal(err)
		}
	}
	var g uiGraph
	var client StoreMemoryResult
	structured(t, callTool(t, url, writeToken, "knowmind_store_memory", map[string]any{
		"title": "Müller GmbH", "content": "Kunde Müller GmbH, Maschinenbau in Göttingen.", "tags": []string{"class:client", "kunde"},
		"entities": []any{map[string]any{"type": "organisation", "name": "Müller GmbH"}, map[string]any{"type": "place", "name": "Göttingen"}}}), &client)
	g.client = client.MemoryID
	g.workshop = store("Workshop Qualitätssicherung", "Zweitägiger Workshop für die Müller GmbH im März.")
	g.address = store("Adresse Müller GmbH", "Hauptstraße 1, 37073 Göttingen")
	link(g.workshop, g.client, "FOR_CLIENT")
	link(g.address, g.client, "PART_OF")
	time.Sleep(time.Second) // the slider's steps are a thousandth of the history (seed to test end)
	up, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: g.address, NewTitle: "Adresse Müller GmbH",
		NewContent: "Weender Landstraße 5, 37075 Göttingen", UpdateReason: "umgezogen"})
	if err != nil {
		t.Fatal(err)
	}
	g.newAddress = up.NewMemoryID
	link(g.newAddress, g.client, "PART_OF")
	doc, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Rahmenvertrag Müller",
		Content: "# Leistungen\n\nZwei Tage Schulung vor Ort.\n\n# Vergütung\n\nTagessatz 1.800 € zuzüglich Spesen."})
	if err != nil {
		t.Fatal(err)
	}
	g.contract = doc.MemoryID
	link(g.contract, g.client, "REFERENCES")
	// A failed ingest as the service keeps one: status failed, its error, no chunks.
	g.failed = "failed-" + g.client
	dgraphtest.SetJSON(t, ten, map[string]any{"dgraph.type": "Memory", "Memory.id": g.failed, "Memory.kind": "memory",
		"Memory.title": "Protokoll (Embedding fehlgeschlagen)", "Memory.content": "…", "Memory.status": knowmind.StatusFailed,
		"Memory.error": "embedding provider unavailable", "Memory.created_at": time.Now().UTC(), "Memory.valid_from": time.Now().UTC()})
	return g
}

// TestUIBrowser drives the explorer in a real headless Chromium against a
// test service on the shared Dgraph: wrong token, sign in, search, open a
// memory, its neighbours and version timeline, the time slider, sign out,
// and a read-only token. Screenshots of each state go to
// KNOWMIND_UI_ARTIFACTS (default: a knowmind-ui-screenshots folder in the
// temp dir).
func TestUIBrowser(t *testing.T) {
	browser, artifacts := uiBrowserOrSkip(t)
	tenant := dgraphtest.TenantName(t)
	writeToken := newToken(t, tenant, knowmind.ScopeRead, knowmind.ScopeWrite)
	readToken := newToken(t, tenant, knowmind.ScopeRead)
	srv := newTestServer(t, nil)
	g := seedUIGraph(t, tenant, srv.URL+"/api/mcp/v1", writeToken)

	b := openUIBrowser(t, browser, artifacts, 150*time.Millisecond)
	ctx := b.ctx

	// Every console error (CSP violations are reported there) and uncaught
	// exception fails the test.
	var mu sync.Mutex
	var problems []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			desc := ""
			if d.Exception != nil {
				desc = d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("exception %s:%d: %s %s", d.URL, d.LineNumber, d.Text, desc))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console %s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *cdplog.EventEntryAdded:
			// The wrong token's 401 is expected; anything else is not.
			expected401 := ev.Entry.Source == cdplog.EntrySourceNetwork && strings.Contains(ev.Entry.Text, "401")
			if ev.Entry.Level == cdplog.EntryLevelError && !expected401 {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatalf("start chromium %s: %v", browser, err)
	}
	run, shot, idle := b.run, b.shot, uiIdle
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	graphNodes := func() []string {
		t.Helper()
		return strings.Fields(evalJS[string](t, ctx, `document.getElementById('graph').dataset.nodes || ''`))
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	// A wrong token: a clear message, and nothing kept.
	run("open", chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(css("#token")))
	run("wrong token", chromedp.SendKeys(css("#token"), "kmt_not-a-real-token"+kb.Enter),
		chromedp.WaitVisible(css("#signin-error")), idle)
	if msg := text("#signin-error"); !strings.Contains(msg, "not accepted (HTTP 401)") {
		t.Fatalf("wrong token: message %q", msg)
	}
	shot("01-wrong-token")

	// Sign in with the keyboard: the token lives in sessionStorage only.
	run("sign in", jsDo(`document.getElementById('token').value = ''`),
		chromedp.SendKeys(css("#token"), writeToken+kb.Enter),
		chromedp.WaitVisible(css("#app-view")), idle)
	stored := evalJS[string](t, ctx, `sessionStorage.getItem('knowmind.token') || ''`)
	cookies := evalJS[string](t, ctx, `document.cookie + localStorage.length`)
	href := evalJS[string](t, ctx, `location.href`)
	if stored != writeToken || cookies != "0" || strings.Contains(href, "kmt_") {
		t.Fatalf("token kept in sessionStorage %v, cookies+localStorage %q, URL %q", stored == writeToken, cookies, href)
	}
	if who := text("#who"); who != "signed in · read and write" {
		t.Fatalf("who = %q", who)
	}
	shot("02-signed-in")

	// Search: hits with scores; umlauts intact.
	run("search", chromedp.SendKeys(css("#query"), "Adresse Müller"+kb.Enter),
		chromedp.WaitVisible(css("#hits li")), idle)
	hits := text("#hits")
	scores := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#hits .score')].map(s => s.textContent)`)
	if !strings.Contains(hits, "Adresse Müller GmbH") || len(scores) < 2 || !regexp.MustCompile(`^[01]\.\d{3}$`).MatchString(scores[1]) {
		t.Fatalf("hits: %q, scores %q", hits, scores)
	}
	shot("03-search")

	// Open the current address (Enter on the hit): its neighbours and the
	// superseded version on the timeline.
	hitSel := fmt.Sprintf(`#hits button[data-id=%q]`, g.newAddress)
	run("open memory", chromedp.Focus(css(hitSel)), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, g.newAddress))), idle)
	if nodes := graphNodes(); len(nodes) != 3 || !slices.Contains(nodes, g.client) || !slices.Contains(nodes, g.address) {
		t.Fatalf("graph nodes %v: want the address, its old version and the client", nodes)
	}
	if c := text("#d-content"); !strings.Contains(c, "Weender Landstraße 5") {
		t.Fatalf("content %q", c)
	}
	if edges := text("#d-edges"); !strings.Contains(edges, "—PART_OF→ Müller GmbH") || !strings.Contains(edges, "—SUPERSEDES→") {
		t.Fatalf("relations %q", edges)
	}
	versions := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#d-versions li')].map(li => li.dataset.id + (li.classList.contains('shown') ? ' shown' : ''))`)
	if !slices.Equal(versions, []string{g.address, g.newAddress + " shown"}) || !strings.Contains(text("#d-versions"), "reason: umgezogen") {
		t.Fatalf("timeline %v %q", versions, text("#d-versions"))
	}
	writeForms := evalJS[int](t, ctx, `document.querySelectorAll('#write-update').length`)
	if writeForms != 1 {
		t.Fatal("a write token sees no update form")
	}
	run("two hops", chromedp.SetValue(css("#hops"), "2"),
		dispatch("hops", "change"), idle)
	if nodes := graphNodes(); !slices.Contains(nodes, g.workshop) {
		t.Fatalf("two hops: nodes %v lack the workshop", nodes)
	}
	shot("04-memory")

	// Move the slider to between the two versions: the old one is shown.
	pos := evalJS[int](t, ctx, `(() => { const s = window.knowmindExplorer, v = s.shown.versions;
		const at = (Date.parse(v[0].valid_from) + Date.parse(v[1].valid_from)) / 2;
		return Math.floor((at - s.range.min) / (s.range.max - s.range.min) * 1000); })()`)
	t.Logf("slider position %d of 1000 (between the versions)", pos)
	run("slider", jsDo(fmt.Sprintf(`document.getElementById('asof').value = %d`, pos)),
		dispatch("asof", "change"),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, g.address))), idle)
	if c := text("#d-content"); !strings.Contains(c, "Hauptstraße 1") {
		t.Fatalf("as of before the update: content %q", c)
	}
	if nodes := graphNodes(); slices.Contains(nodes, g.newAddress) || !slices.Contains(nodes, g.client) {
		t.Fatalf("as of before the update: nodes %v", nodes)
	}
	if label := text("#asof-label"); !strings.HasPrefix(label, "as of ") || !strings.Contains(text("#d-requested"), g.newAddress) {
		t.Fatalf("slider label %q, note %q", label, text("#d-requested"))
	}
	writeForms = evalJS[int](t, ctx, `document.querySelectorAll('#write-update').length`)
	if writeForms != 0 {
		t.Fatal("the past is not editable: no update form as of a time")
	}
	shot("05-as-of")
	run("now", chromedp.Click(css("#asof-now")),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, g.newAddress))), idle)

	// Write through the page (a write token): a third version, shown at once.
	run("update fact", jsDo(`document.getElementById('u-content').value = 'Weender Landstraße 7, 37075 Göttingen'`),
		chromedp.SendKeys(css("#u-reason"), "Hausnummer korrigiert"),
		chromedp.Click(css("#write-update button[type=submit]")),
		chromedp.WaitVisible(css("#d-versions li:nth-child(3)")), idle)
	if c := text("#d-content"); !strings.Contains(c, "Weender Landstraße 7") || !strings.Contains(text("#d-versions"), "reason: Hausnummer korrigiert") {
		t.Fatalf("after the update: content %q, timeline %q", c, text("#d-versions"))
	}

	// Sign out: the token is gone.
	run("sign out", chromedp.Click(css("#signout")), chromedp.WaitVisible(css("#signin-view")))
	gone := evalJS[bool](t, ctx, `sessionStorage.getItem('knowmind.token') === null && document.getElementById('app-view').hidden`)
	if !gone {
		t.Fatal("after sign-out the token is still kept or the app still shown")
	}
	shot("06-signed-out")

	// A read-only token sees no write controls.
	run("sign in read-only", chromedp.SendKeys(css("#token"), readToken+kb.Enter),
		chromedp.WaitVisible(css("#app-view")), idle,
		chromedp.SendKeys(css("#query"), "Müller GmbH"+kb.Enter),
		chromedp.WaitVisible(css("#hits li")), idle,
		chromedp.Click(css(fmt.Sprintf(`#hits button[data-id=%q]`, g.client))),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, g.client))), idle)
	writeForms = evalJS[int](t, ctx, `document.querySelectorAll('#write-update, #write-slot *').length`)
	if who := text("#who"); who != "signed in · read-only" || writeForms != 0 {
		t.Fatalf("read-only token: %q, %d write controls", who, writeForms)
	}
	if tags := text("#d-tags"); !strings.Contains(tags, "class:client") {
		t.Fatalf("tags %q", tags)
	}
	ents := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#d-entities li')].map(li => li.dataset.type + '/' + li.dataset.id + ' ' + li.textContent)`)
	if !slices.Equal(ents, []string{"organisation/mueller-gmbh organisation: Müller GmbH", "place/goettingen place: Göttingen"}) {
		t.Fatalf("entities shown next to the tags: %q", ents)
	}
	shot("07-read-only")

	// The recent list marks the failed ingest; a document shows its chunks.
	failedBadges := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#recent .badge.failed')].map(b => b.closest('button').dataset.id)`)
	if !slices.Equal(failedBadges, []string{g.failed}) {
		t.Fatalf("failed ingests marked in the recent list: %v, want [%s]", failedBadges, g.failed)
	}
	run("open the failed one", chromedp.Click(css(fmt.Sprintf(`#recent button[data-id=%q]`, g.failed))),
		chromedp.WaitVisible(css("#d-error")), idle)
	if msg := text("#d-error"); msg != "Ingest failed: embedding provider unavailable" {
		t.Fatalf("failed ingest: %q", msg)
	}
	run("open the document", chromedp.Click(css(fmt.Sprintf(`#recent button[data-id=%q]`, g.contract))),
		chromedp.WaitVisible(css("#d-chunks li")), idle)
	chunks := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#d-chunks li')].map(li => li.textContent)`)
	if len(chunks) != 2 || !strings.HasPrefix(chunks[0], "Leistungen") || !strings.Contains(chunks[1], "1.800 €") {
		t.Fatalf("document chunks %q", chunks)
	}
	shot("08-document")

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("the page reported problems (CSP violations show here):\n%s", strings.Join(problems, "\n"))
	}
	t.Logf("screenshots in %s", artifacts)
}

// evalJS evaluates js in the page and decodes its value.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("eval %s: %v", js, err)
	}
	return v
}

// dispatch fires an event on the element with id, as a user's change does.
func dispatch(id, event string) chromedp.Action[chromedp.Void] {
	return jsDo(fmt.Sprintf(`document.getElementById(%q).dispatchEvent(new Event(%q))`, id, event))
}

// jsDo runs js in the page as a step of chromedp.Do.
func jsDo(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[any](js)(ctx, tg)
		return chromedp.Void{}, err
	})
}
