package handlers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
)

// TestNotesRenameAndMoveKeepLinks: rename_note rewrites [[Old]] in the referring notes in one
// step and keeps [[Old]] resolving through the alias; move_note keeps id and links.
func TestNotesRenameAndMoveKeepLinks(t *testing.T) {
	c := newNotesClient(t)
	vertrag := c.create(map[string]any{"project": "main", "path": "Verträge", "body": "# Rahmenvertrag\n\nLäuft bis 2027."})
	kunde := c.create(map[string]any{"project": "main", "path": "Kunden",
		"body": "# Kunde Müller\n\nGilt: [[Rahmenvertrag]], Fristen: [[rahmenvertrag#Fristen|die Fristen]]."})
	notiz := c.create(map[string]any{"project": "main", "body": "# Notiz\n\nSiehe [[Rahmenvertrag]].\n\n```\n[[Rahmenvertrag]]\n```"})
	plain := c.create(map[string]any{"project": "main", "body": "# Ohne Textlink\n\nNur eine Kante.",
		"links": []map[string]any{{"to": vertrag.ID}}})

	// Parameter errors and a stale token change nothing.
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": vertrag.ID, "versionToken": vertrag.VersionToken, "title": "A [b]"}),
		jsonrpc.CodeInvalidParams, "title")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": vertrag.ID, "title": "Neu"}), jsonrpc.CodeInvalidParams, "versionToken")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": vertrag.ID, "versionToken": "1-0000", "title": "Neu"}), codeConflict, "")
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_rename_note", map[string]any{"id": vertrag.ID, "versionToken": vertrag.VersionToken, "title": "Neu"}), codeScope, "")
	if got := c.get(kunde.ID, false); got.VersionToken != kunde.VersionToken {
		t.Fatalf("a refused rename wrote a referring note: %+v", got)
	}

	var ren RenameNoteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": vertrag.ID, "versionToken": vertrag.VersionToken, "title": "Vertrag 2027"}), &ren)
	slices.Sort(ren.Rewritten)
	want := []string{kunde.ID, notiz.ID}
	slices.Sort(want)
	if ren.ID != vertrag.ID || ren.Title != "Vertrag 2027" || ren.VersionToken == vertrag.VersionToken || !slices.Equal(ren.Rewritten, want) {
		t.Fatalf("rename = %+v, want rewritten %v", ren, want)
	}
	v := c.get(vertrag.ID, true)
	if v.Title != "Vertrag 2027" || !strings.HasPrefix(v.Content, "# Vertrag 2027\n") || !slices.Equal(v.Aliases, []string{"Rahmenvertrag"}) ||
		len(v.Links.In) < 3 || v.Provenance.UpdatedVia != "knowmind_rename_note" {
		t.Fatalf("renamed note %+v", v)
	}
	if k := c.get(kunde.ID, true); !strings.Contains(k.Content, "Gilt: [[Vertrag 2027]], Fristen: [[Vertrag 2027#Fristen|die Fristen]].") ||
		k.Revision != 2 || len(k.Revisions) != 1 {
		t.Fatalf("referring note %+v", k)
	}
	if revs, err := tenantOf(t, c.tenant).Revisions(context.Background(), knowmind.NoteScope{}, kunde.ID); err != nil ||
		len(revs) != 1 || !strings.Contains(revs[0].Content, "Gilt: [[Rahmenvertrag]]") {
		t.Fatalf("the referring note's former body is a revision: %v %+v", err, revs)
	}
	if n := c.get(notiz.ID, false); !strings.Contains(n.Content, "Siehe [[Vertrag 2027]].") || !strings.Contains(n.Content, "```\n[[Rahmenvertrag]]\n```") {
		t.Fatalf("code fences are not links: %q", n.Content)
	}
	if p := c.get(plain.ID, false); p.VersionToken != plain.VersionToken {
		t.Fatal("a note without a text link was rewritten")
	}
	for _, ref := range []string{"[[Rahmenvertrag]]", "[[vertrag 2027]]"} {
		if got := c.get(ref, false); got.ID != vertrag.ID {
			t.Fatalf("%s resolves to %s", ref, got.ID)
		}
	}
	// A new [[Rahmenvertrag]] still links the renamed note.
	if later := c.create(map[string]any{"project": "main", "body": "# Später\n\n[[Rahmenvertrag]]"}); !slices.Equal(later.Links, []string{"Rahmenvertrag"}) {
		t.Fatalf("old title no longer links: %+v", later)
	}
	// The new title taken in the folder: 409.
	other := c.create(map[string]any{"project": "main", "path": "Verträge", "body": "# Anhang\n\nx"})
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": other.ID, "versionToken": other.VersionToken, "title": "vertrag 2027"}), codeConflict, "")

	// Move: id, title and links stay; the folder's title rule holds; bad paths name path.
	var moved MoveNoteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": vertrag.ID, "versionToken": ren.VersionToken, "path": "Archiv/2027"}), &moved)
	if moved.ID != vertrag.ID || moved.Path != "Archiv/2027" || moved.VersionToken == ren.VersionToken {
		t.Fatalf("move = %+v", moved)
	}
	if l := c.listNotes(map[string]any{"project": "main", "path": "Archiv/2027"}); len(l.Notes) != 1 || l.Notes[0].ID != vertrag.ID {
		t.Fatalf("Archiv/2027 = %+v", l)
	}
	if l := c.listNotes(map[string]any{"project": "main", "path": "Verträge"}); len(l.Notes) != 1 || l.Notes[0].ID != other.ID {
		t.Fatalf("Verträge after the move = %+v", l)
	}
	if got := c.get("[[Rahmenvertrag]]", true); got.ID != vertrag.ID || got.Path != "Archiv/2027" || len(got.Links.In) < 3 {
		t.Fatalf("after the move: %+v", got)
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": vertrag.ID, "versionToken": ren.VersionToken, "path": ""}), codeConflict, "")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": vertrag.ID, "versionToken": moved.VersionToken, "path": "../x"}), jsonrpc.CodeInvalidParams, "path")
	dupe := c.create(map[string]any{"project": "main", "body": "# Vertrag 2027\n\nDoppelt im Wurzelordner."})
	r := callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": vertrag.ID, "versionToken": moved.VersionToken, "path": ""})
	wantRPCError(t, r, codeConflict, "")
	if !strings.Contains(r.Error.Message, dupe.ID) {
		t.Fatalf("409 %q must name %s", r.Error.Message, dupe.ID)
	}
	structured(t, callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": kunde.ID, "versionToken": c.get(kunde.ID, false).VersionToken, "path": ""}), &moved)
	if root := c.listNotes(map[string]any{"project": "main"}); !slices.ContainsFunc(root.Notes, func(n knowmind.NoteSummary) bool { return n.ID == kunde.ID }) {
		t.Fatalf("moved to the root: %+v", root)
	}
}

// TestNotesRenameAllOrNothingUnderEdits: a rename racing with edits of a referring note never
// leaves a half state: when it succeeds the referrer links the new title, and no edit based on
// the old body overwrote the rewrite (its token went stale, 409).
func TestNotesRenameAllOrNothingUnderEdits(t *testing.T) {
	c := newNotesClient(t)
	target := c.create(map[string]any{"project": "main", "body": "# Ziel\n\nx"})
	ref := c.create(map[string]any{"project": "main", "body": "# Verweis\n\n[[Ziel]]"})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 6 {
			cur := c.get(ref.ID, false)
			callTool(t, c.url, c.write, "knowmind_edit_note", map[string]any{"id": ref.ID, "versionToken": cur.VersionToken,
				"op": "append", "content": fmt.Sprintf("Zeile %d.", i)})
		}
	}()
	r := callTool(t, c.url, c.write, "knowmind_rename_note", map[string]any{"id": target.ID, "versionToken": target.VersionToken, "title": "Neues Ziel"})
	wg.Wait()
	got := c.get(ref.ID, false).Content
	switch {
	case r.Error == nil:
		if !strings.Contains(got, "[[Neues Ziel]]") || strings.Contains(got, "[[Ziel]]") {
			t.Fatalf("rename succeeded but the referrer reads:\n%s", got)
		}
	case r.Error.Code == codeConflict:
		if c.get(target.ID, false).Title != "Ziel" {
			t.Fatal("a refused rename renamed the note")
		}
	default:
		t.Fatalf("rename: %+v", r.Error)
	}
}

// TestNotesMoveFolderKeepsIDs: a folder moves with its subfolders in one step (ids, titles and
// links stay), a sibling with the same prefix stays, a taken title moves nothing.
func TestNotesMoveFolderKeepsIDs(t *testing.T) {
	c := newNotesClient(t)
	eins := c.create(map[string]any{"project": "main", "path": "Kunden/Alt", "body": "# Alt Eins\n\nx"})
	zwei := c.create(map[string]any{"project": "main", "path": "Kunden/Alt", "body": "# Alt Zwei\n\nx"})
	sub := c.create(map[string]any{"project": "main", "path": "Kunden/Alt/Sub", "body": "# Alt Sub\n\nx"})
	bau := c.create(map[string]any{"project": "main", "path": "Kunden/Altbau", "body": "# Altbau\n\nx"})
	c.create(map[string]any{"project": "main", "body": "# Index\n\n[[Alt Eins]]"})
	move := func(args map[string]any) MoveFolderResult {
		t.Helper()
		args["project"] = "main"
		var res MoveFolderResult
		structured(t, callTool(t, c.url, c.write, "knowmind_move_folder", args), &res)
		return res
	}
	res := move(map[string]any{"from": "Kunden/Alt", "to": "Archiv/Kunden"})
	slices.Sort(res.IDs)
	want := []string{eins.ID, zwei.ID, sub.ID}
	slices.Sort(want)
	if res.Moved != 3 || !slices.Equal(res.IDs, want) {
		t.Fatalf("move_folder = %+v, want %v", res, want)
	}
	l := c.listNotes(map[string]any{"project": "main", "path": "Archiv/Kunden"})
	if len(l.Notes) != 2 || l.Notes[0].ID != eins.ID || !slices.Equal(l.Folders, []knowmind.ValueCount{{Value: "Sub", Count: 1}}) {
		t.Fatalf("Archiv/Kunden = %+v", l)
	}
	if k := c.listNotes(map[string]any{"project": "main", "path": "Kunden"}); !slices.Equal(k.Folders, []knowmind.ValueCount{{Value: "Altbau", Count: 1}}) {
		t.Fatalf("Kunden after the move = %+v", k)
	}
	if got := c.get("[[Alt Eins]]", true); got.ID != eins.ID || got.Path != "Archiv/Kunden" || len(got.Links.In) != 1 {
		t.Fatalf("[[Alt Eins]] after the move: %+v", got)
	}
	if got := c.get(bau.ID, false); got.Path != "Kunden/Altbau" {
		t.Fatalf("a sibling with the same prefix moved: %+v", got)
	}

	// Rename = move to a sibling path; to the root drops the path.
	if res := move(map[string]any{"from": "Archiv/Kunden/Sub", "to": "Archiv/Kunden/Unter"}); res.Moved != 1 || c.get(sub.ID, false).Path != "Archiv/Kunden/Unter" {
		t.Fatalf("rename folder = %+v", res)
	}
	if res := move(map[string]any{"from": "Archiv/Kunden/Unter", "to": ""}); res.Moved != 1 {
		t.Fatalf("move to root = %+v", res)
	}
	if root := c.listNotes(map[string]any{"project": "main"}); !slices.ContainsFunc(root.Notes, func(n knowmind.NoteSummary) bool { return n.ID == sub.ID }) {
		t.Fatalf("root after moving Unter there: %+v", root)
	}

	// A title taken at the target: 409, nothing moved.
	c.create(map[string]any{"project": "main", "path": "Ziel", "body": "# Alt Zwei\n\nschon da"})
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_move_folder", map[string]any{"project": "main", "from": "Archiv/Kunden", "to": "Ziel"}), codeConflict, "")
	if got := c.get(eins.ID, false); got.Path != "Archiv/Kunden" {
		t.Fatalf("a refused folder move moved %+v", got)
	}
	for _, tc := range []struct {
		args  map[string]any
		code  int64
		param string
	}{
		{map[string]any{"from": "", "to": "x"}, jsonrpc.CodeInvalidParams, "from"},
		{map[string]any{"from": "Archiv", "to": "Archiv/Kunden/X"}, jsonrpc.CodeInvalidParams, "to"},
		{map[string]any{"from": "Archiv", "to": "../x"}, jsonrpc.CodeInvalidParams, "to"},
		{map[string]any{"from": "Fehlt", "to": "x"}, codeNotFound, ""},
	} {
		tc.args["project"] = "main"
		wantRPCError(t, callTool(t, c.url, c.write, "knowmind_move_folder", tc.args), tc.code, tc.param)
	}
}
