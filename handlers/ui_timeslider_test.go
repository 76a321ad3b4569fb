package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestUITimeSliderShowsTheRewiring drives the explorer's time slider in a real headless
// Chromium over the Apollo example: a project linked DEPENDS_ON, OWNED_BY, PART_OF and
// CAUSED_BY, then its deadline updated. Now, the neighbours hang off the new version (and it
// SUPERSEDES the old one); with the slider before the update, the old version is the centre and
// the same neighbours hang off it, the new version absent; back to now, off the new one again.
// Screenshots (timeslider-*.png) go to KNOWMIND_UI_ARTIFACTS.
func TestUITimeSliderShowsTheRewiring(t *testing.T) {
	browser, artifacts := uiBrowserOrSkip(t)
	tenant := dgraphtest.TenantName(t)
	token := newToken(t, tenant, knowmind.ScopeRead)
	srv := newTestServer(t, nil)

	ctx := context.Background()
	ten, err := dgraphtest.Shared(t).Client.Tenant(ctx, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	store := func(title, content string) string {
		t.Helper()
		r, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return r.MemoryID
	}
	peers := map[string]string{
		"DEPENDS_ON": store("Budget 2027", "Das Budget 2027 für Apollo."),
		"OWNED_BY":   store("Lisa Meyer", "Lisa Meyer leitet Projekte."),
		"PART_OF":    store("Programm Mond", "Das Programm Mond bündelt Projekte."),
		"CAUSED_BY":  store("Lieferverzug", "Lieferverzug beim Zulieferer."),
	}
	apollo := store("Projekt Apollo", "Projekt Apollo: Abgabe am 30. Juni 2027.")
	for rel, peer := range peers {
		if _, err := ten.Link(ctx, apollo, peer, rel); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // the slider goes to 300 ms before the update; its steps are a thousandth of the history
	up, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: apollo, NewTitle: "Projekt Apollo",
		NewContent: "Projekt Apollo: Abgabe am 30. September 2027.", UpdateReason: "Verzug"})
	if err != nil {
		t.Fatal(err)
	}
	current := up.NewMemoryID

	b := openUIBrowser(t, browser, artifacts, 300*time.Millisecond)
	bctx := b.ctx
	run, shot, idle := b.run, b.shot, uiIdle
	// wiring is the explored graph as the page holds it: "from REL to" per edge, and the nodes.
	wiring := func() (edges, nodes []string) {
		t.Helper()
		edges = evalJS[[]string](t, bctx, `window.knowmindExplorer.shown.edges.map(e => e.from + ' ' + e.rel_type + ' ' + e.to)`)
		nodes = strings.Fields(evalJS[string](t, bctx, `document.getElementById('graph').dataset.nodes || ''`))
		return edges, nodes
	}
	// hangOff checks that every neighbour's relation touches centre and none touches other.
	hangOff := func(when, centre, other string) {
		t.Helper()
		edges, nodes := wiring()
		for rel, peer := range peers {
			want := centre + " " + rel + " " + peer
			back := peer + " " + rel + " " + centre
			if !slices.Contains(edges, want) && !slices.Contains(edges, back) {
				t.Fatalf("%s: no %s edge between %s and %s in %v", when, rel, centre, peer, edges)
			}
			if !slices.Contains(nodes, peer) {
				t.Fatalf("%s: neighbour %s not drawn (nodes %v)", when, peer, nodes)
			}
		}
		for _, e := range edges {
			if strings.Contains(e, other) && !strings.Contains(e, "SUPERSEDES") {
				t.Fatalf("%s: a relation hangs off %s: %q", when, other, e)
			}
		}
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	// shown waits until the page holds the explore answer centred on id (as of a time or now).
	shown := func(id string, asOf bool) chromedp.Action[chromedp.Void] {
		return chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Poll[bool](fmt.Sprintf(`(() => { const s = window.knowmindExplorer.shown;
				return !!s && s.memory.id === %q && !!s.as_of === %t; })()`, id, asOf),
				chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
			return chromedp.Void{}, err
		})
	}

	run("sign in", chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), token+kb.Enter), chromedp.WaitVisible(css("#app-view")), idle)
	run("search", chromedp.SendKeys(css("#query"), "Projekt Apollo"+kb.Enter), chromedp.WaitVisible(css("#hits li")), idle)
	run("open Apollo", chromedp.Click(css(fmt.Sprintf(`#hits button[data-id=%q]`, current))),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, current))), idle, shown(current, false))
	hangOff("now", current, apollo)
	if edges, _ := wiring(); !slices.Contains(edges, current+" SUPERSEDES "+apollo) {
		t.Fatalf("now: the new version does not SUPERSEDES the old one: %v", edges)
	}
	drawnOld := func(id string) int {
		t.Helper()
		return evalJS[int](t, bctx, fmt.Sprintf(`window.knowmindExplorer.cy.getElementById(%q).data('old')`, id))
	}
	if drawnOld(apollo) != 1 {
		t.Fatal("now: the superseded version is not drawn as old (dashed)")
	}
	shot("timeslider-1-now")

	pos := evalJS[int](t, bctx, `(() => { const s = window.knowmindExplorer, v = s.shown.versions;
		const at = Date.parse(v[1].valid_from) - 300;
		return Math.floor((at - s.range.min) / (s.range.max - s.range.min) * 1000); })()`)
	run("slider before the update", jsDo(fmt.Sprintf(`document.getElementById('asof').value = %d`, pos)),
		dispatch("asof", "change"),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, apollo))), idle, shown(apollo, true))
	hangOff("before the update", apollo, current)
	if _, nodes := wiring(); slices.Contains(nodes, current) {
		t.Fatalf("before the update the new version is drawn: %v", nodes)
	}
	if drawnOld(apollo) != 0 {
		t.Fatal("before the update the version current then is drawn as old (dashed)")
	}
	if c, err := chromedp.Run(bctx, chromedp.Text(css("#d-content"))); err != nil || !strings.Contains(c, "30. Juni") {
		t.Fatalf("before the update: content %q %v", c, err)
	}
	shot("timeslider-2-before-update")

	run("back to now", chromedp.Click(css("#asof-now")),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, current))), idle, shown(current, false))
	hangOff("after the update", current, apollo)
	shot("timeslider-3-after-update")
	t.Logf("screenshots in %s", artifacts)
}
