package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
)

// A fact stored the plain way (no entities) is compared with a new fact
// however the new one arrives: store_memory answers carry conflicts, capture
// reports them, and both link the two memories CONTRADICTS.
func TestConflictsWithoutEntities(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	seat := c.store("", "Die Nordlicht GmbH hat ihren Sitz in Bielefeld.")
	budget := c.store("", "The Phoenix budget is $40,000.")
	c.store("", "Die Kranich AG hat ihren Sitz in Hamburg.")

	var sr knowmind.StoreResult
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"content": "Die Nordlicht GmbH sitzt in Detmold."}), &sr)
	if len(sr.Conflicts) != 1 || sr.Conflicts[0].ExistingID != seat || !strings.Contains(sr.Conflicts[0].Reason, "bielefeld") {
		t.Fatalf("store_memory conflicts %+v, want one with %s", sr.Conflicts, seat)
	}
	rel, _ := relationsOf(t, c.url, c.read, sr.MemoryID)
	if !strings.Contains(string(mustJSON(t, rel)), seat) {
		t.Fatalf("no CONTRADICTS edge to %s: %+v", seat, rel)
	}

	res := c.capture(map[string]any{"text": "Finance confirmed it today: Phoenix has a budget of $55k."})
	if len(res.Conflicts) != 1 || res.Conflicts[0].ExistingID != budget {
		t.Fatalf("capture conflicts %+v, want one with %s", res.Conflicts, budget)
	}

	// Compatible and unrelated facts are not conflicts; the field is absent then.
	var plain struct {
		Conflicts *[]knowmind.Conflict `json:"conflicts"`
	}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"content": "Die Nordlicht GmbH hat eine Niederlassung in Hamburg."}), &plain)
	if plain.Conflicts != nil {
		t.Fatalf("conflicts %+v for a compatible fact", *plain.Conflicts)
	}
}

// Seed 001 names knowmind_link's parameters source_id, target_id and
// relation_type (lower case); they are accepted as aliases.
func TestLinkSeed001Aliases(t *testing.T) {
	c := newRecallClient(t)
	a, b := c.store("a", "Alpha"), c.store("b", "Beta")
	var res LinkResult
	structured(t, callTool(t, c.url, c.write, "knowmind_link", map[string]any{"source_id": a, "target_id": b,
		"relation_type": "contradicts", "metadata": map[string]any{"reason": "two seats"}}), &res)
	if res.EdgeID == "" || res.InverseEdgeID == "" {
		t.Fatalf("link %+v", res)
	}
	rel, _ := relationsOf(t, c.url, c.read, a)
	body := string(mustJSON(t, rel))
	if !strings.Contains(body, "CONTRADICTS") || !strings.Contains(body, b) {
		t.Fatalf("relations %s", body)
	}
	structured(t, callTool(t, c.url, c.write, "knowmind_link", map[string]any{"from_id": b, "target_id": a, "relation_type": "Relates_To"}), &res)

	for name, tc := range map[string]struct {
		args  map[string]any
		param string
	}{
		"no source":          {map[string]any{"target_id": b, "relation_type": "relates_to"}, "from_id"},
		"no relation":        {map[string]any{"source_id": a, "target_id": b}, "rel_type"},
		"both names differ":  {map[string]any{"from_id": a, "source_id": b, "to_id": b, "rel_type": "RELATES_TO"}, "source_id"},
		"camel case unknown": {map[string]any{"sourceId": a, "to_id": b, "rel_type": "RELATES_TO"}, "sourceId"},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link", tc.args), jsonrpc.CodeInvalidParams, tc.param)
		})
	}
	// A relation type the shapes do not define is refused as under rel_type (400, the allowed ones listed).
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link", map[string]any{"source_id": a, "target_id": b, "relation_type": "loves"}), codeBadRequest, "")
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCaptureLLMConflicts: facts from the llm extractor go through the same
// candidates and comparator as the rules extractor's. The fake server answers
// as an OpenAI-compatible server does: a chat.completion object whose message
// content is the JSON the schema asks for, with the model's own entity
// choices and confidences.
func TestCaptureLLMConflicts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		facts := `{"facts":[` +
			`{"text":"Ab Juli leitet Petra Lang den Vertrieb.","confidence":0.91,"entities":[{"type":"person","name":"Petra Lang"}]},` +
			`{"text":"Der Mietvertrag läuft bis zum 30.09.2027.","confidence":0.88,"entities":[]}]}`
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-9", "object": "chat.completion", "created": 1764950400, "model": "qwen2.5-7b-instruct",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": facts}}},
			"usage": map[string]any{"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508},
		})
	}))
	t.Cleanup(srv.Close)
	c := newEngineClient(t, Extractors{Default: "llm", ByName: map[string]knowmind.Extractor{"llm": newLLM(t, srv.URL)}})
	lead := c.store("", "Die Leitung des Vertriebs hat Frank Heller.")
	lease := c.store("", "Der Mietvertrag endet am 31.03.2027.")
	res := c.capture(map[string]any{"text": "Kurzes Update aus dem Jour fixe: Ab Juli leitet Petra Lang den Vertrieb. " +
		"Der Mietvertrag läuft bis zum 30.09.2027."})
	got := map[string]string{}
	for _, cf := range res.Conflicts {
		got[cf.ExistingID] = cf.Reason
	}
	if len(res.Stored) != 2 || len(got) != 2 || !strings.Contains(got[lead], "frank heller") || !strings.Contains(got[lease], "different date") {
		t.Fatalf("llm capture: %+v", res)
	}
}
