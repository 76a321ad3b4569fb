package handlers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestUIBrowserDefaultToken (issue 39): the explorer with the token `knowmind token create
// --scopes read,write` makes (toolsets memory) signs in, searches, opens a hit's graph (not
// empty) and says what the token leaves out — notes, with the command that makes a token that
// sees them. A token without the memory toolset is told which toolset and command it needs; a
// token with notes sees a note and its properties (front matter). Screenshots 10–12 go to
// KNOWMIND_UI_ARTIFACTS.
func TestUIBrowserDefaultToken(t *testing.T) {
	browser, artifacts := uiBrowserOrSkip(t)
	bg := context.Background()
	cl := dgraphtest.Shared(t).Client
	tenant := dgraphtest.TenantName(t)
	limited := func(scopes []knowmind.Scope, toolsets ...string) string {
		t.Helper()
		secret, _, err := cl.CreateLimitedToken(bg, tenant, scopes, nil, toolsets, "ui", nil)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	readWrite := []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}
	srv := newTestServer(t, nil)
	g := seedUIGraph(t, tenant, srv.URL+"/api/mcp/v1", newToken(t, tenant, readWrite...))
	ten, err := cl.Tenant(bg, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	note, err := ten.CreateNote(bg, knowmind.NoteScope{}, knowmind.CreateNoteInput{Project: "main", Class: knowmind.ClassUserDoc,
		Body:  "---\nstatus: active\nowner: Lisa Meyer\n---\n# Kundenakte Müller\n\nNotiz zur Müller GmbH und ihrer Adresse.",
		Actor: knowmind.Actor{Principal: "tok:test", Via: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defaultToken := limited(readWrite, knowmind.ToolsetMemory) // what `token create --scopes read,write` makes
	notesOnly := limited([]knowmind.Scope{knowmind.ScopeRead}, knowmind.ToolsetNotes)
	withNotes := limited([]knowmind.Scope{knowmind.ScopeRead}, knowmind.ToolsetMemory, knowmind.ToolsetNotes)

	b := openUIBrowser(t, browser, artifacts, 150*time.Millisecond)
	ctx := b.ctx
	run, shot, idle := b.run, b.shot, uiIdle
	text := func(sel string) string {
		t.Helper()
		return evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).textContent`, sel))
	}
	visible := func(id string) bool {
		return !evalJS[bool](t, ctx, fmt.Sprintf(`document.getElementById(%q).hidden`, id))
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	signIn := func(step, token string) {
		t.Helper()
		run(step, jsDo(`document.getElementById('token').value = ''`),
			chromedp.SendKeys(css("#token"), token+kb.Enter), idle)
	}
	signOut := func() { run("sign out", chromedp.Click(css("#signout")), chromedp.WaitVisible(css("#token")), idle) }
	search := func(q string) {
		t.Helper()
		run("search "+q, jsDo(`document.getElementById('query').value = ''`),
			chromedp.SendKeys(css("#query"), q+kb.Enter), chromedp.WaitVisible(css("#hits li")), idle)
	}

	// The default token: signed in, told that notes are left out and how to see them.
	run("open", chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(css("#token")))
	signIn("sign in with the default token", defaultToken)
	run("app", chromedp.WaitVisible(css("#app-view")))
	if who := text("#who"); who != "signed in · read and write" {
		t.Fatalf("who = %q", who)
	}
	if reach := text("#reach"); !visible("reach") || !strings.Contains(reach, "Notes are not shown") ||
		!strings.Contains(reach, "--toolsets memory,notes") {
		t.Errorf("what the default token leaves out: visible %v, %q", visible("reach"), reach)
	}
	search("Adresse Müller")
	if hits := text("#hits"); !strings.Contains(hits, "Adresse Müller GmbH") || strings.Contains(hits, "Kundenakte") {
		t.Errorf("default token's hits %q: want the address, not the note", hits)
	}
	hit := fmt.Sprintf(`#hits button[data-id=%q]`, g.newAddress)
	run("open a hit", chromedp.Click(css(hit)), chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, g.newAddress))), idle)
	nodes := strings.Fields(evalJS[string](t, ctx, `document.getElementById('graph').dataset.nodes || ''`))
	if len(nodes) < 2 || visible("app-error") {
		t.Errorf("the hit's graph with the default token: nodes %v, error %q", nodes, text("#app-error"))
	}
	shot("10-default-token-graph")

	// A token without the memory toolset: told which toolset and which command.
	signOut()
	signIn("sign in with a notes-only token", notesOnly)
	run("refused", chromedp.WaitVisible(css("#signin-error")))
	if msg := text("#signin-error"); !strings.Contains(msg, "leave out memory") || !strings.Contains(msg, "--toolsets memory") {
		t.Errorf("notes-only token: %q", msg)
	}
	shot("11-notes-only-token")

	// memory and notes: no notice about notes; the note is found and shows its properties.
	signIn("sign in with memory and notes", withNotes)
	run("app", chromedp.WaitVisible(css("#app-view")))
	if reach := text("#reach"); strings.Contains(reach, "Notes are not shown") {
		t.Errorf("a token with notes is told notes are not shown: %q", reach)
	}
	search("Kundenakte Müller")
	run("open the note", chromedp.Click(css(fmt.Sprintf(`#hits button[data-id=%q]`, note.ID))),
		chromedp.WaitVisible(css(fmt.Sprintf(`#details[data-id=%q]`, note.ID))), idle)
	if props := text("#d-props"); !strings.Contains(props, "status: active") || !strings.Contains(props, "owner: Lisa Meyer") {
		t.Errorf("the note's properties: %q", props)
	}
	shot("12-note-properties")
}
