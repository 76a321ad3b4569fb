package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// End-to-end tests of knowmind_store_memory, knowmind_upload_document and
// knowmind_update_fact through the MCP endpoint against the real Dgraph.

func statsOf(t testing.TB, url, token string) StatsResult {
	t.Helper()
	var s StatsResult
	structured(t, callTool(t, url, token, "knowmind_stats", map[string]any{}), &s)
	return s
}

func recentOf(t testing.TB, url, token string) []knowmind.RecentItem {
	t.Helper()
	var r ListRecentResult
	structured(t, callTool(t, url, token, "knowmind_list_recent", map[string]any{"k": 50}), &r)
	return r.Items
}

func recentByID(items []knowmind.RecentItem, id string) (knowmind.RecentItem, bool) {
	i := slices.IndexFunc(items, func(it knowmind.RecentItem) bool { return it.ID == id })
	if i < 0 {
		return knowmind.RecentItem{}, false
	}
	return items[i], true
}

// memoryOf reads a memory straight from the graph (valid time, transaction
// time and content, which no read tool returns yet).
func memoryOf(t testing.TB, tenant, id string) knowmind.Memory {
	t.Helper()
	ctx := context.Background()
	ten, err := dgraphtest.Shared(t).Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ten.GetMemory(ctx, id)
	if err != nil {
		t.Fatalf("get memory %s: %v", id, err)
	}
	return m
}

// wantReason checks a -32603 error with data.reason.
func wantReason(t testing.TB, r reply, reason string) {
	t.Helper()
	wantRPCError(t, r, jsonrpc.CodeInternalError, "")
	var data struct{ Reason string }
	_ = json.Unmarshal(r.Error.Data, &data)
	if data.Reason != reason || r.Error.Message != reason {
		t.Fatalf("-32603 %q data %s: want reason %q", r.Error.Message, r.Error.Data, reason)
	}
}

// resultKeys are the top-level keys of a tool result's structuredContent.
func resultKeys(t testing.TB, r reply) []string {
	t.Helper()
	var res struct {
		StructuredContent map[string]json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range res.StructuredContent {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestStoreMemory(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	provider := dgraphtest.Shared(t).Embedder.Provider()

	// The spec's example request.
	args := map[string]any{
		"title":       "QM-Schulung Pflicht",
		"content":     "Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich.",
		"memory_type": "procedural",
		"tags":        []string{"qm", "schulung"},
		"source":      "internal-handbook",
	}
	r := callTool(t, url, write, "knowmind_store_memory", args)
	var first StoreMemoryResult
	structured(t, r, &first)
	if first.ID == "" || first.MemoryID != first.ID || first.Title != "QM-Schulung Pflicht" || first.Status != knowmind.StatusIndexed ||
		first.ChunksWritten != 1 || first.EmbeddingProvider != provider || first.Unchanged {
		t.Fatalf("store result %+v (provider %s)", first, provider)
	}
	// Exactly the spec's fields (unchanged only when true).
	if got, want := resultKeys(t, r), []string{"chunks_written", "embedding_provider", "id", "memory_id", "status", "title"}; !slices.Equal(got, want) {
		t.Errorf("result keys %v, want %v", got, want)
	}
	m := memoryOf(t, tenant, first.ID)
	if m.Kind != knowmind.KindMemory || m.MemoryType != "procedural" || !slices.Equal(m.Tags, []string{"qm", "schulung"}) ||
		m.Source != "internal-handbook" || m.Content != args["content"] || m.Chunks != 1 || m.ValidTo != nil {
		t.Errorf("stored memory %+v", m)
	}

	// Same content again: the same memory, unchanged, nothing written.
	var again StoreMemoryResult
	r = callTool(t, url, write, "knowmind_store_memory", args)
	structured(t, r, &again)
	if again.ID != first.ID || again.MemoryID != first.ID || !again.Unchanged || again.Status != knowmind.StatusIndexed {
		t.Errorf("second store %+v, want id %s unchanged", again, first.ID)
	}
	if !strings.Contains(structuredText(t, r), `"unchanged":true`) {
		t.Errorf("unchanged not in the text block: %s", structuredText(t, r))
	}

	// Append-only: the same title with other content is another memory;
	// memory_type defaults to semantic.
	var other StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"title": "QM-Schulung Pflicht", "content": "Die QM-Schulung findet ab 2027 halbjährlich statt."}), &other)
	if other.ID == first.ID || other.Unchanged {
		t.Errorf("same title, other content: %+v, want a new memory", other)
	}
	if mt := memoryOf(t, tenant, other.ID).MemoryType; mt != knowmind.MemorySemantic {
		t.Errorf("default memory_type %q, want semantic", mt)
	}

	// Both are found by list_recent (newest first) and counted by stats.
	items := recentOf(t, url, read)
	if len(items) != 2 || items[0].ID != other.ID || items[1].ID != first.ID || items[1].Status != knowmind.StatusIndexed ||
		items[1].IndexedChunks != 1 || items[1].Kind != knowmind.KindMemory {
		t.Errorf("list_recent %+v", items)
	}
	if s := statsOf(t, url, read); s.Memories != 2 || s.Chunks != 2 {
		t.Errorf("stats %+v, want 2 memories, 2 chunks", s)
	}
}

// Every parameter rule of store_memory and upload_document, and that a
// refused call writes nothing.
func TestStoreAndUploadParamErrors(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	// One existing memory, so "nothing written" is checked against a
	// non-empty store.
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{"content": "Vorhanden."}), &StoreMemoryResult{})
	statsBefore, recentBefore := statsOf(t, url, read), recentOf(t, url, read)

	// 1,000,001 characters, two bytes each: the limit counts characters.
	tooLarge := strings.Repeat("ä", knowmind.MaxContentChars+1)
	for _, tool := range []string{"knowmind_store_memory", "knowmind_upload_document"} {
		for name, tc := range map[string]struct {
			args   map[string]any
			reason string
		}{
			"missing content": {map[string]any{"title": "x"}, knowmind.ReasonContentRequired},
			"null content":    {map[string]any{"title": "x", "content": nil}, knowmind.ReasonContentRequired},
			"empty content":   {map[string]any{"content": ""}, knowmind.ReasonContentRequired},
			"blank content":   {map[string]any{"content": " \n\t "}, knowmind.ReasonContentRequired},
			"1,000,001 chars": {map[string]any{"title": "big", "content": tooLarge}, knowmind.ReasonTooLarge},
		} {
			t.Run(tool+"/"+name, func(t *testing.T) {
				wantReason(t, callTool(t, url, write, tool, tc.args), tc.reason)
			})
		}
	}

	for name, tc := range map[string]struct {
		tool  string
		args  map[string]any
		param string
	}{
		"bad memory_type":        {"knowmind_store_memory", map[string]any{"content": "x", "memory_type": "factual"}, "memory_type"},
		"upper-case memory_type": {"knowmind_store_memory", map[string]any{"content": "x", "memory_type": "Semantic"}, "memory_type"},
		"memory_type not string": {"knowmind_store_memory", map[string]any{"content": "x", "memory_type": 1}, "memory_type"},
		"tags not an array":      {"knowmind_store_memory", map[string]any{"content": "x", "tags": "qm"}, "tags"},
		"blank tag":              {"knowmind_store_memory", map[string]any{"content": "x", "tags": []string{"qm", " "}}, "tags[1]"},
		"51 tags":                {"knowmind_store_memory", map[string]any{"content": "x", "tags": make([]string, 51)}, "tags"},
		"title too long":         {"knowmind_store_memory", map[string]any{"content": "x", "title": strings.Repeat("t", 501)}, "title"},
		"content not a string":   {"knowmind_store_memory", map[string]any{"content": 42}, "content"},
		"unknown parameter":      {"knowmind_store_memory", map[string]any{"content": "x", "tenant": "other"}, "tenant"},
		"upload memory_type":     {"knowmind_upload_document", map[string]any{"content": "x", "memory_type": "semantic"}, "memory_type"},
		"upload source too long": {"knowmind_upload_document", map[string]any{"content": "x", "source": strings.Repeat("s", 2001)}, "source"},
		"upload title not str":   {"knowmind_upload_document", map[string]any{"content": "x", "title": []string{"a"}}, "title"},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, url, write, tc.tool, tc.args), jsonrpc.CodeInvalidParams, tc.param)
		})
	}

	// A read token may not ingest: -32002, before the arguments are looked at.
	for _, tool := range []string{"knowmind_store_memory", "knowmind_upload_document"} {
		r := callTool(t, url, read, tool, map[string]any{"content": "x"})
		wantRPCError(t, r, codeScope, "")
		if r.Error.Message != "scope write missing" {
			t.Errorf("%s: message %q", tool, r.Error.Message)
		}
		wantRPCError(t, callTool(t, url, read, tool, map[string]any{}), codeScope, "")
	}
	names := listTools(t, url, read)
	if slices.Contains(names, "knowmind_store_memory") || slices.Contains(names, "knowmind_upload_document") || slices.Contains(names, "knowmind_update_fact") {
		t.Errorf("a read token sees write tools: %v", names)
	}
	if names := listTools(t, url, write); !hasAll(names, "knowmind_store_memory", "knowmind_upload_document", "knowmind_update_fact") {
		t.Errorf("a write token sees %v", names)
	}

	if s := statsOf(t, url, read); s != statsBefore {
		t.Errorf("refused calls wrote something: stats %+v, before %+v", s, statsBefore)
	}
	if r := recentOf(t, url, read); !slices.EqualFunc(r, recentBefore, func(a, b knowmind.RecentItem) bool { return a.ID == b.ID }) {
		t.Errorf("refused calls wrote something: list_recent %+v, before %+v", r, recentBefore)
	}
}

// The input schemas say what the tools accept: content required and bounded
// (its absence and excess are still -32603 content_required / too_large:
// the precheck answers them before any -32602 or SDK schema check),
// memory_type an enum, update_fact's three fields required.
func TestIngestInputSchemas(t *testing.T) {
	store, err := newParamsCodec[StoreMemoryParams]()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(store.schema.Required, []string{"content"}) || len(store.required) != 0 {
		t.Errorf("store_memory required %v (checked as -32602: %v), want content, checked by the precheck", store.schema.Required, store.required)
	}
	if mt := store.schema.Properties["memory_type"]; mt == nil ||
		!slices.Equal(mt.Enum, []any{"semantic", "episodic", "procedural", "reference"}) {
		t.Errorf("memory_type schema %+v", mt)
	}
	if c := store.schema.Properties["content"]; c == nil || c.Type != "string" || c.MaxLength == nil || *c.MaxLength != knowmind.MaxContentChars {
		t.Errorf("content schema %+v: want a string of at most %d characters", c, knowmind.MaxContentChars)
	}
	upload, err := newParamsCodec[UploadDocumentParams]()
	if err != nil || !slices.Equal(upload.schema.Required, []string{"content"}) || len(upload.required) != 0 {
		t.Errorf("upload_document required %v (%v)", upload.schema.Required, err)
	}
	update, err := newParamsCodec[UpdateFactParams]()
	if err != nil || !slices.Equal(update.schema.Required, []string{"target_id", "new_title", "new_content"}) {
		t.Errorf("update_fact required %v (%v)", update.schema.Required, err)
	}
}

// tryCallTool is callTool for other goroutines: it reports failures as an
// error instead of stopping the test.
func tryCallTool(url, token, name string, args any) (reply, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return reply{}, err
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return r, fmt.Errorf("HTTP %d %s: %w", resp.StatusCode, data, err)
	}
	r.Result, r.Error = msg.Result, msg.Error
	return r, nil
}

// 20 identical stores at once make exactly one memory; every answer names
// it, one as new and 19 as unchanged.
func TestStoreMemoryConcurrentIdenticalStores(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	args := map[string]any{"title": "Tarif Business", "content": "Der Tarif Business umfasst fünf Plätze und Telefon-Support.", "tags": []string{"tarif"}}

	const n = 20
	replies := make([]reply, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i], errs[i] = tryCallTool(url, write, "knowmind_store_memory", args)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	unchanged := 0
	for _, r := range replies {
		var res StoreMemoryResult
		structured(t, r, &res)
		ids[res.ID]++
		if res.Unchanged {
			unchanged++
		}
		if res.Status != knowmind.StatusIndexed || res.MemoryID != res.ID {
			t.Errorf("answer %+v", res)
		}
	}
	if len(ids) != 1 || unchanged != n-1 {
		t.Errorf("ids %v, %d unchanged; want one id, %d unchanged", ids, unchanged, n-1)
	}
	if s := statsOf(t, url, write); s.Memories != 1 || s.Chunks != 1 {
		t.Errorf("stats %+v, want exactly one memory with one chunk", s)
	}
}

const handbookV1 = `# Einarbeitungs-Handbuch

## Kapitel 1 — Onboarding-Ablauf

Am ersten Tag erhalten neue Mitarbeitende Laptop, Zugänge und einen Paten.

## Kapitel 2 — QM-Schulung

Die QM-Schulung ist jährlich Pflicht für alle Service-Mitarbeitenden.

## Kapitel 3 — Urlaub

Urlaub wird im Personalportal beantragt, spätestens vier Wochen vorher.
`

const handbookV2 = `# Einarbeitungs-Handbuch

## Kapitel 1 — Onboarding-Ablauf

Am ersten Tag erhalten neue Mitarbeitende Laptop und Zugänge; der Pate wird in der ersten Woche bestimmt.

## Kapitel 2 — Urlaub

Urlaub wird im Personalportal beantragt.
`

// upload_document upserts per title: the new version replaces the old one,
// whose id is returned and whose chunks are gone.
func TestUploadDocumentUpsertPerTitle(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	provider := dgraphtest.Shared(t).Embedder.Provider()
	const title = "Einarbeitungs-Handbuch v3"

	var v1 UploadDocumentResult
	r := callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": title, "content": handbookV1, "source": "internal-handbook-v3.md"})
	structured(t, r, &v1)
	if v1.ID == "" || v1.MemoryID != v1.ID || v1.Title != title || v1.Status != knowmind.StatusIndexed || v1.ChunksWritten < 3 ||
		v1.EmbeddingProvider != provider || len(v1.ReplacedDocumentIDs) != 0 || v1.Unchanged {
		t.Fatalf("first upload %+v", v1)
	}
	if !strings.Contains(structuredText(t, r), `"replaced_document_ids":[]`) {
		t.Errorf("replaced_document_ids must be an array: %s", structuredText(t, r))
	}
	if got, want := resultKeys(t, r), []string{"chunks_written", "embedding_provider", "id", "memory_id", "replaced_document_ids", "status", "title"}; !slices.Equal(got, want) {
		t.Errorf("result keys %v, want %v", got, want)
	}
	if m := memoryOf(t, tenant, v1.ID); m.Kind != knowmind.KindDocument || m.Source != "internal-handbook-v3.md" || m.Chunks != v1.ChunksWritten {
		t.Errorf("stored document %+v", m)
	}
	// Another document under another title, which the upsert must not touch.
	var other UploadDocumentResult
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": "Preisliste", "content": "Tarif Business: 49 Euro im Monat."}), &other)
	if s := statsOf(t, url, read); s.Memories != 2 || s.Chunks != int64(v1.ChunksWritten+other.ChunksWritten) {
		t.Fatalf("stats after two uploads %+v, want 2 memories, %d chunks", s, v1.ChunksWritten+other.ChunksWritten)
	}

	// Same title and content: the current document, unchanged.
	var same UploadDocumentResult
	r = callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": title, "content": handbookV1})
	structured(t, r, &same)
	if same.ID != v1.ID || !same.Unchanged || same.ReplacedDocumentIDs == nil || len(same.ReplacedDocumentIDs) != 0 {
		t.Errorf("identical upload %+v, want id %s unchanged", same, v1.ID)
	}

	// New content under the title replaces v1.
	var v2 UploadDocumentResult
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": title, "content": handbookV2}), &v2)
	if v2.ID == v1.ID || v2.Status != knowmind.StatusIndexed || !slices.Equal(v2.ReplacedDocumentIDs, []string{v1.ID}) || v2.Unchanged {
		t.Fatalf("re-upload %+v, want replaced [%s]", v2, v1.ID)
	}
	if s := statsOf(t, url, read); s.Memories != 2 || s.Chunks != int64(v2.ChunksWritten+other.ChunksWritten) {
		t.Errorf("stats after re-upload %+v, want 2 memories and %d chunks (v1's %d gone)", s,
			v2.ChunksWritten+other.ChunksWritten, v1.ChunksWritten)
	}
	items := recentOf(t, url, read)
	if _, ok := recentByID(items, v1.ID); ok || len(items) != 2 {
		t.Errorf("list_recent after re-upload %+v: v1 must have left it", items)
	}
	if it, ok := recentByID(items, v2.ID); !ok || it.IndexedChunks != v2.ChunksWritten || it.Kind != knowmind.KindDocument {
		t.Errorf("list_recent entry of v2: %+v", it)
	}
	// Closed, not erased: v1 is the version v2 supersedes.
	rel, _ := relationsOf(t, url, read, v1.ID)
	if len(rel.Incoming) != 1 || rel.Incoming[0].RelType != graph.RelSupersedes || rel.Incoming[0].From != v2.ID {
		t.Errorf("v1's relations after the re-upload %+v, want SUPERSEDES from v2", rel)
	}
}

// The update chain v1 → v2 → v3: valid time closes and opens at the same
// instant, each version keeps its transaction time, SUPERSEDES edges link
// new to old, and the superseded v1 cannot be updated again.
// TestUpdateFactTool is knowmind_update_fact end to end through MCP: two updates, the result's
// keys, the history as list_relations shows it, a fork refused with -32002 naming the current
// version. What the versions hold (valid and transaction time, texts, edges) is
// graph's TestUpdateFactChain.
func TestUpdateFactTool(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)

	var v1 StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"title": "Anschrift Müller GmbH", "content": "Müller GmbH, Bahnhofstraße 1, 32756 Detmold.",
		"memory_type": "reference", "tags": []string{"kunde"}}), &v1)

	update := func(target, title, content, reason string) UpdateFactResult {
		t.Helper()
		var res UpdateFactResult
		r := callTool(t, url, write, "knowmind_update_fact", map[string]any{
			"target_id": target, "new_title": title, "new_content": content, "update_reason": reason})
		structured(t, r, &res)
		if got, want := resultKeys(t, r), []string{"new_memory_id", "old_memory_id", "supersedes_edge"}; !slices.Equal(got, want) {
			t.Errorf("result keys %v, want %v", got, want)
		}
		if res.OldMemoryID != target || res.NewMemoryID == "" || res.NewMemoryID == target ||
			res.SupersedesEdge != graph.EdgeID(res.NewMemoryID, graph.RelSupersedes, target) {
			t.Fatalf("update of %s: %+v", target, res)
		}
		return res
	}
	u2 := update(v1.ID, "Anschrift Müller GmbH ab 01.06.2026", "Müller GmbH, Industriestraße 7, 32756 Detmold.", "Adresse geändert zum 01.06.2026")
	u3 := update(u2.NewMemoryID, "Anschrift Müller GmbH ab 01.01.2027", "Müller GmbH, Hafenweg 3, 32756 Detmold.", "erneut umgezogen")

	// The SUPERSEDES edges, as list_relations shows them.
	rel, _ := relationsOf(t, url, read, u2.NewMemoryID)
	if len(rel.Outgoing) != 1 || rel.Outgoing[0].RelType != graph.RelSupersedes || rel.Outgoing[0].To != v1.ID ||
		rel.Outgoing[0].EdgeID != u2.SupersedesEdge {
		t.Errorf("v2 outgoing %+v, want SUPERSEDES %s (%s)", rel.Outgoing, v1.ID, u2.SupersedesEdge)
	}
	if len(rel.Incoming) != 1 || rel.Incoming[0].RelType != graph.RelSupersedes || rel.Incoming[0].From != u3.NewMemoryID ||
		rel.Incoming[0].EdgeID != u3.SupersedesEdge {
		t.Errorf("v2 incoming %+v, want SUPERSEDES from %s (%s)", rel.Incoming, u3.NewMemoryID, u3.SupersedesEdge)
	}

	// No forked histories: v1 and v2 are refused, naming v3.
	for _, old := range []string{v1.ID, u2.NewMemoryID} {
		r := callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": old, "new_title": "Fork", "new_content": "Fork."})
		wantRPCError(t, r, codeConflict, "")
		var data struct {
			CurrentVersionID string `json:"current_version_id"`
		}
		_ = json.Unmarshal(r.Error.Data, &data)
		if data.CurrentVersionID != u3.NewMemoryID || !strings.Contains(r.Error.Message, u3.NewMemoryID) {
			t.Errorf("409 for %s: %q data %s, want it to name %s", old, r.Error.Message, r.Error.Data, u3.NewMemoryID)
		}
	}
	// Nothing deleted, nothing forked.
	if s := statsOf(t, url, read); s.Memories != 3 || s.Chunks != 3 {
		t.Errorf("stats %+v, want 3 versions with a chunk each", s)
	}
}

func TestUpdateFactErrors(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	var v1 StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{"title": "Fakt", "content": "Ein Fakt."}), &v1)
	full := func(edit func(map[string]any)) map[string]any {
		a := map[string]any{"target_id": v1.ID, "new_title": "Neu", "new_content": "Neuer Fakt."}
		edit(a)
		return a
	}

	for name, tc := range map[string]struct {
		args  map[string]any
		param string
	}{
		"missing target_id":   {full(func(a map[string]any) { delete(a, "target_id") }), "target_id"},
		"blank target_id":     {full(func(a map[string]any) { a["target_id"] = "  " }), "target_id"},
		"null target_id":      {full(func(a map[string]any) { a["target_id"] = nil }), "target_id"},
		"missing new_title":   {full(func(a map[string]any) { delete(a, "new_title") }), "new_title"},
		"empty new_title":     {full(func(a map[string]any) { a["new_title"] = "" }), "new_title"},
		"missing new_content": {full(func(a map[string]any) { delete(a, "new_content") }), "new_content"},
		"blank new_content":   {full(func(a map[string]any) { a["new_content"] = "\n" }), "new_content"},
		"new_content number":  {full(func(a map[string]any) { a["new_content"] = 3 }), "new_content"},
		"unknown parameter":   {full(func(a map[string]any) { a["valid_from"] = "2026-01-01" }), "valid_from"},
		"no arguments":        {map[string]any{}, "target_id"},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, url, write, "knowmind_update_fact", tc.args), jsonrpc.CodeInvalidParams, tc.param)
		})
	}
	// Unknown target: 404, naming it.
	missing := newUUID(t)
	r := callTool(t, url, write, "knowmind_update_fact", full(func(a map[string]any) { a["target_id"] = missing }))
	wantRPCError(t, r, codeNotFound, "")
	if !strings.Contains(r.Error.Message, missing) {
		t.Errorf("404 %q does not name the target", r.Error.Message)
	}
	// Read token: 403, as the spec's table says (not -32002), before arguments.
	r = callTool(t, url, read, "knowmind_update_fact", full(func(map[string]any) {}))
	wantRPCError(t, r, codeForbidden, "")
	wantRPCError(t, callTool(t, url, read, "knowmind_update_fact", map[string]any{}), codeForbidden, "")
	// Content over the limit is too_large, as for store_memory.
	wantReason(t, callTool(t, url, write, "knowmind_update_fact",
		full(func(a map[string]any) { a["new_content"] = strings.Repeat("x", knowmind.MaxContentChars+1) })), knowmind.ReasonTooLarge)

	// None of it changed anything: v1 is still current, alone.
	if m := memoryOf(t, tenant, v1.ID); m.ValidTo != nil {
		t.Errorf("v1 closed by a refused update: %+v", m)
	}
	if s := statsOf(t, url, read); s.Memories != 1 || s.Edges != 0 {
		t.Errorf("stats %+v, want the one memory and no edges", s)
	}
}

// brokenEmbedder is the test embedder (same id, so tenants accept it) whose
// passages always fail, as a model server that went away.
type brokenEmbedder struct{ graph.Embedder }

func (brokenEmbedder) EmbedPassages(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("model server unreachable")
}

// newBrokenServer serves the same Dgraph and tokens through a second graph
// client whose embedder fails.
func newBrokenServer(t *testing.T) string {
	t.Helper()
	env := dgraphtest.Shared(t)
	c, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: brokenEmbedder{env.Embedder}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return newTestServer(t, func(d *Deps) { d.Graph = c }).URL + "/api/mcp/v1"
}

// A failed ingest is reported as -32603 ingest_failed and never as indexed:
// the memory is kept with status failed; a failed re-upload leaves the old
// document intact; a failed update changes nothing.
func TestIngestFailed(t *testing.T) {
	url := newTestServer(t, nil).URL + "/api/mcp/v1"
	broken := newBrokenServer(t)
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)

	// store_memory.
	r := callTool(t, broken, write, "knowmind_store_memory", map[string]any{"title": "Kaputt", "content": "Wird nicht eingebettet."})
	wantReason(t, r, knowmind.ReasonIngestFailed)
	var data struct{ ID, Status string }
	_ = json.Unmarshal(r.Error.Data, &data)
	if data.ID == "" || data.Status != knowmind.StatusFailed {
		t.Fatalf("ingest_failed data %s: want the failed memory's id and status failed", r.Error.Data)
	}
	if strings.Contains(string(r.Body), "model server unreachable") {
		t.Errorf("the embedder's error reaches the client: %s", r.Body)
	}
	it, ok := recentByID(recentOf(t, url, read), data.ID)
	if !ok || it.Status != knowmind.StatusFailed || it.IndexedChunks != 0 || it.Title != "Kaputt" {
		t.Errorf("list_recent entry of the failed memory: %+v (found %v)", it, ok)
	}
	// Storing it again once the embedder works retries: a new, indexed memory.
	var retry StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{"title": "Kaputt", "content": "Wird nicht eingebettet."}), &retry)
	if retry.Unchanged || retry.ID == data.ID || retry.Status != knowmind.StatusIndexed {
		t.Errorf("store after a failure: %+v", retry)
	}

	// upload_document: a failed re-upload keeps the old version searchable.
	var doc UploadDocumentResult
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": "Handbuch", "content": handbookV1}), &doc)
	before := statsOf(t, url, read)
	r = callTool(t, broken, write, "knowmind_upload_document", map[string]any{"title": "Handbuch", "content": handbookV2})
	wantReason(t, r, knowmind.ReasonIngestFailed)
	_ = json.Unmarshal(r.Error.Data, &data)
	items := recentOf(t, url, read)
	old, okOld := recentByID(items, doc.ID)
	failed, okFailed := recentByID(items, data.ID)
	if !okOld || old.Status != knowmind.StatusIndexed || old.IndexedChunks != doc.ChunksWritten {
		t.Errorf("old document after a failed re-upload: %+v (found %v)", old, okOld)
	}
	if !okFailed || failed.Status != knowmind.StatusFailed || failed.Kind != knowmind.KindDocument {
		t.Errorf("failed re-upload in list_recent: %+v (found %v)", failed, okFailed)
	}
	if s := statsOf(t, url, read); s.Chunks != before.Chunks || s.Memories != before.Memories+1 {
		t.Errorf("stats %+v after a failed re-upload, before %+v: old chunks must stay, one failed node added", s, before)
	}
	// A successful re-upload then replaces both the old and the failed one.
	var v2 UploadDocumentResult
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": "Handbuch", "content": handbookV2}), &v2)
	if got := slices.Sorted(slices.Values(v2.ReplacedDocumentIDs)); !slices.Equal(got, slices.Sorted(slices.Values([]string{doc.ID, data.ID}))) {
		t.Errorf("replaced %v, want the old %s and the failed %s", v2.ReplacedDocumentIDs, doc.ID, data.ID)
	}

	// update_fact: ingest_failed and nothing changed.
	r = callTool(t, broken, write, "knowmind_update_fact", map[string]any{"target_id": retry.ID, "new_title": "Neu", "new_content": "Neuer Inhalt."})
	wantReason(t, r, knowmind.ReasonIngestFailed)
	if m := memoryOf(t, tenant, retry.ID); m.ValidTo != nil {
		t.Errorf("target closed by a failed update: %+v", m)
	}
	var u UpdateFactResult
	structured(t, callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": retry.ID, "new_title": "Neu", "new_content": "Neuer Inhalt."}), &u)
	if u.OldMemoryID != retry.ID {
		t.Errorf("update after a failed one: %+v", u)
	}
}

// null for an optional parameter means "not given", as for content: the
// memory is stored with the defaults.
func TestNullOptionalParamsAreAbsent(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	write := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	var res StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"content": "Null-Parameter sind abwesend.", "title": nil, "source": nil, "memory_type": nil, "tags": nil}), &res)
	if res.Status != knowmind.StatusIndexed || res.MemoryID == "" {
		t.Fatalf("store with null optionals = %+v", res)
	}
}
