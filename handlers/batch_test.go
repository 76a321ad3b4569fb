package handlers

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
)

// TestNotesBatchTools: create_notes reports a bad item alone and writes the others;
// link_many twice adds no second edge; oversize batches are -32602.
func TestNotesBatchTools(t *testing.T) {
	c := newNotesClient(t)
	var res BatchResult
	structured(t, callTool(t, c.url, c.write, "knowmind_create_notes", map[string]any{"notes": []map[string]any{
		{"project": "main", "path": "Batch", "body": "# Eins\n\nErste."},
		{"project": "main", "path": "Batch", "body": "Kein Titel."},
		{"project": "main", "path": "Batch", "body": "# eins\n\nDoppelt."},
		{"project": "fehlt", "body": "# Drei\n\nx"},
		{"project": "main", "path": "Batch", "body": "# Zwei\n\nZweite, siehe [[Eins]]."},
	}}), &res)
	if res.OK != 2 || res.Failed != 3 || len(res.Results) != 5 {
		t.Fatalf("create_notes = %+v", res)
	}
	r := res.Results
	if !r[0].OK || r[0].Result.ID == "" || r[1].OK || r[1].Error.Code != jsonrpc.CodeInvalidParams || r[1].Error.Param != "body" ||
		r[2].Error == nil || r[2].Error.Code != codeConflict || r[3].Error == nil || r[3].Error.Code != codeNotFound ||
		!r[4].OK || len(r[4].Result.Links) != 1 || r[4].Index != 4 {
		t.Fatalf("create_notes items %+v", r)
	}
	if l := c.listNotes(map[string]any{"project": "main", "path": "Batch"}); len(l.Notes) != 2 {
		t.Fatalf("Batch folder holds %+v", l.Notes)
	}

	eins, zwei := r[0].Result.ID, r[4].Result.ID
	links := map[string]any{"links": []map[string]any{
		{"from": eins, "to": zwei, "relType": "RELATES_TO"},
		{"from": eins, "toTitle": "Zwei"},
		{"from": eins, "to": "fehlt"},
	}}
	for round := range 2 {
		res = BatchResult{}
		structured(t, callTool(t, c.url, c.write, "knowmind_link_many", links), &res)
		if res.OK != 2 || res.Failed != 1 || res.Results[2].Error.Code != codeNotFound {
			t.Fatalf("link_many round %d = %+v", round, res)
		}
	}
	out := c.get(eins, true).Links.Out
	if len(out) != 2 {
		t.Fatalf("after link_many twice, out edges %+v; want RELATES_TO and REFERENCES once each", out)
	}

	many := make([]map[string]any, knowmind.MaxBatchNotes+1)
	for i := range many {
		many[i] = map[string]any{"project": "main", "body": "# T\n\nx"}
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_create_notes", map[string]any{"notes": many}), jsonrpc.CodeInvalidParams, "notes")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_create_notes", map[string]any{"notes": []any{}}), jsonrpc.CodeInvalidParams, "notes")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link_many", map[string]any{"links": []any{}}), jsonrpc.CodeInvalidParams, "links")
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_create_notes", map[string]any{"notes": []map[string]any{{"project": "main", "body": "# T\n\nx"}}}), codeScope, "")
}
