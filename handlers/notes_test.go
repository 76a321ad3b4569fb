package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// notesClient calls the notes tools through the MCP endpoint as one tenant's agent.
type notesClient struct {
	t           *testing.T
	tenant      string
	url         string
	read, write string
}

func newNotesClient(t *testing.T) *notesClient {
	srv := newTestServer(t, nil)
	tenant := dgraphtest.TenantName(t)
	return &notesClient{t: t, tenant: tenant, url: srv.URL + "/api/mcp/v1",
		write: newToken(t, tenant, knowmind.ScopeWrite), read: newToken(t, tenant, knowmind.ScopeRead)}
}

func (c *notesClient) create(args map[string]any) knowmind.NoteWriteResult {
	c.t.Helper()
	var res knowmind.NoteWriteResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_create_note", args), &res)
	return res
}

func (c *notesClient) get(id string, detailed bool) GetNoteResult {
	c.t.Helper()
	var n GetNoteResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_get_note", map[string]any{"id": id, "detailed": detailed}), &n)
	return n
}

func (c *notesClient) edit(args map[string]any) knowmind.NoteWriteResult {
	c.t.Helper()
	var res knowmind.NoteWriteResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_edit_note", args), &res)
	return res
}

func (c *notesClient) search(token string, args map[string]any) []string {
	c.t.Helper()
	var res SearchResult
	structured(c.t, callTool(c.t, c.url, token, "knowmind_search", args), &res)
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func (c *notesClient) recallIDs(query string) []string {
	c.t.Helper()
	var res knowmind.RecallResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_recall", map[string]any{"query": query, "k": 25}), &res)
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.MemoryID)
	}
	return ids
}

// TestNotesLifecycle walks the "done when" path through the MCP endpoint: create → get →
// every edit operation → stale token → forward link resolved → search and context in German and
// English → delete → gone from search and recall → restore (the CLI's graph call) → back.
func TestNotesLifecycle(t *testing.T) {
	c := newNotesClient(t)
	ctx := context.Background()

	kunde := c.create(map[string]any{"project": "main", "path": "Kunden/Müller",
		"body": "---\ntype: kunde\ntags: [crm]\nowner: anna\n---\n# Kundenakte Müller\n\nDie Müller GmbH fertigt Zahnräder in Detmold; siehe [[Rahmenvertrag]].\n\n## Termine\n\n- 12. März Workshop\n\n## Offene Punkte\n\nAngebot prüfen."})
	if kunde.ID == "" || kunde.Title != "Kundenakte Müller" || kunde.Path != "Kunden/Müller" || kunde.Class != knowmind.ClassUserDoc ||
		kunde.VersionToken == "" || !slices.Equal(kunde.PendingLinks, []string{"Rahmenvertrag"}) || len(kunde.Links) != 0 {
		t.Fatalf("create = %+v", kunde)
	}
	n := c.get(kunde.ID, false)
	if n.Title != "Kundenakte Müller" || !strings.HasPrefix(n.Content, "# Kundenakte Müller") || n.Frontmatter["owner"] != "anna" ||
		n.Type != "kunde" || !slices.Equal(n.Tags, []string{"crm"}) || n.VersionToken != kunde.VersionToken || n.Project != "main" ||
		n.Provenance.CreatedVia != "knowmind_create_note" || n.Provenance.ActorKind != "agent" || !strings.HasPrefix(n.Provenance.CreatedBy, "tok:") {
		t.Fatalf("get = %+v", n)
	}
	byRef := c.get("[[kundenakte müller]]", false)
	if byRef.ID != kunde.ID {
		t.Fatalf("wiki ref resolved to %q, want %q", byRef.ID, kunde.ID)
	}

	// Every edit operation, each with the token the previous one returned.
	token := kunde.VersionToken
	ops := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"op": "append", "content": "Nachtrag: Lieferung im Mai."}, "Angebot prüfen.\n\nNachtrag: Lieferung im Mai."},
		{map[string]any{"op": "prepend", "content": "Stand: April."}, "# Kundenakte Müller\n\nStand: April.\n\nDie Müller GmbH"},
		{map[string]any{"op": "replaceSection", "heading": "Termine", "content": "- 20. April Audit"}, "## Termine\n\n- 20. April Audit\n\n## Offene Punkte"},
		{map[string]any{"op": "findReplace", "find": "Angebot prüfen.", "content": "Angebot angenommen."}, "Angebot angenommen."},
		{map[string]any{"op": "findReplace", "find": "Stand: April.\n\n", "content": ""}, "# Kundenakte Müller\n\nDie Müller GmbH"},
	}
	for i, op := range ops {
		op.args["id"], op.args["versionToken"] = kunde.ID, token
		res := c.edit(op.args)
		if res.VersionToken == token || res.Revision != i+2 {
			t.Fatalf("%s: result %+v: want a new token, revision %d", op.args["op"], res, i+2)
		}
		token = res.VersionToken
		if got := c.get(kunde.ID, false).Content; !strings.Contains(got, op.want) {
			t.Fatalf("%s: content lacks %q:\n%s", op.args["op"], op.want, got)
		}
	}
	// A stale token: versionConflict with the current token, nothing overwritten.
	r := callTool(t, c.url, c.write, "knowmind_edit_note", map[string]any{"id": kunde.ID, "versionToken": kunde.VersionToken,
		"op": "replace", "content": "# Kundenakte Müller\n\nÜberschrieben."})
	wantRPCError(t, r, codeConflict, "")
	var conflict struct {
		VersionConflict     bool   `json:"versionConflict"`
		CurrentVersionToken string `json:"currentVersionToken"`
	}
	if json.Unmarshal(r.Error.Data, &conflict) != nil || !conflict.VersionConflict || conflict.CurrentVersionToken != token {
		t.Fatalf("conflict data %s: want versionConflict and the current token %s", r.Error.Data, token)
	}
	if strings.Contains(c.get(kunde.ID, false).Content, "Überschrieben") {
		t.Fatal("a stale edit overwrote the note")
	}
	// Bad edits name their parameter.
	for _, tc := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"op": "findReplace", "find": "kommt nicht vor", "content": "x"}, "find"},
		{map[string]any{"op": "findReplace", "find": "e", "content": "x"}, "find"},
		{map[string]any{"op": "replaceSection", "heading": "Fehlt", "content": "x"}, "heading"},
		{map[string]any{"op": "insert", "content": "x"}, "op"},
	} {
		tc.args["id"], tc.args["versionToken"] = kunde.ID, token
		wantRPCError(t, callTool(t, c.url, c.write, "knowmind_edit_note", tc.args), jsonrpc.CodeInvalidParams, tc.param)
	}

	// The forward reference resolves when its title appears.
	vertrag := c.create(map[string]any{"project": "main", "path": "Verträge",
		"body": "# Rahmenvertrag\n\nThe framework contract runs until the end of 2027; the notice period is three months. Gilt für [[Kundenakte Müller]]."})
	if !slices.Equal(vertrag.Links, []string{"Kundenakte Müller"}) {
		t.Fatalf("backlink from the new note: %+v", vertrag)
	}
	d := c.get(kunde.ID, true)
	if len(d.Links.Pending) != 0 || !slices.ContainsFunc(d.Links.Out, func(l knowmind.NoteLink) bool {
		return l.RelType == "REFERENCES" && l.ID == vertrag.ID
	}) || !slices.ContainsFunc(d.Links.In, func(l knowmind.NoteLink) bool { return l.ID == vertrag.ID }) {
		t.Fatalf("links after the target was created: %+v", d.Links)
	}
	if len(d.Revisions) != 5 || d.Revisions[0].Revision != 5 || d.Revisions[4].VersionToken != kunde.VersionToken ||
		len(d.Outline) != 3 || d.Outline[1].Text != "Termine" {
		t.Fatalf("detailed: %d revisions %+v, outline %+v", len(d.Revisions), d.Revisions, d.Outline)
	}
	revs, err := tenantOf(t, c.tenant).Revisions(ctx, knowmind.NoteScope{}, kunde.ID)
	if err != nil || !strings.Contains(revs[4].Content, "Angebot prüfen.") || strings.Contains(revs[4].Content, "Nachtrag") {
		t.Fatalf("first revision keeps the first body: %v %+v", err, revs)
	}

	// A second note with the same title in the same folder: 409 naming the existing one.
	r = callTool(t, c.url, c.write, "knowmind_create_note", map[string]any{"project": "main", "path": "Verträge", "body": "# rahmenvertrag\n\nDoppelt."})
	wantRPCError(t, r, codeConflict, "")
	if !strings.Contains(r.Error.Message, vertrag.ID) {
		t.Fatalf("409 %q must name %s", r.Error.Message, vertrag.ID)
	}

	// Search and context by German and English words; snippets with path and score.
	var sr SearchResult
	structured(t, callTool(t, c.url, c.read, "knowmind_search", map[string]any{"query": "Zahnräder Detmold"}), &sr)
	if len(sr.Hits) == 0 || sr.Hits[0].ID != kunde.ID || sr.Hits[0].Path != "Kunden/Müller" || sr.Hits[0].Score <= 0 || sr.Hits[0].Snippet == "" {
		t.Fatalf("German search: %+v", sr)
	}
	if ids := c.search(c.read, map[string]any{"query": "notice period framework contract"}); len(ids) == 0 || ids[0] != vertrag.ID {
		t.Fatalf("English search: %v, want %s first", ids, vertrag.ID)
	}
	if ids := c.search(c.read, map[string]any{"query": "Zahnräder Detmold", "path": "Verträge"}); slices.Contains(ids, kunde.ID) {
		t.Fatalf("path filter: %v", ids)
	}
	if ids := c.search(c.read, map[string]any{"query": "Zahnräder Detmold", "tag": "crm"}); !slices.Contains(ids, kunde.ID) {
		t.Fatalf("tag filter: %v", ids)
	}
	var bundle ContextResult
	structured(t, callTool(t, c.url, c.read, "knowmind_context", map[string]any{"query": "notice period of the contract", "budgetTokens": 100}), &bundle)
	if len(bundle.Items) == 0 || bundle.Items[0].ID != vertrag.ID || bundle.TokensUsed > 100 || bundle.TokensUsed == 0 || bundle.BudgetTokens != 100 {
		t.Fatalf("context bundle: %+v", bundle)
	}
	structured(t, callTool(t, c.url, c.read, "knowmind_context", map[string]any{"query": "Kündigungsfrist Rahmenvertrag Müller"}), &bundle)
	if !slices.ContainsFunc(bundle.Items, func(i knowmind.ContextItem) bool { return i.ID == kunde.ID }) {
		t.Fatalf("context bundle must hold the linked neighbour: %+v", bundle)
	}

	// Delete: gone from get, search and recall; restore: back.
	var del DeleteNoteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_delete_note", map[string]any{"id": kunde.ID}), &del)
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_get_note", map[string]any{"id": kunde.ID}), codeNotFound, "")
	if ids := c.search(c.read, map[string]any{"query": "Zahnräder Detmold"}); slices.Contains(ids, kunde.ID) {
		t.Fatalf("search after delete: %v", ids)
	}
	if ids := c.recallIDs("Zahnräder Detmold Müller GmbH"); slices.Contains(ids, kunde.ID) {
		t.Fatalf("recall after delete: %v", ids)
	}
	trash, err := tenantOf(t, c.tenant).ListTrash(ctx)
	if err != nil || len(trash) != 1 || trash[0].ID != kunde.ID || trash[0].Project != "main" {
		t.Fatalf("trash: %v %+v", err, trash)
	}
	if err := tenantOf(t, c.tenant).RestoreNote(ctx, kunde.ID, knowmind.Actor{Principal: "cli", Via: "knowmind trash restore", Human: true}); err != nil {
		t.Fatal(err)
	}
	if ids := c.search(c.read, map[string]any{"query": "Zahnräder Detmold"}); len(ids) == 0 || ids[0] != kunde.ID {
		t.Fatalf("search after restore: %v", ids)
	}
	if ids := c.recallIDs("Zahnräder Detmold Müller GmbH"); !slices.Contains(ids, kunde.ID) {
		t.Fatalf("recall after restore: %v", ids)
	}
	if got := c.get(kunde.ID, false); got.Provenance.ActorKind != "human" || got.Provenance.UpdatedVia != "knowmind trash restore" {
		t.Fatalf("provenance after restore: %+v", got.Provenance)
	}
}

// tenantOf is the graph session of a test tenant (for what only people do: the CLI's calls).
func tenantOf(t *testing.T, tenant string) *graph.Tenant {
	t.Helper()
	ten, err := dgraphtest.Shared(t).Client.Tenant(context.Background(), tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	return ten
}

func TestNotesBadInput(t *testing.T) {
	c := newNotesClient(t)
	body := "# Titel\n\nText."
	for _, tc := range []struct {
		name  string
		args  map[string]any
		code  int64
		param string
	}{
		{"unknown project", map[string]any{"project": "gibtsnicht", "body": body}, codeNotFound, ""},
		{"bad handle", map[string]any{"project": "Mit Leerzeichen", "body": body}, jsonrpc.CodeInvalidParams, "project"},
		{"dot-dot", map[string]any{"project": "main", "path": "Kunden/../x", "body": body}, jsonrpc.CodeInvalidParams, "path"},
		{"absolute", map[string]any{"project": "main", "path": "/etc", "body": body}, jsonrpc.CodeInvalidParams, "path"},
		{"control", map[string]any{"project": "main", "path": "a\x01b", "body": body}, jsonrpc.CodeInvalidParams, "path"},
		{"no title", map[string]any{"project": "main", "body": "Nur Text."}, jsonrpc.CodeInvalidParams, "body"},
		{"missing body", map[string]any{"project": "main"}, jsonrpc.CodeInvalidParams, "body"},
		{"link to nothing", map[string]any{"project": "main", "body": body, "links": []map[string]any{{"relType": "REFERENCES"}}}, jsonrpc.CodeInvalidParams, "links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, c.write, "knowmind_create_note", tc.args), tc.code, tc.param)
		})
	}
	wantReason(t, callTool(t, c.url, c.write, "knowmind_create_note", map[string]any{"project": "main",
		"body": "# Groß\n\n" + strings.Repeat("x", knowmind.MaxNoteBodyChars)}), knowmind.ReasonTooLarge)

	// Links never cross projects.
	if _, err := tenantOf(t, c.tenant).CreateProject(context.Background(), "kunden", "Kunden"); err != nil {
		t.Fatal(err)
	}
	a := c.create(map[string]any{"project": "main", "body": "# A\n\nText."})
	b := c.create(map[string]any{"project": "kunden", "body": "# B\n\nText."})
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link_note", map[string]any{"from": a.ID, "to": b.ID}), jsonrpc.CodeInvalidParams, "to")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link", map[string]any{"from_id": a.ID, "to_id": b.ID, "rel_type": "REFERENCES"}), jsonrpc.CodeInvalidParams, "to_id")
	// A wiki link to a title of another project stays pending instead.
	x := c.create(map[string]any{"project": "main", "body": "# X\n\nSiehe [[B]]."})
	if !slices.Equal(x.PendingLinks, []string{"B"}) {
		t.Fatalf("cross-project wiki link must not resolve: %+v", x)
	}
	var linked knowmind.NoteWriteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_link_note", map[string]any{"from": a.ID, "toTitle": "X", "relType": "RELATES_TO"}), &linked)
	if !slices.Equal(linked.Links, []string{"X"}) {
		t.Fatalf("link by title: %+v", linked)
	}
}

// TestNotesTokenScopes: a read token sees none of the write tools; a project-limited token
// reaches only its projects, and private memory is its own.
func TestNotesTokenScopes(t *testing.T) {
	c := newNotesClient(t)
	ctx := context.Background()
	writeTools := []string{"knowmind_create_note", "knowmind_edit_note", "knowmind_delete_note", "knowmind_link_note",
		"knowmind_remember_about_user", "knowmind_remember_about_project"}
	readNames := listTools(t, c.url, c.read)
	for _, w := range writeTools {
		if slices.Contains(readNames, w) {
			t.Fatalf("read token sees %s", w)
		}
	}
	if !hasAll(readNames, "knowmind_get_note", "knowmind_search", "knowmind_context", "knowmind_list_projects") ||
		!hasAll(listTools(t, c.url, c.write), writeTools...) {
		t.Fatalf("tools: read %v", readNames)
	}
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_create_note", map[string]any{"project": "main", "body": "# T"}), codeScope, "")

	if _, err := tenantOf(t, c.tenant).CreateProject(ctx, "kunden", "Kunden"); err != nil {
		t.Fatal(err)
	}
	secret, _, err := dgraphtest.Shared(t).Client.CreateProjectToken(ctx, c.tenant, []knowmind.Scope{knowmind.ScopeWrite}, []string{"kunden"}, "kunden-agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	mainNote := c.create(map[string]any{"project": "main", "body": "# Geheimplan\n\nDer Geheimplan für die Expansion nach Norden."})
	wantRPCError(t, callTool(t, c.url, secret, "knowmind_create_note", map[string]any{"project": "main", "body": "# T\n\nx"}), codeScope, "")
	wantRPCError(t, callTool(t, c.url, secret, "knowmind_get_note", map[string]any{"id": mainNote.ID}), codeNotFound, "")
	if ids := c.search(secret, map[string]any{"query": "Geheimplan Expansion Norden"}); len(ids) != 0 {
		t.Fatalf("project-limited token found %v", ids)
	}
	var projects ListProjectsResult
	structured(t, callTool(t, c.url, secret, "knowmind_list_projects", map[string]any{}), &projects)
	if len(projects.Projects) != 1 || projects.Projects[0].Handle != "kunden" {
		t.Fatalf("projects of the limited token: %+v", projects)
	}
	structured(t, callTool(t, c.url, c.read, "knowmind_list_projects", map[string]any{}), &projects)
	if len(projects.Projects) != 2 || projects.Projects[1].Handle != "main" || projects.Projects[1].Notes != 1 {
		t.Fatalf("projects: %+v", projects)
	}
	if _, _, err := dgraphtest.Shared(t).Client.CreateProjectToken(ctx, c.tenant, []knowmind.Scope{knowmind.ScopeRead}, []string{"nope"}, "", nil); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Fatalf("token for an unknown project: %v", err)
	}

	// Private memory: found by its own principal's search, by no one else's.
	var mem, profile knowmind.NoteWriteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_remember_about_user", map[string]any{"category": "Vorlieben", "observation": "Mag kurze Antworten auf Deutsch."}), &profile)
	structured(t, callTool(t, c.url, c.write, "knowmind_remember_about_user", map[string]any{"category": "Vorlieben", "observation": "Prefers tables over prose."}), &mem)
	if mem.Class != knowmind.ClassUserProfile || mem.Revision != 2 {
		t.Fatalf("second observation appends: %+v", mem)
	}
	structured(t, callTool(t, c.url, c.write, "knowmind_remember_about_project", map[string]any{"project": "main", "observation": "Das Team deployt freitags nie."}), &mem)
	if mem.Class != knowmind.ClassAgentMemory || mem.Project != "main" {
		t.Fatalf("project memory: %+v", mem)
	}
	other := newToken(t, c.tenant, knowmind.ScopeWrite)
	if ids := c.search(c.write, map[string]any{"query": "tables prose Antworten"}); len(ids) == 0 || ids[0] != profile.ID {
		t.Fatalf("own memory search: %v, want %s first", ids, profile.ID)
	}
	if ids := c.search(other, map[string]any{"query": "tables prose Antworten deployt freitags"}); slices.Contains(ids, profile.ID) || slices.Contains(ids, mem.ID) {
		t.Fatalf("another principal sees private memory: %v", ids)
	}
	if ids := c.recallIDs("tables prose Antworten deployt freitags"); slices.Contains(ids, profile.ID) || slices.Contains(ids, mem.ID) {
		t.Fatalf("knowmind_recall shows another principal's private memory: %v", ids)
	}
	wantRPCError(t, callTool(t, c.url, secret, "knowmind_list_relations", map[string]any{"memory_id": mainNote.ID}), codeNotFound, "")
	wantRPCError(t, callTool(t, c.url, secret, "knowmind_explore", map[string]any{"memory_id": mainNote.ID}), codeNotFound, "")
	var ex ExploreResult
	structured(t, callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": mainNote.ID}), &ex)
	if ex.Memory.ID != mainNote.ID {
		t.Fatalf("explore a visible note: %+v", ex.Memory)
	}
}

// TestEditNoteConcurrentSameToken: 20 edits with one token, exactly one wins.
func TestEditNoteConcurrentSameToken(t *testing.T) {
	c := newNotesClient(t)
	n := c.create(map[string]any{"project": "main", "body": "# Zähler\n\nStart."})
	var wins, conflicts, other int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := callTool(t, c.url, c.write, "knowmind_edit_note", map[string]any{"id": n.ID, "versionToken": n.VersionToken,
				"op": "append", "content": fmt.Sprintf("Edit %d.", i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Error == nil:
				wins++
			case r.Error.Code == codeConflict:
				conflicts++
			default:
				other++
			}
		}()
	}
	wg.Wait()
	got := c.get(n.ID, true)
	if wins != 1 || conflicts != 19 || other != 0 || got.Revision != 2 || len(got.Revisions) != 1 || strings.Count(got.Content, "Edit ") != 1 {
		t.Fatalf("wins %d conflicts %d other %d; note revision %d, %d revisions:\n%s", wins, conflicts, other, got.Revision, len(got.Revisions), got.Content)
	}
}

// deadEmbedder fails passages and queries: no vector is available at all.
type deadEmbedder struct{ graph.Embedder }

func (deadEmbedder) EmbedPassages(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("model server unreachable")
}

func (deadEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("model server unreachable")
}

// TestNotesWithoutVectors: with the embedder down a note is still written (its chunks without
// vectors), and search and the context bundle fall back to full text without error.
func TestNotesWithoutVectors(t *testing.T) {
	env := dgraphtest.Shared(t)
	dead, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: deadEmbedder{env.Embedder}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dead.Close)
	url := newTestServer(t, func(d *Deps) { d.Graph = dead }).URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write, read := newToken(t, tenant, knowmind.ScopeWrite), newToken(t, tenant, knowmind.ScopeRead)

	var n knowmind.NoteWriteResult
	structured(t, callTool(t, url, write, "knowmind_create_note", map[string]any{"project": "main",
		"body": "# Wartungsplan\n\nDie Kompressoren werden jeden zweiten Dienstag gewartet."}), &n)
	var sr SearchResult
	structured(t, callTool(t, url, read, "knowmind_search", map[string]any{"query": "Wann werden die Kompressoren gewartet?"}), &sr)
	if sr.Vector || len(sr.Hits) != 1 || sr.Hits[0].ID != n.ID {
		t.Fatalf("full-text fallback: %+v", sr)
	}
	var bundle ContextResult
	structured(t, callTool(t, url, read, "knowmind_context", map[string]any{"query": "Kompressoren Wartung"}), &bundle)
	if bundle.Vector || len(bundle.Items) != 1 || bundle.Items[0].ID != n.ID {
		t.Fatalf("context without vectors: %+v", bundle)
	}
}
