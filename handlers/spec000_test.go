package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/shapes"
)

// The spec (../shared/seeds/000_*.txt, "Referenz MCP-Werkzeuge") as a test
// suite: each tool's example request is sent as written — only the ids (and
// as_of, see below) are replaced by the ones created here — and the response
// must have the example's fields, JSON types and nesting; then every row of
// every error table must yield its code.
//
// Where the spec and MCP disagree, MCP wins: the spec shows a tool's fields
// directly under "result", MCP (2025-06-18) puts them in
// result.structuredContent, with the same JSON as a text block. The fields
// are compared there.

// specExamples are the example responses' "result" objects, copied from the
// spec.
var specExamples = map[string]string{
	"knowmind_recall": `{"hits": [{"memory_id": "memory_einarbeitung_2026_03", "title": "Einarbeitungs-Verantwortliche Q2 2026",
		"content": "Anna Müller ist Ansprechpartnerin für die Einarbeitung neuer Service-Mitarbeitender, vertreten durch Tomasz Kowalski.",
		"score": 0.93, "source": "internal-handbook-v3"}], "elapsed_ms": 187}`,
	"knowmind_recall_at_time": `{"hits": [{"memory_id": "memory_mueller_tarif_v2", "title": "Tarif Müller GmbH ab 01.02.2026",
		"content": "Müller GmbH läuft auf Tarif Business mit fünf Plätzen.", "valid_from": "2026-02-01T00:00:00Z",
		"valid_to": "2026-04-01T00:00:00Z", "score": 0.88}]}`,
	"knowmind_list_relations": `{"outgoing": [{"rel_type": "FOR_CLIENT", "to": "memory_mueller_kunde"}, {"rel_type": "REFERENCES", "to": "memory_qm_handbuch"}],
		"incoming": [{"rel_type": "SUPERSEDES", "from": "memory_workshop_2026_03_19"}]}`,
	"knowmind_health": `{"status": "ok", "service": "memory", "version": "0.3.0"}`,
	"knowmind_stats":  `{"memories": 1219, "edges": 5512, "chunks": 3214}`,
	"knowmind_list_recent": `{"items": [{"id": "5a3c9f2e-1b7d-4c21-9e0a-8f6d2b3c4e5f", "title": "Einarbeitungs-Handbuch v3", "status": "indexed",
		"indexed_chunks": 23, "created_at": "2026-06-10T07:12:44Z", "updated_at": "2026-06-10T07:12:51Z", "kind": "document"}], "count": 1}`,
	"knowmind_store_memory": `{"memory_id": "5a3c9f2e-1b7d-4c21-9e0a-8f6d2b3c4e5f", "id": "5a3c9f2e-1b7d-4c21-9e0a-8f6d2b3c4e5f",
		"title": "QM-Schulung Pflicht", "status": "indexed", "chunks_written": 1, "embedding_provider": "fastembed"}`,
	"knowmind_upload_document": `{"memory_id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f", "id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f",
		"title": "Einarbeitungs-Handbuch v3", "status": "indexed", "chunks_written": 23, "embedding_provider": "fastembed",
		"replaced_document_ids": ["1f2e3d4c-5b6a-4d7c-9e8f-a0b1c2d3e4f5"]}`,
	"knowmind_update_fact": `{"old_memory_id": "memory_mueller_adresse_v1", "new_memory_id": "memory_mueller_adresse_v2",
		"supersedes_edge": "edge_supersedes_2026_05_23"}`,
	"knowmind_link":   `{"edge_id": "edge_for_client_2026_05_23", "inverse_edge_id": "edge_has_workshop_2026_05_23"}`,
	"knowmind_unlink": `{"deleted": true}`,
}

// specCall sends one spec example request (the whole JSON-RPC body, as the
// spec prints it) with the placeholders in replace swapped for real values,
// and returns the reply after checking it echoes the request's id.
func specCall(t *testing.T, url, token, body string, replace ...string) reply {
	t.Helper()
	body = strings.NewReplacer(replace...).Replace(body)
	var req struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("example request is not JSON: %v\n%s", err, body)
	}
	r := send(t, url, token, body)
	if string(r.ID) != string(req.ID) {
		t.Errorf("response id %s, want the request's %s", r.ID, req.ID)
	}
	return r
}

// wantSpecShape checks a successful tool result against the spec's example
// result of tool and decodes it into out (nil: not decoded). nullable names
// fields that may be null where the example shows a value (valid_to of a
// version that is still valid).
func wantSpecShape(t *testing.T, tool string, r reply, out any, nullable ...string) map[string]any {
	t.Helper()
	var got map[string]any
	structured(t, r, &got)
	var want any
	if err := json.Unmarshal([]byte(specExamples[tool]), &want); err != nil {
		t.Fatalf("example of %s: %v", tool, err)
	}
	sameShape(t, tool, want, got, nullable)
	if out != nil {
		structured(t, r, out)
	}
	return got
}

// sameShape reports every field of want that got lacks or holds with another
// JSON type, recursively; array elements are compared with the example's
// first element. Timestamps (*_at, valid_*) must be RFC 3339 in one form
// (TimestampLayout: UTC, milliseconds).
func sameShape(t *testing.T, path string, want, got any, nullable []string) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s: %s, want an object", path, jsonKind(got))
			return
		}
		for k, wv := range w {
			gv, ok := g[k]
			p := path + "." + k
			switch {
			case !ok:
				t.Errorf("%s: missing (the spec's example has it)", p)
				continue
			case gv == nil && slices.Contains(nullable, k):
				continue
			}
			if s, isString := gv.(string); isString && (strings.HasSuffix(k, "_at") || strings.HasPrefix(k, "valid_")) {
				if ts, err := time.Parse(time.RFC3339, s); err != nil || ts.UTC().Format(TimestampLayout) != s {
					t.Errorf("%s = %q: not in the one RFC 3339 form %s", p, s, TimestampLayout)
				}
			}
			sameShape(t, p, wv, gv, nullable)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			t.Errorf("%s: %s, want an array", path, jsonKind(got))
			return
		}
		if len(w) > 0 && len(g) == 0 {
			t.Errorf("%s: empty; the scenario should give what the example shows", path)
		}
		for i, gv := range g {
			if len(w) > 0 {
				sameShape(t, fmt.Sprintf("%s[%d]", path, i), w[0], gv, nullable)
			}
		}
	default:
		if jsonKind(want) != jsonKind(got) {
			t.Errorf("%s: %s, want %s as in the example", path, jsonKind(got), jsonKind(want))
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// storeForSpec stores a memory through the endpoint and returns its id.
func storeForSpec(t *testing.T, url, token string, args map[string]any) string {
	t.Helper()
	var res StoreMemoryResult
	structured(t, callTool(t, url, token, "knowmind_store_memory", args), &res)
	if res.ID == "" || res.Status != knowmind.StatusIndexed {
		t.Fatalf("store %v: %+v", args["title"], res)
	}
	return res.ID
}

func TestSpec000Examples(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)

	// knowmind_store_memory, example 6, as written.
	var stored StoreMemoryResult
	wantSpecShape(t, "knowmind_store_memory", specCall(t, url, write, `{
  "jsonrpc": "2.0",
  "id": 6,
  "method": "tools/call",
  "params": {
    "name": "knowmind_store_memory",
    "arguments": {
      "title": "QM-Schulung Pflicht",
      "content": "Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich.",
      "memory_type": "procedural",
      "tags": ["qm","schulung"],
      "source": "internal-handbook"
    }
  }
}`), &stored)
	if stored.MemoryID != stored.ID || stored.Title != "QM-Schulung Pflicht" || stored.ChunksWritten != 1 || stored.Unchanged {
		t.Errorf("store_memory: %+v", stored)
	}

	// The same content under a new title is recognised: nothing written,
	// and the answer names the title that was kept.
	var again StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{"title": "Jährliche QM-Schulung",
		"content": "Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich."}), &again)
	if !again.Unchanged || again.ID != stored.ID || again.Title != "QM-Schulung Pflicht" || !strings.Contains(again.Note, `"QM-Schulung Pflicht"`) {
		t.Errorf("identical content under a new title: %+v", again)
	}

	// The memories the other examples name, stored as an agent would:
	// plain memories, no class tags.
	einarbeitung := storeForSpec(t, url, write, map[string]any{"title": "Einarbeitungs-Verantwortliche Q2 2026",
		"content": "Anna Müller ist Ansprechpartnerin für die Einarbeitung neuer Service-Mitarbeitender, vertreten durch Tomasz Kowalski.",
		"source":  "internal-handbook-v3"})
	workshop := storeForSpec(t, url, write, map[string]any{"title": "Workshop 12.03.2026",
		"content": "Workshop mit der Müller GmbH am 12.03.2026 zur Einarbeitung.", "memory_type": "episodic"})
	kunde := storeForSpec(t, url, write, map[string]any{"title": "Müller GmbH (Kunde)",
		"content": "Die Müller GmbH in Detmold ist unsere Kundin."})
	handbuch := storeForSpec(t, url, write, map[string]any{"title": "QM-Handbuch",
		"content": "Das QM-Handbuch regelt Audits und Schulungen.", "memory_type": "reference"})
	adresse := storeForSpec(t, url, write, map[string]any{"title": "Anschrift Müller GmbH",
		"content": "Müller GmbH, Hauptstraße 1, 32756 Detmold."})
	tarif := storeForSpec(t, url, write, map[string]any{"title": "Tarif Müller GmbH ab 01.02.2026",
		"content": "Müller GmbH läuft auf Tarif Business mit fünf Plätzen."})
	tarifValid := time.Now().UTC().Add(1100 * time.Millisecond).Truncate(time.Second) // after tarif's valid_from

	// knowmind_upload_document, example 7: uploaded twice under the same
	// title, so the second answer replaces the first, as the example shows.
	upload := `{
  "jsonrpc": "2.0",
  "id": 7,
  "method": "tools/call",
  "params": {
    "name": "knowmind_upload_document",
    "arguments": {
      "title": "Einarbeitungs-Handbuch v3",
      "content": "Kapitel 1 — Onboarding-Ablauf …",
      "source": "internal-handbook-v3.md"
    }
  }
}`
	var first, second UploadDocumentResult
	structured(t, specCall(t, url, write, upload), &first)
	wantSpecShape(t, "knowmind_upload_document", specCall(t, url, write, upload,
		"Onboarding-Ablauf …", "Onboarding-Ablauf, überarbeitet."), &second)
	if !slices.Equal(second.ReplacedDocumentIDs, []string{first.ID}) || second.ID == first.ID {
		t.Errorf("second upload %+v, want it to replace %s", second, first.ID)
	}

	// knowmind_recall, example 1, as written: the memory it asks about comes first.
	var recall RecallResult
	wantSpecShape(t, "knowmind_recall", specCall(t, url, read, `{
  "jsonrpc": "2.0",
  "id": 1,
  "method": "tools/call",
  "params": {
    "name": "knowmind_recall",
    "arguments": {
      "query": "Wer ist Ansprechpartnerin für die Einarbeitung?",
      "k": 5,
      "hops": 2
    }
  }
}`), &recall)
	if len(recall.Hits) == 0 || recall.Hits[0].MemoryID != einarbeitung || recall.Hits[0].Source != "internal-handbook-v3" {
		t.Errorf("recall hits %+v, want %s first with its source", recall.Hits, einarbeitung)
	}

	// knowmind_link, example 9, as written: FOR_CLIENT onto a plain memory.
	var link LinkResult
	linkBody := `{
  "jsonrpc": "2.0",
  "id": 9,
  "method": "tools/call",
  "params": {
    "name": "knowmind_link",
    "arguments": {
      "from_id": "memory_workshop_2026_03_12",
      "to_id":   "memory_mueller_kunde",
      "rel_type": "FOR_CLIENT"
    }
  }
}`
	wantSpecShape(t, "knowmind_link", specCall(t, url, write, linkBody,
		"memory_workshop_2026_03_12", workshop, "memory_mueller_kunde", kunde), &link)
	if link.EdgeID == "" || link.InverseEdgeID == "" || link.EdgeID == link.InverseEdgeID {
		t.Errorf("link %+v", link)
	}
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(workshop, handbuch, "REFERENCES")), &LinkResult{})

	// knowmind_update_fact, example 8, as written.
	var upd UpdateFactResult
	wantSpecShape(t, "knowmind_update_fact", specCall(t, url, write, `{
  "jsonrpc": "2.0",
  "id": 8,
  "method": "tools/call",
  "params": {
    "name": "knowmind_update_fact",
    "arguments": {
      "target_id": "memory_mueller_adresse_v1",
      "new_title": "Anschrift Müller GmbH ab 01.06.2026",
      "new_content": "Müller GmbH, Industriestraße 7, 32756 Detmold.",
      "update_reason": "Adresse geändert zum 01.06.2026"
    }
  }
}`, "memory_mueller_adresse_v1", adresse), &upd)
	if upd.OldMemoryID != adresse || upd.NewMemoryID == "" || upd.NewMemoryID == adresse || upd.SupersedesEdge == "" {
		t.Errorf("update_fact %+v", upd)
	}
	// The workshop gets a newer version: its relations move to it (issue 36),
	// which then has example 3's outgoing relations; an incoming link gives
	// it the example's incoming side. (The example's own incoming SUPERSEDES
	// names a superseded version, whose relations are no longer current.)
	var newer UpdateFactResult
	structured(t, callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": workshop,
		"new_title": "Workshop 19.03.2026", "new_content": "Workshop mit der Müller GmbH am 19.03.2026 zur Einarbeitung."}), &newer)
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(einarbeitung, newer.NewMemoryID, "REFERENCES")), &LinkResult{})

	// knowmind_list_relations, example 3, as written.
	var rel ListRelationsResult
	wantSpecShape(t, "knowmind_list_relations", specCall(t, url, read, `{
  "jsonrpc": "2.0",
  "id": 3,
  "method": "tools/call",
  "params": {
    "name": "knowmind_list_relations",
    "arguments": { "memory_id": "memory_workshop_2026_03_12" }
  }
}`, "memory_workshop_2026_03_12", newer.NewMemoryID), &rel)
	var outs, ins []string
	for _, o := range rel.Outgoing {
		outs = append(outs, o.RelType+" "+o.To)
	}
	for _, i := range rel.Incoming {
		ins = append(ins, i.RelType+" "+i.From)
	}
	slices.Sort(outs)
	if !slices.Equal(outs, []string{"FOR_CLIENT " + kunde, "REFERENCES " + handbuch, "SUPERSEDES " + workshop}) ||
		!slices.Equal(ins, []string{"REFERENCES " + einarbeitung}) {
		t.Errorf("relations of the workshop: outgoing %v, incoming %v", outs, ins)
	}

	// knowmind_recall_at_time, example 2. The example's as_of (2026-03-14)
	// is before anything here was stored, so as_of is a moment when the
	// tariff memory was valid; a newer version then closes it, so the hit
	// has valid_from and valid_to as in the example.
	for time.Now().Before(tarifValid.Add(100 * time.Millisecond)) {
		time.Sleep(50 * time.Millisecond)
	}
	var tarifV2 UpdateFactResult
	structured(t, callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": tarif,
		"new_title": "Tarif Müller GmbH ab 01.04.2026", "new_content": "Müller GmbH läuft auf Tarif Business mit sieben Plätzen."}), &tarifV2)
	atTime := `{
  "jsonrpc": "2.0",
  "id": 2,
  "method": "tools/call",
  "params": {
    "name": "knowmind_recall_at_time",
    "arguments": {
      "query": "Tarif-Stand Müller GmbH",
      "as_of": "2026-03-14T00:00:00Z",
      "k": 3
    }
  }
}`
	for _, asOf := range []string{tarifValid.Format(time.RFC3339), tarifValid.Format("20060102T150405Z")} {
		var at RecallAtTimeResult
		wantSpecShape(t, "knowmind_recall_at_time", specCall(t, url, read, atTime, "2026-03-14T00:00:00Z", asOf), &at, "valid_to")
		i := slices.IndexFunc(at.Hits, func(h RecallAtTimeHit) bool { return h.MemoryID == tarif })
		if i < 0 || at.Hits[i].ValidTo == nil || !at.Hits[i].ValidTo.After(tarifValid) || at.Hits[i].ValidFrom.After(tarifValid) {
			t.Errorf("recall_at_time as of %s: %+v, want %s valid then and closed later", asOf, at.Hits, tarif)
		}
	}
	// A version still valid carries valid_to: null, not a missing field.
	r := callTool(t, url, read, "knowmind_recall_at_time", map[string]any{"query": "QM-Schulung", "k": 25})
	var now map[string]any
	structured(t, r, &now)
	for _, h := range now["hits"].([]any) {
		if v, ok := h.(map[string]any)["valid_to"]; !ok || v != nil {
			t.Errorf("current hit %v: want valid_to null", h)
		}
	}

	// knowmind_stats, example 5: edges counts the current relations once:
	// FOR_CLIENT, two REFERENCES and four SUPERSEDES (three updates, the
	// replaced document).
	var st StatsResult
	wantSpecShape(t, "knowmind_stats", specCall(t, url, read, `{
  "jsonrpc": "2.0",
  "id": 5,
  "method": "tools/call",
  "params": { "name": "knowmind_stats", "arguments": {} }
}`), &st)
	if st.Edges != 7 || st.Memories != 11 || st.Chunks < 11 {
		t.Errorf("stats %+v, want 7 edges and 11 memories (8 stored, 3 new versions; the replaced document is closed and not counted)", st)
	}

	// knowmind_list_recent, example 11, as written.
	var recent ListRecentResult
	wantSpecShape(t, "knowmind_list_recent", specCall(t, url, read, `{
  "jsonrpc": "2.0",
  "id": 11,
  "method": "tools/call",
  "params": {
    "name": "knowmind_list_recent",
    "arguments": { "k": 3 }
  }
}`), &recent)
	if len(recent.Items) != 3 || recent.Count != 3 || recent.Total != 11 || recent.NextCursor == nil || recent.Items[0].ID != tarifV2.NewMemoryID || recent.Items[1].ID != newer.NewMemoryID {
		t.Errorf("list_recent k=3: %+v", recent)
	}

	// knowmind_unlink, example 10, as written: exactly {"deleted": true}.
	unlink := `{
  "jsonrpc": "2.0",
  "id": 10,
  "method": "tools/call",
  "params": {
    "name": "knowmind_unlink",
    "arguments": {
      "from_id": "memory_workshop_2026_03_12",
      "to_id":   "memory_mueller_kunde",
      "rel_type": "FOR_CLIENT"
    }
  }
}`
	r = specCall(t, url, write, unlink, "memory_workshop_2026_03_12", newer.NewMemoryID, "memory_mueller_kunde", kunde)
	wantSpecShape(t, "knowmind_unlink", r, nil)
	if !jsonEqual(structuredText(t, r), `{"deleted":true}`) {
		t.Errorf("unlink: %s", r.Result)
	}

	// knowmind_health, example 4, as written.
	var health HealthResult
	wantSpecShape(t, "knowmind_health", specCall(t, url, read, `{
  "jsonrpc": "2.0",
  "id": 4,
  "method": "tools/call",
  "params": { "name": "knowmind_health", "arguments": {} }
}`), &health)
	if health.Status != "ok" || health.Service != "memory" || health.Version != knowmind.Version {
		t.Errorf("health %+v", health)
	}

	// The error tables, row by row.
	t.Run("errors", func(t *testing.T) {
		specErrorTables(t, url, tenant, read, write, workshop, kunde)
	})
}

// brokenProvider fails every embedding, as an unreachable provider.
type brokenProvider struct{ graph.Embedder }

func (brokenProvider) EmbedPassages(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("provider unreachable")
}

func (brokenProvider) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("provider unreachable")
}

// specErrorTables checks each row of each tool's "Fehlerfälle" table.
func specErrorTables(t *testing.T, url, tenant, read, write, memA, memB string) {
	env := dgraphtest.Shared(t)
	missing := newUUID(t)
	// A JWT without the read scope: kmt_ tokens always hold one (admin ⊃ write ⊃ read).
	noScope := hsJWT(t, jwt.MapClaims{"tenant": tenant, "scopes": []string{"profile"}, "aud": testJWTAudience,
		"exp": time.Now().Add(time.Hour).Unix()})
	broken, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: brokenProvider{env.Embedder}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broken.Close)
	brokenURL := newTestServer(t, func(d *Deps) { d.Graph = broken }).URL + "/api/mcp/v1"
	limitedURL := newTestServer(t, func(d *Deps) { d.RateLimit, d.RateBurst = 0.01, 1 }).URL + "/api/mcp/v1"
	downURL := newTestServer(t, func(d *Deps) {
		d.Ready = func(context.Context) (bool, map[string]string) { return false, nil }
	}).URL + "/api/mcp/v1"
	tooLarge := strings.Repeat("ä", knowmind.MaxContentChars+1)

	type row struct {
		name       string
		url, token string
		tool       string
		args       map[string]any
		code       int64
		param      string // data.param for -32602
		reason     string // data.reason for -32603
	}
	rows := []row{
		// knowmind_recall
		{"recall: query missing", url, read, "knowmind_recall", map[string]any{"k": 5}, jsonrpc.CodeInvalidParams, "query", ""},
		{"recall: query empty", url, read, "knowmind_recall", map[string]any{"query": " "}, jsonrpc.CodeInvalidParams, "query", ""},
		{"recall: provider error", brokenURL, read, "knowmind_recall", map[string]any{"query": "Einarbeitung"}, codeProvider, "", ""},
		{"recall: no token", url, "", "knowmind_recall", map[string]any{"query": "x"}, codeUnauthorize, "", ""},
		{"recall: bad token", url, "kmt_invalid", "knowmind_recall", map[string]any{"query": "x"}, codeUnauthorize, "", ""},
		// knowmind_recall_at_time
		{"recall_at_time: query missing", url, read, "knowmind_recall_at_time", map[string]any{"as_of": "2026-03-14T00:00:00Z"}, jsonrpc.CodeInvalidParams, "query", ""},
		{"recall_at_time: as_of not ISO 8601", url, read, "knowmind_recall_at_time", map[string]any{"query": "x", "as_of": "14.03.2026"}, jsonrpc.CodeInvalidParams, "as_of", ""},
		{"recall_at_time: no token", url, "", "knowmind_recall_at_time", map[string]any{"query": "x"}, codeUnauthorize, "", ""},
		// knowmind_list_relations
		{"list_relations: memory_id missing", url, read, "knowmind_list_relations", map[string]any{}, jsonrpc.CodeInvalidParams, "memory_id", ""},
		{"list_relations: not found", url, read, "knowmind_list_relations", map[string]any{"memory_id": missing}, codeNotFound, "", ""},
		// knowmind_health
		{"health: service down", downURL, read, "knowmind_health", map[string]any{}, codeUnavailable, "", ""},
		// knowmind_stats
		{"stats: no token", url, "", "knowmind_stats", map[string]any{}, codeUnauthorize, "", ""},
		// knowmind_list_recent
		{"list_recent: scope read missing", url, noScope, "knowmind_list_recent", map[string]any{}, codeScope, "", ""},
		{"list_recent: no token", url, "", "knowmind_list_recent", map[string]any{}, codeUnauthorize, "", ""},
		// knowmind_store_memory
		{"store_memory: scope write missing", url, read, "knowmind_store_memory", map[string]any{"content": "x"}, codeScope, "", ""},
		{"store_memory: content missing", url, write, "knowmind_store_memory", map[string]any{"title": "x"}, jsonrpc.CodeInternalError, "", knowmind.ReasonContentRequired},
		{"store_memory: content empty", url, write, "knowmind_store_memory", map[string]any{"content": "  "}, jsonrpc.CodeInternalError, "", knowmind.ReasonContentRequired},
		{"store_memory: content null", url, write, "knowmind_store_memory", map[string]any{"content": nil}, jsonrpc.CodeInternalError, "", knowmind.ReasonContentRequired},
		{"store_memory: too large", url, write, "knowmind_store_memory", map[string]any{"content": tooLarge}, jsonrpc.CodeInternalError, "", knowmind.ReasonTooLarge},
		{"store_memory: ingest failed", brokenURL, write, "knowmind_store_memory", map[string]any{"content": "Wird nicht indexiert."}, jsonrpc.CodeInternalError, "", knowmind.ReasonIngestFailed},
		{"store_memory: no token", url, "", "knowmind_store_memory", map[string]any{"content": "x"}, codeUnauthorize, "", ""},
		// knowmind_upload_document
		{"upload_document: scope write missing", url, read, "knowmind_upload_document", map[string]any{"content": "x"}, codeScope, "", ""},
		{"upload_document: content missing", url, write, "knowmind_upload_document", map[string]any{"title": "x"}, jsonrpc.CodeInternalError, "", knowmind.ReasonContentRequired},
		{"upload_document: too large", url, write, "knowmind_upload_document", map[string]any{"content": tooLarge}, jsonrpc.CodeInternalError, "", knowmind.ReasonTooLarge},
		{"upload_document: ingest failed", brokenURL, write, "knowmind_upload_document", map[string]any{"title": "Kaputt", "content": "Wird nicht indexiert."}, jsonrpc.CodeInternalError, "", knowmind.ReasonIngestFailed},
		{"upload_document: no token", url, "", "knowmind_upload_document", map[string]any{"content": "x"}, codeUnauthorize, "", ""},
		// knowmind_update_fact
		{"update_fact: required field missing", url, write, "knowmind_update_fact", map[string]any{"target_id": memA, "new_title": "x"}, jsonrpc.CodeInvalidParams, "new_content", ""},
		{"update_fact: target not found", url, write, "knowmind_update_fact", map[string]any{"target_id": missing, "new_title": "x", "new_content": "y"}, codeNotFound, "", ""},
		{"update_fact: scope write missing", url, read, "knowmind_update_fact", map[string]any{"target_id": memA, "new_title": "x", "new_content": "y"}, codeForbidden, "", ""},
		// knowmind_link
		{"link: invalid params", url, write, "knowmind_link", map[string]any{"from_id": memA, "to_id": memB}, jsonrpc.CodeInvalidParams, "rel_type", ""},
		{"link: rel_type not allowed", url, write, "knowmind_link", linkArgs(memA, memB, "LIKES"), codeBadRequest, "", ""},
		{"link: from_id not found", url, write, "knowmind_link", linkArgs(missing, memB, "RELATES_TO"), codeNotFound, "", ""},
		{"link: to_id not found", url, write, "knowmind_link", linkArgs(memA, missing, "RELATES_TO"), codeNotFound, "", ""},
		// knowmind_unlink
		{"unlink: relation not found", url, write, "knowmind_unlink", linkArgs(memA, memB, "OWNS"), codeNotFound, "", ""},
	}
	for _, c := range rows {
		t.Run(c.name, func(t *testing.T) {
			r := callTool(t, c.url, c.token, c.tool, c.args)
			wantRPCError(t, r, c.code, c.param)
			if c.reason != "" {
				var data struct{ Reason string }
				_ = json.Unmarshal(r.Error.Data, &data)
				if data.Reason != c.reason || r.Error.Message != c.reason {
					t.Errorf("-32603 %q data %s, want reason %s", r.Error.Message, r.Error.Data, c.reason)
				}
			}
		})
	}
	t.Run("recall: rate limit", func(t *testing.T) {
		args := map[string]any{"query": "Einarbeitung"}
		callTool(t, limitedURL, read, "knowmind_recall", args)
		wantRPCError(t, callTool(t, limitedURL, read, "knowmind_recall", args), codeRateLimited, "")
	})
	t.Run("unknown rel_type lists the allowed ones", func(t *testing.T) {
		r := callTool(t, url, write, "knowmind_link", linkArgs(memA, memB, "LIKES"))
		wantConstraint(t, r, "rel_type")
		var data struct{ Allowed []string }
		_ = json.Unmarshal(r.Error.Data, &data)
		set, _ := shapes.Default()
		if !slices.Equal(data.Allowed, set.Names()) || !strings.Contains(r.Error.Message, "FOR_CLIENT") {
			t.Errorf("400 %q data %s: want every allowed type", r.Error.Message, r.Error.Data)
		}
	})
	t.Run("401 echoes the request id", func(t *testing.T) {
		r := send(t, url, "kmt_invalid", `{"jsonrpc":"2.0","id":"req-42","method":"tools/call","params":{"name":"knowmind_stats","arguments":{}}}`)
		if r.Status != http.StatusUnauthorized || r.Error == nil || r.Error.Code != codeUnauthorize || string(r.ID) != `"req-42"` {
			t.Errorf("401: HTTP %d id %s body %s", r.Status, r.ID, r.Body)
		}
	})
}

// listedTool is what tools/list shows of one tool.
type listedTool struct {
	Name        string
	Description string
	InputSchema struct {
		Required   []string
		Properties map[string]struct {
			Type      any
			Enum      []string
			MaxLength *int
		}
	}
	Annotations struct {
		ReadOnlyHint    bool
		IdempotentHint  bool
		DestructiveHint *bool
	}
}

func listedTools(t *testing.T, url, token string) map[string]listedTool {
	t.Helper()
	r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolsetsHeader, "all")
	var res struct{ Tools []listedTool }
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list: HTTP %d %s", r.Status, r.Body)
	}
	out := map[string]listedTool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// tools/list tells an agent what the tools do: the relation types (from the
// shapes) with their meaning, which parameters are required and how long
// they may be, and annotations that tell the truth.
func TestSpec000ToolsList(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	tools := listedTools(t, url, newToken(t, tenant, knowmind.ScopeWrite))
	set, _ := shapes.Default()

	for _, name := range []string{"knowmind_link", "knowmind_unlink"} {
		if got := tools[name].InputSchema.Properties["rel_type"].Enum; !slices.Equal(got, set.Names()) {
			t.Errorf("%s rel_type enum %v, want the shapes' types %v", name, got, set.Names())
		}
	}
	// Every relation knowmind_link writes, with its meaning; an implicit inverse with its
	// partner; version history not at all (only knowmind_update_fact writes it).
	for _, r := range set.Relations() {
		desc := tools["knowmind_link"].Description
		switch {
		case graph.IsHistoryRelation(r.Name):
			if strings.Contains(desc, r.Name+":") {
				t.Errorf("knowmind_link's description offers %s", r.Name)
			}
		case r.Implicit:
			if !strings.Contains(desc, "[inverse "+r.Name+"]") {
				t.Errorf("knowmind_link's description lacks the inverse %s", r.Name)
			}
		default:
			if line := "- " + r.Name + ": " + r.Description; !strings.Contains(desc, line) {
				t.Errorf("knowmind_link's description lacks %q", line)
			}
		}
	}

	for _, name := range []string{"knowmind_store_memory", "knowmind_upload_document"} {
		in := tools[name].InputSchema
		c := in.Properties["content"]
		if !slices.Contains(in.Required, "content") || c.Type != "string" || c.MaxLength == nil || *c.MaxLength != knowmind.MaxContentChars {
			t.Errorf("%s content: %+v, required %v; want a required string of at most %d characters", name, c, in.Required, knowmind.MaxContentChars)
		}
		if tl := in.Properties["title"]; tl.MaxLength == nil || *tl.MaxLength != knowmind.MaxTitleChars {
			t.Errorf("%s title maxLength %v", name, tl.MaxLength)
		}
	}

	// readOnly, idempotent, destructive per tool.
	want := map[string][3]bool{
		"knowmind_health": {true, true, false}, "knowmind_stats": {true, true, false},
		"knowmind_list_recent": {true, true, false}, "knowmind_recall": {true, true, false},
		"knowmind_recall_at_time": {true, true, false}, "knowmind_list_relations": {true, true, false},
		"knowmind_explore": {true, true, false},
		"knowmind_link":    {false, true, false}, "knowmind_unlink": {false, true, true},
		"knowmind_store_memory": {false, true, false}, "knowmind_upload_document": {false, true, true},
		"knowmind_update_fact": {false, true, false},
		// notes (docs/notes.md)
		"knowmind_list_projects": {true, true, false}, "knowmind_get_note": {true, true, false},
		"knowmind_search": {true, true, false}, "knowmind_context": {true, true, false},
		"knowmind_create_note": {false, false, false}, "knowmind_edit_note": {false, false, true},
		"knowmind_delete_note": {false, true, true}, "knowmind_link_note": {false, true, false},
		"knowmind_remember_about_user": {false, false, false}, "knowmind_remember_about_project": {false, false, false},
		"knowmind_start_session": {false, true, false}, "knowmind_whoami": {true, true, false},
		"knowmind_list_notes": {true, true, false}, "knowmind_recent_activity": {true, true, false},
		"knowmind_rename_note": {false, false, false}, "knowmind_move_note": {false, false, false}, "knowmind_move_folder": {false, false, false},
		"knowmind_rename_project": {false, true, false},
		"knowmind_create_notes":   {false, false, false}, "knowmind_link_many": {false, true, false},
		"knowmind_store_memories": {false, true, false},
		// memory engine (README, "Memory engine"); knowmind_set_capture_thresholds needs admin
		"knowmind_capture": {false, true, false}, "knowmind_review_draft": {false, false, false},
		"knowmind_list_drafts": {true, true, false}, "knowmind_list_entities": {true, true, false},
		"knowmind_capture_calibration": {true, true, false},
		// prospective memory and briefing (docs/seed-001-names.md)
		"knowmind_set_goal": {false, false, false}, "knowmind_list_goals": {true, true, false},
		"knowmind_close_goal": {false, false, false}, "knowmind_briefing": {true, true, false},
		"knowmind_retrieve": {true, true, false}, "knowmind_replay": {true, true, false},
	}
	if len(tools) != len(want) {
		t.Errorf("%d tools listed, want %d", len(tools), len(want))
	}
	for name, w := range want {
		a := tools[name].Annotations
		if a.ReadOnlyHint != w[0] || a.IdempotentHint != w[1] || a.DestructiveHint == nil || *a.DestructiveHint != w[2] {
			t.Errorf("%s annotations %+v (destructive %v), want readOnly %v idempotent %v destructive %v",
				name, a, a.DestructiveHint, w[0], w[1], w[2])
		}
	}

	// JSON Schema counts 5.0 as an integer; so does the endpoint.
	var recent ListRecentResult
	structured(t, callTool(t, url, newToken(t, tenant, knowmind.ScopeRead), "knowmind_list_recent", map[string]any{"k": json.Number("3.0")}), &recent)
	r := callTool(t, url, newToken(t, tenant, knowmind.ScopeRead), "knowmind_list_recent", map[string]any{"k": 2.5})
	wantRPCError(t, r, jsonrpc.CodeInvalidParams, "k")
}

// A shape file with class constraints (shapes/examples/crm.yaml): tools/list
// names the tags each end needs, and a link that misses one is refused
// saying which tag satisfies it.
func TestSpec000ClassConstraintsFromShapeFile(t *testing.T) {
	set, err := shapes.Load("../shapes/examples")
	if err != nil {
		t.Fatal(err)
	}
	c := dgraphtest.ClientWithShapes(t, set)
	srv := newTestServer(t, func(d *Deps) { d.Graph = c })
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	if _, err := c.Tenant(context.Background(), tenant, true); err != nil {
		t.Fatal(err)
	}
	write, _, err := c.CreateToken(context.Background(), tenant, []knowmind.Scope{knowmind.ScopeWrite}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	link := listedTools(t, url, write)["knowmind_link"]
	if !slices.Contains(link.InputSchema.Properties["rel_type"].Enum, "EMPLOYS") ||
		!strings.Contains(link.Description, "- EMPLOYS: ") || !strings.Contains(link.Description, "[source tagged class:client; target tagged class:person]") {
		t.Errorf("knowmind_link does not describe EMPLOYS and its classes:\n%s", link.Description)
	}
	client := storeForSpec(t, url, write, map[string]any{"content": "Müller GmbH", "tags": []string{"class:client"}})
	plain := storeForSpec(t, url, write, map[string]any{"content": "Anna Müller", "tags": []string{"person"}})
	person := storeForSpec(t, url, write, map[string]any{"content": "Tomasz Kowalski", "tags": []string{"class:person"}})

	r := callTool(t, url, write, "knowmind_link", linkArgs(client, plain, "EMPLOYS"))
	wantConstraint(t, r, "target_class")
	var data struct {
		Allowed []string
		Fix     string
	}
	_ = json.Unmarshal(r.Error.Data, &data)
	if !slices.Equal(data.Allowed, []string{"person"}) || !strings.Contains(data.Fix, "class:person") || !strings.Contains(r.Error.Message, "class:person") {
		t.Errorf("400 %q data %s: want the allowed class and the tag that gives it", r.Error.Message, r.Error.Data)
	}
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(client, person, "EMPLOYS")), &LinkResult{})
}

func TestUniformTimestamps(t *testing.T) {
	in := `{"items":[{"created_at":"2026-06-10T07:12:44Z","updated_at":"2026-06-10T09:12:44.123456789+02:00",` +
		`"valid_to":null,"content":"{\"created_at\":\"2026-06-10T07:12:44Z\"}"}],"valid_from":"2026-06-10T07:12:44.1Z"}`
	want := `{"items":[{"created_at":"2026-06-10T07:12:44.000Z","updated_at":"2026-06-10T07:12:44.123Z",` +
		`"valid_to":null,"content":"{\"created_at\":\"2026-06-10T07:12:44Z\"}"}],"valid_from":"2026-06-10T07:12:44.100Z"}`
	if got := string(uniformTimestamps([]byte(in))); got != want {
		t.Fatalf("uniformTimestamps:\n got %s\nwant %s", got, want)
	}
}
