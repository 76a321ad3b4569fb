package handlers

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func (c *notesClient) session(token string, args map[string]any) StartSessionResult {
	c.t.Helper()
	var s StartSessionResult
	structured(c.t, callTool(c.t, c.url, token, "knowmind_start_session", args), &s)
	return s
}

func (c *notesClient) listNotes(args map[string]any) ListNotesResult {
	c.t.Helper()
	var l ListNotesResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_list_notes", args), &l)
	return l
}

func activityIDs(items []knowmind.ActivityItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// TestNotesSessionBootstrap is the scripted session through the MCP endpoint: whoami →
// start_session (first visit, empty delta) → notes created in folders → start_session again
// (own writes are no delta) → a second principal creates, edits and trashes → the first
// principal's start_session shows exactly those three → list_notes pages deterministically →
// recent_activity says who, how, where and when.
func TestNotesSessionBootstrap(t *testing.T) {
	c := newNotesClient(t)
	other := newToken(t, c.tenant, knowmind.ScopeWrite)

	var who WhoamiResult
	structured(t, callTool(t, c.url, c.write, "knowmind_whoami", map[string]any{}), &who)
	wantVector := knowmind.VectorSemantic
	if strings.HasPrefix(dgraphtest.Shared(t).Embedder.ID(), "hash-") {
		wantVector = knowmind.VectorLexical
	}
	if !strings.HasPrefix(who.Principal, "tok:") || who.Ceiling != knowmind.ScopeWrite || !slices.Equal(who.Projects, []string{"main"}) ||
		who.Capabilities.Vector != wantVector || !who.Capabilities.Trash || !who.Capabilities.Revisions {
		t.Fatalf("whoami = %+v", who)
	}
	var readWho WhoamiResult
	structured(t, callTool(t, c.url, c.read, "knowmind_whoami", map[string]any{}), &readWho)
	if readWho.Ceiling != knowmind.ScopeRead || readWho.Principal == who.Principal {
		t.Fatalf("read token whoami = %+v", readWho)
	}

	structured(t, callTool(t, c.url, c.write, "knowmind_remember_about_user", map[string]any{"category": "Stil", "observation": "Mag kurze Antworten."}), new(RememberResult))
	s := c.session(c.write, map[string]any{"project": "main"})
	if !s.Delta.FirstVisit || s.Delta.Since != nil || len(s.Delta.Created)+len(s.Delta.Edited)+len(s.Delta.Trashed) != 0 ||
		len(s.Profile) != 1 || s.Profile[0].Category != "Stil" || !strings.Contains(s.Profile[0].Content, "kurze Antworten") ||
		len(s.Projects) != 1 || s.Projects[0].Handle != "main" || s.Index == nil || s.Index.Notes != 0 {
		t.Fatalf("first start_session = %+v", s)
	}
	if plain := c.session(c.write, map[string]any{}); plain.Index != nil || plain.Delta != nil || len(plain.Projects) != 1 {
		t.Fatalf("start_session without project = %+v", plain)
	}

	// Notes in folders, written by the first principal.
	var projekte []knowmind.NoteWriteResult
	for _, title := range []string{"Echo", "Alpha", "Delta", "Charlie", "Bravo"} {
		projekte = append(projekte, c.create(map[string]any{"project": "main", "path": "Projekte", "tags": []string{"p"},
			"body": "# " + title + "\n\nProjekt " + title + "."}))
	}
	kunde := c.create(map[string]any{"project": "main", "path": "Kunden/Müller", "type": "kunde", "tags": []string{"crm", "p"},
		"body": "# Müller\n\nDie Müller GmbH."})
	c.create(map[string]any{"project": "main", "body": "# Start\n\nWillkommen."})
	if s := c.session(c.write, map[string]any{"project": "main"}); s.Delta.FirstVisit || s.Delta.Since == nil ||
		len(s.Delta.Created)+len(s.Delta.Edited)+len(s.Delta.Trashed) != 0 {
		t.Fatalf("own writes must not be a delta: %+v", s.Delta)
	}

	// A second principal creates, edits and trashes one note each.
	var created knowmind.NoteWriteResult
	structured(t, callTool(t, c.url, other, "knowmind_create_note", map[string]any{"project": "main", "path": "Kunden", "body": "# Schmidt\n\nNeu."}), &created)
	structured(t, callTool(t, c.url, other, "knowmind_edit_note", map[string]any{"id": kunde.ID, "versionToken": kunde.VersionToken,
		"op": "append", "content": "Umsatz gestiegen."}), new(EditNoteResult))
	structured(t, callTool(t, c.url, other, "knowmind_delete_note", map[string]any{"id": projekte[0].ID}), new(DeleteNoteResult))

	s = c.session(c.write, map[string]any{"project": "main"})
	d := s.Delta
	if !slices.Equal(activityIDs(d.Created), []string{created.ID}) || !slices.Equal(activityIDs(d.Edited), []string{kunde.ID}) ||
		!slices.Equal(activityIDs(d.Trashed), []string{projekte[0].ID}) || d.Truncated {
		t.Fatalf("delta after the other principal's writes: %+v", d)
	}
	if e := d.Edited[0]; e.By == who.Principal || e.Via != "knowmind_edit_note" || e.Path != "Kunden/Müller" || e.Operation != knowmind.ActivityEdited {
		t.Fatalf("edited item %+v", e)
	}
	if again := c.session(c.write, map[string]any{"project": "main"}); len(again.Delta.Created)+len(again.Delta.Edited)+len(again.Delta.Trashed) != 0 {
		t.Fatalf("the delta is shown once: %+v", again.Delta)
	}
	// The other principal's own first visit: its own writes are no delta, and it has none before.
	if o := c.session(other, map[string]any{"project": "main"}); !o.Delta.FirstVisit || len(o.Profile) != 0 {
		t.Fatalf("other principal's session: %+v", o)
	}
	// Index and knownValues: 4 current notes in Projekte, 2 below Kunden, 1 at the root.
	idx := s.Index
	if idx.Notes != 7 || !slices.Equal(idx.Folders, []knowmind.ValueCount{{Value: "Kunden", Count: 2}, {Value: "Projekte", Count: 4}}) {
		t.Fatalf("index %+v", idx)
	}
	kv := s.KnownValues
	if len(kv.Tags) != 2 || kv.Tags[0] != (knowmind.ValueCount{Value: "p", Count: 5}) || kv.Tags[1] != (knowmind.ValueCount{Value: "crm", Count: 1}) ||
		!slices.Equal(kv.Types, []knowmind.ValueCount{{Value: "kunde", Count: 1}}) || len(kv.Categories) != 1 || kv.Categories[0].Value != "Stil" {
		t.Fatalf("knownValues %+v", kv)
	}

	// list_notes: by title, two a page, no repeats, the trashed one gone.
	var titles []string
	cursor := ""
	for page := 0; page < 5; page++ {
		args := map[string]any{"project": "main", "path": "Projekte", "limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		l := c.listNotes(args)
		for _, n := range l.Notes {
			titles = append(titles, n.Title)
		}
		if l.NextCursor == nil {
			break
		}
		cursor = *l.NextCursor
	}
	if !slices.Equal(titles, []string{"Alpha", "Bravo", "Charlie", "Delta"}) {
		t.Fatalf("paged titles %v", titles)
	}
	root := c.listNotes(map[string]any{"project": "main"})
	if len(root.Notes) != 1 || root.Notes[0].Title != "Start" || root.NextCursor != nil ||
		!slices.Equal(root.Folders, []knowmind.ValueCount{{Value: "Kunden", Count: 2}, {Value: "Projekte", Count: 4}}) {
		t.Fatalf("root listing %+v", root)
	}
	kunden := c.listNotes(map[string]any{"project": "main", "path": "Kunden"})
	if len(kunden.Notes) != 1 || kunden.Notes[0].ID != created.ID || !slices.Equal(kunden.Folders, []knowmind.ValueCount{{Value: "Müller", Count: 1}}) {
		t.Fatalf("Kunden listing %+v", kunden)
	}
	if tagged := c.listNotes(map[string]any{"project": "main", "path": "Kunden/Müller", "tag": "crm"}); len(tagged.Notes) != 1 ||
		tagged.Notes[0].ID != kunde.ID || tagged.Notes[0].VersionToken == kunde.VersionToken {
		t.Fatalf("tag filter %+v", tagged)
	}
	if none := c.listNotes(map[string]any{"project": "main", "path": "Projekte", "tag": "crm"}); len(none.Notes) != 0 {
		t.Fatalf("tag filter kept %+v", none.Notes)
	}

	// recent_activity: newest first (the trash, the edit, the create), two a page.
	var act RecentActivityResult
	structured(t, callTool(t, c.url, c.read, "knowmind_recent_activity", map[string]any{"limit": 2}), &act)
	if len(act.Items) != 2 || act.NextCursor == nil || act.Items[0].ID != projekte[0].ID || act.Items[0].Operation != knowmind.ActivityTrashed ||
		act.Items[0].Via != "knowmind_delete_note" || act.Items[1].ID != kunde.ID || act.Items[1].Operation != knowmind.ActivityEdited ||
		act.Items[1].ActorKind != "agent" || act.Items[1].Project != "main" {
		t.Fatalf("recent activity page 1: %+v", act)
	}
	seen := activityIDs(act.Items)
	for act.NextCursor != nil {
		next := *act.NextCursor
		act = RecentActivityResult{}
		structured(t, callTool(t, c.url, c.read, "knowmind_recent_activity", map[string]any{"limit": 2, "cursor": next}), &act)
		seen = append(seen, activityIDs(act.Items)...)
	}
	if len(seen) != 8 || seen[2] != created.ID {
		t.Fatalf("recent activity over all pages: %v", seen)
	}
	slices.Sort(seen)
	if len(slices.Compact(seen)) != 8 {
		t.Fatalf("recent activity repeated a note: %v", seen)
	}
}

// TestNotesNavigationParams: each navigation tool's parameter errors name the parameter.
func TestNotesNavigationParams(t *testing.T) {
	c := newNotesClient(t)
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		code  int64
		param string
	}{
		{"knowmind_list_notes", map[string]any{}, jsonrpc.CodeInvalidParams, "project"},
		{"knowmind_list_notes", map[string]any{"project": "main", "limit": 0}, jsonrpc.CodeInvalidParams, "limit"},
		{"knowmind_list_notes", map[string]any{"project": "main", "limit": 101}, jsonrpc.CodeInvalidParams, "limit"},
		{"knowmind_list_notes", map[string]any{"project": "main", "path": "../x"}, jsonrpc.CodeInvalidParams, "path"},
		{"knowmind_list_notes", map[string]any{"project": "main", "cursor": "!!"}, jsonrpc.CodeInvalidParams, "cursor"},
		{"knowmind_list_notes", map[string]any{"project": "Main"}, jsonrpc.CodeInvalidParams, "project"},
		{"knowmind_list_notes", map[string]any{"project": "fehlt"}, codeNotFound, ""},
		{"knowmind_recent_activity", map[string]any{"limit": 51}, jsonrpc.CodeInvalidParams, "limit"},
		{"knowmind_recent_activity", map[string]any{"cursor": "kaputt"}, jsonrpc.CodeInvalidParams, "cursor"},
		{"knowmind_recent_activity", map[string]any{"project": "fehlt"}, codeNotFound, ""},
		{"knowmind_start_session", map[string]any{"project": "fehlt"}, codeNotFound, ""},
		{"knowmind_start_session", map[string]any{"project": strings.Repeat("a", 65)}, jsonrpc.CodeInvalidParams, "project"},
		{"knowmind_whoami", map[string]any{"x": 1}, jsonrpc.CodeInvalidParams, "x"},
	} {
		wantRPCError(t, callTool(t, c.url, c.read, tc.tool, tc.args), tc.code, tc.param)
	}
}

// TestBadCursors: every tool that pages answers a cursor it did not hand out with -32602 naming
// cursor, whatever its bytes: base64 of invalid UTF-8 ("0x1" decodes to such), raw invalid
// UTF-8 in the JSON string, NUL, oversize.
func TestBadCursors(t *testing.T) {
	c := newNotesClient(t)
	c.create(map[string]any{"project": "main", "body": "# Erste Notiz\n\nText."})
	bad := []string{"0x1", "_w", "__8", base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xfe, 'a'}),
		"!!", "x\x00y", strings.Repeat("QUFB", 600), "0x1\xff\xfe"}
	for _, tool := range []string{"knowmind_list_notes", "knowmind_recent_activity", "knowmind_list_recent"} {
		for _, cursor := range bad {
			args := map[string]any{"cursor": cursor}
			if tool == "knowmind_list_notes" {
				args["project"] = "main"
			}
			wantRPCError(t, callTool(t, c.url, c.read, tool, args), jsonrpc.CodeInvalidParams, "cursor")
		}
		// Raw invalid UTF-8 bytes inside the JSON string (json.Marshal would have replaced them).
		project := ""
		if tool == "knowmind_list_notes" {
			project = `"project":"main",`
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{%s"cursor":"0x1%s"}}}`,
			tool, project, "\xc3\x28\xff")
		wantRPCError(t, send(t, c.url, c.read, body), jsonrpc.CodeInvalidParams, "cursor")
	}
}
