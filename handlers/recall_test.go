package handlers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// recallClient calls the MCP endpoint as one tenant's agent.
type recallClient struct {
	t            *testing.T
	url          string
	read, write  string
	lastRecalled knowmind.RecallResult
}

func newRecallClient(t *testing.T) *recallClient {
	srv := newTestServer(t, nil)
	tenant := dgraphtest.TenantName(t)
	return &recallClient{t: t, url: srv.URL + "/api/mcp/v1",
		write: newToken(t, tenant, knowmind.ScopeWrite), read: newToken(t, tenant, knowmind.ScopeRead)}
}

func (c *recallClient) store(title, content string) string {
	c.t.Helper()
	var res knowmind.StoreResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_store_memory",
		map[string]any{"title": title, "content": content, "source": "handbook"}), &res)
	return res.MemoryID
}

func (c *recallClient) link(from, to, rel string) {
	c.t.Helper()
	var res knowmind.LinkResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_link", map[string]any{"from_id": from, "to_id": to, "rel_type": rel}), &res)
}

// recall calls tool with args and returns the hits' memory ids, checking the result's shape.
func (c *recallClient) recall(tool string, args map[string]any) []string {
	c.t.Helper()
	var res knowmind.RecallResult
	structured(c.t, callTool(c.t, c.url, c.read, tool, args), &res)
	if res.Hits == nil || res.Rerank != "none" || res.ElapsedMS < 0 {
		c.t.Fatalf("%s result = %+v: want hits [], rerank none, elapsed_ms", tool, res)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > res.Hits[i-1].Score) {
			c.t.Fatalf("scores must lie in 0..1 and fall with rank: %+v", res.Hits)
		}
		ids[i] = h.MemoryID
	}
	c.lastRecalled = res
	return ids
}

func TestRecallToolGermanStemming(t *testing.T) {
	c := newRecallClient(t)
	want := c.store("Einarbeitungs-Verantwortliche Q2 2026",
		"Anna Müller ist Ansprechpartnerin für die Einarbeitung neuer Service-Mitarbeitender, vertreten durch Tomasz Kowalski.")
	c.store("Kantine", "Die Kantine im Erdgeschoss öffnet um halb zwölf und schließt um vierzehn Uhr.")
	c.store("Parkplätze", "Parkplätze für Besucher gibt es hinter dem Gebäude, Zufahrt über die Lindenstraße.")

	ids := c.recall("knowmind_recall", map[string]any{"query": "Wer ist für Einarbeitungen zuständig?"})
	if len(ids) == 0 || ids[0] != want {
		t.Fatalf("recall = %+v, want %s first", c.lastRecalled, want)
	}
	top := c.lastRecalled.Hits[0]
	if top.Title != "Einarbeitungs-Verantwortliche Q2 2026" || !strings.HasPrefix(top.Content, "Anna Müller") ||
		top.Source != "handbook" || top.ValidFrom != nil || top.ValidTo != nil {
		t.Fatalf("top hit = %+v: want the spec's fields, no validity in plain recall", top)
	}
	// Scores are absolute: a question nothing here answers gets no hit above the default floor,
	// and min_score 0 shows that every candidate scored below it.
	if ids := c.recall("knowmind_recall", map[string]any{"query": "Wetter morgen in Tokio"}); len(ids) != 0 {
		t.Fatalf("off-topic recall = %+v, want no hit", c.lastRecalled.Hits)
	}
	c.recall("knowmind_recall", map[string]any{"query": "Wetter morgen in Tokio", "min_score": 0})
	for _, h := range c.lastRecalled.Hits {
		if h.Score >= knowmind.RecallMinScore {
			t.Fatalf("off-topic hit %+v at or above the floor %v", h, knowmind.RecallMinScore)
		}
	}
}

// TestRecallToolGermanCompoundsAndVerbs: the question's compound and verb form against the
// memory's split words and separated verb ("Reisekostenabrechnung einreichen" vs "die Abrechnung
// der Reisekosten reicht man … ein"; "Kündigungsfrist" vs "kündigen … Frist"), within the
// default floor, through the MCP endpoint. It holds without a German word list too: the query's
// compound is split against the tenant's own vocabulary (bm25.AnalyzeForSearch).
func TestRecallToolGermanCompoundsAndVerbs(t *testing.T) {
	c := newRecallClient(t)
	travel := c.store("Handbuch: Dienstreisen",
		"Die Abrechnung der Reisekosten reicht man spätestens vier Wochen nach der Rückkehr ein.")
	notice := c.store("Handbuch: Arbeitsvertrag",
		"Wer kündigen möchte, muss eine Frist von drei Monaten zum Quartalsende einhalten.")
	c.store("Handbuch: Büro", "Das Büro schließt um 20 Uhr; die Alarmanlage schaltet der Letzte ein.")
	c.store("Handbuch: Urlaub", "Jeder hat Anspruch auf 30 Urlaubstage im Jahr.")

	for q, want := range map[string]string{
		"Bis wann muss ich die Reisekostenabrechnung einreichen?": travel,
		"Wie lang ist die Kündigungsfrist?":                       notice,
	} {
		if ids := c.recall("knowmind_recall", map[string]any{"query": q}); len(ids) == 0 || ids[0] != want {
			t.Errorf("%q: recall = %+v, want %s first", q, c.lastRecalled.Hits, want)
		}
	}
}

// hops reaches the graph through MCP, default 2; how hops rank is graph's
// TestRecallHopsReachLinkedMemories on the same scenario.
func TestRecallToolHops(t *testing.T) {
	c := newRecallClient(t)
	sc := dgraphtest.HopsScenario
	hub := c.store(sc.Hub.Title, sc.Hub.Content)
	mid := c.store(sc.Mid.Title, sc.Mid.Content)
	far := c.store(sc.Far.Title, sc.Far.Content)
	for _, s := range sc.Noise {
		c.store("", s)
	}
	c.link(hub, mid, "RELATES_TO")
	c.link(mid, far, "REFERENCES")

	if ids := c.recall("knowmind_recall", map[string]any{"query": sc.Query, "k": 3, "hops": 0}); len(ids) == 0 || ids[0] != hub || slices.Contains(ids, far) {
		t.Fatalf("hops=0: %+v, want the hub first and not the 2-hop memory", c.lastRecalled.Hits)
	}
	if ids := c.recall("knowmind_recall", map[string]any{"query": sc.Query, "k": 3}); !slices.Equal(ids, []string{hub, mid, far}) {
		t.Fatalf("default hops: %+v, want hub, its neighbour, the neighbour's neighbour", c.lastRecalled.Hits)
	}
}

func TestRecallAtTimeToolBeforeAndAfterUpdateFact(t *testing.T) {
	c := newRecallClient(t)
	old := c.store("Tarif Müller GmbH", "Müller GmbH läuft auf Tarif Starter mit zwei Plätzen.")
	c.store("Urlaub", "Betriebsferien sind in den ersten beiden Augustwochen.")
	before := time.Now().UTC()
	time.Sleep(50 * time.Millisecond)
	var upd knowmind.UpdateFactResult
	structured(t, callTool(t, c.url, c.write, "knowmind_update_fact", map[string]any{"target_id": old,
		"new_title": "Tarif Müller GmbH ab Juni", "new_content": "Müller GmbH läuft auf Tarif Business mit fünf Plätzen."}), &upd)
	q := "Tarif Müller GmbH"

	ids := c.recall("knowmind_recall_at_time", map[string]any{"query": q, "as_of": before.Format(time.RFC3339Nano), "k": 3})
	if len(ids) == 0 || ids[0] != old || slices.Contains(ids, upd.NewMemoryID) {
		t.Fatalf("as_of before the update: %+v, want the old version only", c.lastRecalled.Hits)
	}
	if h := c.lastRecalled.Hits[0]; h.ValidFrom == nil || h.ValidTo == nil || !h.ValidTo.After(before) {
		t.Fatalf("old version: valid_from %v valid_to %v", h.ValidFrom, h.ValidTo)
	}
	// Default as_of is now.
	ids = c.recall("knowmind_recall_at_time", map[string]any{"query": q, "k": 3})
	if len(ids) == 0 || ids[0] != upd.NewMemoryID || slices.Contains(ids, old) {
		t.Fatalf("as_of now: %+v, want the new version only", c.lastRecalled.Hits)
	}
	if h := c.lastRecalled.Hits[0]; h.ValidFrom == nil || h.ValidTo != nil {
		t.Fatalf("new version: valid_from %v valid_to %v", h.ValidFrom, h.ValidTo)
	}
	// Plain recall never shows the superseded version.
	if ids := c.recall("knowmind_recall", map[string]any{"query": q, "k": 25}); slices.Contains(ids, old) {
		t.Fatalf("recall shows the superseded version: %+v", c.lastRecalled.Hits)
	}
	// A date before anything was stored: nothing.
	if ids := c.recall("knowmind_recall_at_time", map[string]any{"query": q, "as_of": "2020-01-01"}); len(ids) != 0 {
		t.Fatalf("as_of 2020-01-01: %+v, want none", c.lastRecalled.Hits)
	}
}

func TestRecallToolHonoursK(t *testing.T) {
	c := newRecallClient(t)
	for _, s := range []string{"Rot", "Grün", "Blau", "Gelb", "Weiß", "Schwarz", "Orange"} {
		c.store("Farbe "+s, "Die Farbe "+s+" steht im Corporate-Design-Handbuch.")
	}
	if ids := c.recall("knowmind_recall", map[string]any{"query": "Farbe Corporate Design"}); len(ids) != 5 {
		t.Fatalf("default k: %d hits, want 5", len(ids))
	}
	for _, k := range []int{1, 3, 7} {
		if ids := c.recall("knowmind_recall", map[string]any{"query": "Farbe Corporate Design", "k": k}); len(ids) != k {
			t.Fatalf("k=%d: %d hits", k, len(ids))
		}
		if ids := c.recall("knowmind_recall_at_time", map[string]any{"query": "Farbe Corporate Design", "k": k}); len(ids) != k {
			t.Fatalf("recall_at_time k=%d: %d hits", k, len(ids))
		}
	}
}

func TestRecallToolsValidation(t *testing.T) {
	c := newRecallClient(t)
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"knowmind_recall", map[string]any{}, "query"},
		{"knowmind_recall", map[string]any{"query": ""}, "query"},
		{"knowmind_recall", map[string]any{"query": "   "}, "query"},
		{"knowmind_recall", map[string]any{"query": 42}, "query"},
		{"knowmind_recall", map[string]any{"query": "x", "k": 0}, "k"},
		{"knowmind_recall", map[string]any{"query": "x", "k": 26}, "k"},
		{"knowmind_recall", map[string]any{"query": "x", "k": "five"}, "k"},
		{"knowmind_recall", map[string]any{"query": "x", "hops": -1}, "hops"},
		{"knowmind_recall", map[string]any{"query": "x", "hops": 4}, "hops"},
		{"knowmind_recall_at_time", map[string]any{"as_of": "2026-03-14T00:00:00Z"}, "query"},
		{"knowmind_recall_at_time", map[string]any{"query": " "}, "query"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "as_of": "14.03.2026"}, "as_of"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "as_of": "yesterday"}, "as_of"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "as_of": "2026-13-01T00:00:00Z"}, "as_of"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "k": 0}, "k"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "k": 26}, "k"},
		{"knowmind_recall", map[string]any{"query": "x", "min_score": 1.5}, "min_score"},
		{"knowmind_recall", map[string]any{"query": "x", "min_score": -0.5}, "min_score"},
		{"knowmind_recall_at_time", map[string]any{"query": "x", "min_score": 2}, "min_score"},
	} {
		t.Run(tc.tool+" "+tc.param, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, c.read, tc.tool, tc.args), jsonrpc.CodeInvalidParams, tc.param)
		})
	}
	// The ISO 8601 forms as_of accepts.
	for _, asOf := range []string{"2026-03-14T00:00:00Z", "2026-03-14T01:00:00+01:00", "2026-03-14T00:00:00.5Z", "2026-03-14T00:00:00", "2026-03-14"} {
		c.recall("knowmind_recall_at_time", map[string]any{"query": "x", "as_of": asOf})
	}
}
