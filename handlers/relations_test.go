package handlers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// seedMemory writes one indexed memory into tenant straight through Dgraph,
// as knowmind_store_memory would leave it, and returns its id. The shapes
// read a node's classes from kind, memory_type and class: tags.
func seedMemory(t testing.TB, tenant, title, memoryType string, tags ...string) string {
	t.Helper()
	ctx := context.Background()
	ten, err := dgraphtest.Shared(t).Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	id := newUUID(t)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	m := map[string]any{
		"uid":                "_:m",
		"dgraph.type":        "Memory",
		"Memory.id":          id,
		"Memory.kind":        "memory",
		"Memory.title":       title,
		"Memory.memory_type": memoryType,
		"Memory.status":      "indexed",
		"Memory.created_at":  now,
		"Memory.valid_from":  now,
	}
	if len(tags) > 0 {
		m["Memory.tags"] = tags
	}
	dgraphtest.SetJSON(t, ten, m)
	return id
}

func newUUID(t testing.TB) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func relationsOf(t testing.TB, url, token, id string) (ListRelationsResult, reply) {
	t.Helper()
	var rel ListRelationsResult
	r := callTool(t, url, token, "knowmind_list_relations", map[string]any{"memory_id": id})
	structured(t, r, &rel)
	return rel, r
}

func linkArgs(from, to, rel string) map[string]any {
	return map[string]any{"from_id": from, "to_id": to, "rel_type": rel}
}

// wantConstraint checks a 400 "SHACL constraint violated" naming the
// constraint kind in data.constraint.
func wantConstraint(t testing.TB, r reply, constraint string) {
	t.Helper()
	wantRPCError(t, r, codeBadRequest, "")
	if !strings.HasPrefix(r.Error.Message, "SHACL constraint violated") || strings.Count(r.Error.Message, "SHACL constraint violated") != 1 {
		t.Errorf("400 message %q does not start with %q (once)", r.Error.Message, "SHACL constraint violated")
	}
	var data struct{ Constraint string }
	_ = json.Unmarshal(r.Error.Data, &data)
	if data.Constraint != constraint {
		t.Errorf("400 data %s: constraint %q, want %q", r.Error.Data, data.Constraint, constraint)
	}
}

func TestRelationsLinkListUnlink(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	workshop := seedMemory(t, tenant, "Workshop 2026-03-12", "workshop")
	client := seedMemory(t, tenant, "Müller GmbH", "customer", "class:client")

	before := time.Now().Add(-time.Minute)
	var link LinkResult
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(workshop, client, "FOR_CLIENT")), &link)
	if !strings.HasPrefix(link.EdgeID, "edge_") || !strings.HasPrefix(link.InverseEdgeID, "edge_") || link.EdgeID == link.InverseEdgeID {
		t.Fatalf("link result %+v", link)
	}
	var again LinkResult
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(workshop, client, "FOR_CLIENT")), &again)
	if again != link {
		t.Errorf("linking twice: %+v, then %+v; want the same ids", link, again)
	}

	// Outgoing on the source, incoming on the target, each once; a read
	// token may list.
	src, _ := relationsOf(t, url, read, workshop)
	if len(src.Outgoing) != 1 || len(src.Incoming) != 0 {
		t.Fatalf("source relations %+v, want one outgoing edge", src)
	}
	out := src.Outgoing[0]
	if out.RelType != "FOR_CLIENT" || out.To != client || out.Title != "Müller GmbH" || out.EdgeID != link.EdgeID ||
		out.CreatedAt.Before(before) || out.CreatedAt.After(time.Now().Add(time.Minute)) || out.ValidTo != nil {
		t.Errorf("outgoing edge %+v", out)
	}
	dst, _ := relationsOf(t, url, read, client)
	if len(dst.Incoming) != 1 || len(dst.Outgoing) != 0 {
		t.Fatalf("target relations %+v, want one incoming edge (the materialised HAS_WORKSHOP is not listed again)", dst)
	}
	in := dst.Incoming[0]
	if in.RelType != "FOR_CLIENT" || in.From != workshop || in.Title != "Workshop 2026-03-12" || in.EdgeID != link.EdgeID ||
		!in.CreatedAt.Equal(out.CreatedAt) {
		t.Errorf("incoming edge %+v (outgoing created_at %s)", in, out.CreatedAt)
	}

	// unlink closes edge and inverse: gone from both ends in the next read.
	var del UnlinkResult
	r := callTool(t, url, write, "knowmind_unlink", linkArgs(workshop, client, "FOR_CLIENT"))
	structured(t, r, &del)
	if !del.Deleted || !jsonEqual(structuredText(t, r), `{"deleted":true}`) {
		t.Errorf("unlink: %s", r.Result)
	}
	for _, id := range []string{workshop, client} {
		rel, r := relationsOf(t, url, read, id)
		if len(rel.Outgoing) != 0 || len(rel.Incoming) != 0 {
			t.Errorf("relations of %s after unlink: %+v", id, rel)
		}
		if !strings.Contains(string(r.Result), `"outgoing":[]`) || !strings.Contains(string(r.Result), `"incoming":[]`) {
			t.Errorf("empty relations must be arrays, not null: %s", r.Result)
		}
	}
	r = callTool(t, url, write, "knowmind_unlink", linkArgs(workshop, client, "FOR_CLIENT"))
	wantRPCError(t, r, codeNotFound, "")

	// Re-linking reopens the same record: same ids.
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(workshop, client, "FOR_CLIENT")), &again)
	if again != link {
		t.Errorf("re-link after unlink: %+v, want %+v", again, link)
	}
}

// structuredText is the result's text block (the JSON a client without
// structuredContent support reads).
func structuredText(t testing.TB, r reply) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return res.Content[0].Text
}

func TestRelationsLinkErrors(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	a := seedMemory(t, tenant, "Workshop", "workshop")
	b := seedMemory(t, tenant, "Not a client", "note")
	missing := newUUID(t)

	// A well-formed rel_type no shape knows.
	wantConstraint(t, callTool(t, url, write, "knowmind_link", linkArgs(a, b, "LIKES")), "rel_type")
	// Version history is knowmind_update_fact's alone.
	for _, rel := range []string{"SUPERSEDES", "SUPERSEDED_BY"} {
		r := callTool(t, url, write, "knowmind_link", linkArgs(a, b, rel))
		wantConstraint(t, r, "history")
		if !strings.Contains(r.Error.Message, "knowmind_update_fact") {
			t.Errorf("link %s: %q does not name knowmind_update_fact", rel, r.Error.Message)
		}
	}
	// Nothing was written by the refused links.
	if rel, _ := relationsOf(t, url, read, a); len(rel.Outgoing)+len(rel.Incoming) != 0 {
		t.Errorf("refused links left edges: %+v", rel)
	}

	for name, tc := range map[string]struct {
		tool  string
		args  map[string]any
		param string
	}{
		"lower-case rel_type":     {"knowmind_link", linkArgs(a, b, "for_client"), "rel_type"},
		"rel_type with spaces":    {"knowmind_link", linkArgs(a, b, "FOR CLIENT"), "rel_type"},
		"missing from_id":         {"knowmind_link", map[string]any{"to_id": b, "rel_type": "RELATES_TO"}, "from_id"},
		"blank to_id":             {"knowmind_link", linkArgs(a, " ", "RELATES_TO"), "to_id"},
		"missing rel_type":        {"knowmind_link", map[string]any{"from_id": a, "to_id": b}, "rel_type"},
		"self-link":               {"knowmind_link", linkArgs(a, a, "RELATES_TO"), "to_id"},
		"rel_type not a string":   {"knowmind_link", map[string]any{"from_id": a, "to_id": b, "rel_type": 7}, "rel_type"},
		"unlink lower-case":       {"knowmind_unlink", linkArgs(a, b, "relates_to"), "rel_type"},
		"unlink missing to_id":    {"knowmind_unlink", map[string]any{"from_id": a, "rel_type": "RELATES_TO"}, "to_id"},
		"list missing memory_id":  {"knowmind_list_relations", map[string]any{}, "memory_id"},
		"list unknown parameter":  {"knowmind_list_relations", map[string]any{"memory_id": a, "tenant": "x"}, "tenant"},
		"list blank memory_id":    {"knowmind_list_relations", map[string]any{"memory_id": ""}, "memory_id"},
		"unknown link parameter":  {"knowmind_link", map[string]any{"from_id": a, "to_id": b, "rel_type": "OWNS", "x": 1}, "x"},
		"unlink blank from_id":    {"knowmind_unlink", linkArgs("", b, "OWNS"), "from_id"},
		"unlink rel_type missing": {"knowmind_unlink", map[string]any{"from_id": a, "to_id": b}, "rel_type"},
		// Ids and types are bounded (ids as update_fact's target_id), so a
		// megabyte "id" is refused, not looked up and echoed in a 404.
		"link from_id too long":   {"knowmind_link", linkArgs(strings.Repeat("x", 1<<20), b, "RELATES_TO"), "from_id"},
		"link to_id too long":     {"knowmind_link", linkArgs(a, strings.Repeat("x", 201), "RELATES_TO"), "to_id"},
		"link rel_type too long":  {"knowmind_link", linkArgs(a, b, strings.Repeat("A", 1<<20)), "rel_type"},
		"unlink to_id too long":   {"knowmind_unlink", linkArgs(a, strings.Repeat("x", 201), "RELATES_TO"), "to_id"},
		"list memory_id too long": {"knowmind_list_relations", map[string]any{"memory_id": strings.Repeat("x", 1<<20)}, "memory_id"},
	} {
		t.Run(name, func(t *testing.T) {
			r := callTool(t, url, write, tc.tool, tc.args)
			wantRPCError(t, r, jsonrpc.CodeInvalidParams, tc.param)
			if len(r.Body) > 4096 {
				t.Errorf("the error echoes the input: %d bytes", len(r.Body))
			}
		})
	}

	// Unknown ids are 404 naming the end that is missing.
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"knowmind_link", linkArgs(missing, b, "RELATES_TO"), "from_id"},
		{"knowmind_link", linkArgs(a, missing, "RELATES_TO"), "to_id"},
		{"knowmind_unlink", linkArgs(a, missing, "RELATES_TO"), "to_id"},
		{"knowmind_list_relations", map[string]any{"memory_id": missing}, ""},
	} {
		r := callTool(t, url, write, tc.tool, tc.args)
		wantRPCError(t, r, codeNotFound, "")
		if tc.param != "" && !strings.Contains(r.Error.Message, tc.param) {
			t.Errorf("%s 404 %q does not name %s", tc.tool, r.Error.Message, tc.param)
		}
	}
	// An edge that was never linked.
	wantRPCError(t, callTool(t, url, write, "knowmind_unlink", linkArgs(a, b, "RELATES_TO")), codeNotFound, "")

	// A read token may not link or unlink (scope checked before arguments).
	wantRPCError(t, callTool(t, url, read, "knowmind_link", linkArgs(a, b, "RELATES_TO")), codeScope, "")
	wantRPCError(t, callTool(t, url, read, "knowmind_link", map[string]any{}), codeScope, "")
	wantRPCError(t, callTool(t, url, read, "knowmind_unlink", linkArgs(a, b, "RELATES_TO")), codeScope, "")

	// tools/list: link/unlink for write tokens only, list_relations for both.
	for _, tc := range []struct {
		token      string
		link, list bool
	}{{read, false, true}, {write, true, true}} {
		names := listTools(t, url, tc.token)
		if hasAll(names, "knowmind_link", "knowmind_unlink") != tc.link || hasAll(names, "knowmind_list_relations") != tc.list {
			t.Errorf("tools/list %v", names)
		}
	}
}

func hasAll(names []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, n := range names {
			found = found || n == w
		}
		if !found {
			return false
		}
	}
	return true
}

func TestRelationsCrossTenant(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenantA, tenantB := dgraphtest.TenantName(t), dgraphtest.TenantName(t)
	tokenA := newToken(t, tenantA, knowmind.ScopeWrite)
	tokenB := newToken(t, tenantB, knowmind.ScopeAdmin)
	a1 := seedMemory(t, tenantA, "Secret A1", "note")
	a2 := seedMemory(t, tenantA, "Secret A2", "note")
	b1 := seedMemory(t, tenantB, "B1", "note")

	var link LinkResult
	structured(t, callTool(t, url, tokenA, "knowmind_link", linkArgs(a1, a2, "RELATES_TO")), &link)

	// Tenant B, even with admin scope, cannot see or touch A's ids: 404,
	// as if they did not exist, and nothing of A in the answer.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"knowmind_link", linkArgs(a1, a2, "OWNS")},
		{"knowmind_link", linkArgs(b1, a1, "RELATES_TO")},
		{"knowmind_link", linkArgs(a1, b1, "RELATES_TO")},
		{"knowmind_unlink", linkArgs(a1, a2, "RELATES_TO")},
		{"knowmind_list_relations", map[string]any{"memory_id": a1}},
	} {
		r := callTool(t, url, tokenB, tc.tool, tc.args)
		wantRPCError(t, r, codeNotFound, "")
		if strings.Contains(string(r.Body), "Secret") {
			t.Errorf("%s leaks tenant A: %s", tc.tool, r.Body)
		}
	}
	// A's edge is untouched.
	rel, _ := relationsOf(t, url, tokenA, a1)
	if len(rel.Outgoing) != 1 || rel.Outgoing[0].To != a2 || rel.Outgoing[0].EdgeID != link.EdgeID {
		t.Errorf("tenant A relations after B's attempts: %+v", rel)
	}
	if rel, _ := relationsOf(t, url, tokenB, b1); len(rel.Outgoing)+len(rel.Incoming) != 0 {
		t.Errorf("tenant B got edges: %+v", rel)
	}
	if r := callTool(t, url, tokenB, "knowmind_list_relations", map[string]any{"memory_id": a1}); r.Status != http.StatusOK {
		t.Errorf("a JSON-RPC error is HTTP 200, got %d", r.Status)
	}
}
