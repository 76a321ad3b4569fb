package handlers

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// rankedCounts calls the five ranked tools that take a query (the briefing takes none) and
// returns how many hits each answered, checking that every answer is a list, never null.
func rankedCounts(t *testing.T, url, token, query string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	var recall knowmind.RecallResult
	structured(t, callTool(t, url, token, "knowmind_recall", map[string]any{"query": query}), &recall)
	counts["recall"] = len(recall.Hits)
	var atTime RecallAtTimeResult
	structured(t, callTool(t, url, token, "knowmind_recall_at_time", map[string]any{"query": query}), &atTime)
	counts["recall_at_time"] = len(atTime.Hits)
	var search SearchResult
	structured(t, callTool(t, url, token, "knowmind_search", map[string]any{"query": query}), &search)
	counts["search"] = len(search.Hits)
	var bundle ContextResult
	structured(t, callTool(t, url, token, "knowmind_context", map[string]any{"query": query}), &bundle)
	counts["context"] = len(bundle.Items)
	var retrieve RetrieveResult
	structured(t, callTool(t, url, token, "knowmind_retrieve", map[string]any{"query": query}), &retrieve)
	counts["retrieve"] = len(retrieve.Memories)
	if recall.Hits == nil || atTime.Hits == nil || search.Hits == nil || bundle.Items == nil || retrieve.Memories == nil {
		t.Fatalf("%q: an answer without a list: %+v %+v %+v %+v %+v", query, recall, atTime, search, bundle, retrieve)
	}
	if len(bundle.Items) == 0 && bundle.TokensUsed != 0 {
		t.Fatalf("%q: an empty bundle uses %d tokens", query, bundle.TokensUsed)
	}
	return counts
}

// TestRankedToolsAnswerEmptyOffTopic: one contract for the ranked tools — a question the
// workspace does not answer gets an empty answer from every one, while one it answers gets hits
// from every one (memories in search too: what store_memory wrote is searchable).
func TestRankedToolsAnswerEmptyOffTopic(t *testing.T) {
	c := newNotesClient(t)
	rc := &recallClient{t: t, url: c.url, read: c.read, write: c.write}
	rc.store("Lieferbedingungen", "Lieferungen an die Rampe in Bielefeld nur montags bis 14 Uhr, Anmeldung bei der Spedition.")
	rc.store("Zahlungsziel", "Der Kunde Müller zahlt per Lastschrift innerhalb von 30 Tagen nach Rechnung.")
	rc.store("Ersatzteile", "Ersatzteile für die Werkstatt bestellt der Einkauf beim Lieferanten Schmitz.")
	c.create(map[string]any{"project": "main", "body": "# Rampe\n\nDie Rampe in Bielefeld ist montags für Lieferungen reserviert."})
	for tool, n := range rankedCounts(t, c.url, c.read, "Lieferung an die Rampe in Bielefeld") {
		if n == 0 {
			t.Errorf("on topic: %s answered nothing", tool)
		}
	}
	for tool, n := range rankedCounts(t, c.url, c.read, "Wetter morgen in Tokio") {
		if n != 0 {
			t.Errorf("off topic: %s answered %d hits, want none", tool, n)
		}
	}
}

// TestRankedToolsShareTheFloor: the five ranked tools that take a query offer the same
// min_score — bounded 0 to 1, defaulting to knowmind.RecallMinScore, which their schemas name —
// and each resolves an absent one to that constant (floatOr(p.MinScore, knowmind.RecallMinScore)
// in its handler; TestRankedToolsAnswerEmptyOffTopic shows the default leaving nothing).
func TestRankedToolsShareTheFloor(t *testing.T) {
	def := "default " + strconv.FormatFloat(knowmind.RecallMinScore, 'f', -1, 64)
	for tool, params := range map[string]any{"knowmind_recall": RecallParams{}, "knowmind_recall_at_time": RecallAtTimeParams{},
		"knowmind_search": SearchParams{}, "knowmind_context": ContextParams{}, "knowmind_retrieve": RetrieveParams{}} {
		f, ok := reflect.TypeOf(params).FieldByName("MinScore")
		if !ok {
			t.Errorf("%s has no MinScore", tool)
			continue
		}
		if f.Type != reflect.TypeFor[*float64]() || f.Tag.Get("json") != "min_score,omitempty" || f.Tag.Get("validate") != "omitnil,min=0,max=1" {
			t.Errorf("%s: MinScore is %v %s, want *float64 min_score,omitempty bounded 0 to 1", tool, f.Type, f.Tag)
		}
		if desc := f.Tag.Get("jsonschema"); !strings.Contains(desc, def) || !strings.Contains(desc, "0 keeps") {
			t.Errorf("%s: min_score says %q, want it to name the %s and that 0 keeps every hit", tool, desc, def)
		}
	}
}

// TestRankedToolsProjectLimitedTokenGetsK: scope applies before k — a token limited to one
// project gets exactly k hits when k visible ones exist, though notes of another project it may
// not see rank above them: search its project's notes only (its description says so), recall,
// recall_at_time and retrieve those notes and the tenant's memories.
func TestRankedToolsProjectLimitedTokenGetsK(t *testing.T) {
	c := newNotesClient(t)
	rc := &recallClient{t: t, url: c.url, read: c.read, write: c.write}
	ctx := context.Background()
	if _, err := tenantOf(t, c.tenant).CreateProject(ctx, "kunden", "Kunden"); err != nil {
		t.Fatal(err)
	}
	limited, _, err := dgraphtest.Shared(t).Client.CreateProjectToken(ctx, c.tenant, []knowmind.Scope{knowmind.ScopeRead}, []string{"kunden"}, "kunden-agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	// main's notes and the memories hold every query word; kunden's notes only some.
	for i := range 8 {
		c.create(map[string]any{"project": "main", "body": fmt.Sprintf("# Rampe Lieferung Bielefeld %d\n\nLieferung an die Rampe in Bielefeld, Tor %d.", i, i)})
	}
	kunden, memories := map[string]bool{}, map[string]bool{}
	for i := range 6 {
		kunden[c.create(map[string]any{"project": "kunden", "body": fmt.Sprintf("# Kunde %d\n\nLieferung für Kunde %d.", i, i)}).ID] = true
	}
	for i := range 3 {
		memories[rc.store(fmt.Sprintf("Rampe Bielefeld %d", i), fmt.Sprintf("Lieferung an die Rampe in Bielefeld über Spedition %d.", i))] = true
	}
	const k = 5
	query := "Lieferung an die Rampe in Bielefeld"
	var all SearchResult
	structured(t, callTool(t, c.url, c.read, "knowmind_search", map[string]any{"query": query, "limit": k}), &all)
	for _, h := range all.Hits {
		if kunden[h.ID] {
			t.Fatalf("the unlimited token's top %d holds a kunden note: the test does not test the order", k)
		}
	}
	var allRecall knowmind.RecallResult
	structured(t, callTool(t, c.url, c.read, "knowmind_recall", map[string]any{"query": query, "k": k}), &allRecall)
	hidden := 0
	for _, h := range allRecall.Hits {
		if !kunden[h.MemoryID] && !memories[h.MemoryID] {
			hidden++
		}
	}
	if hidden == 0 {
		t.Fatalf("the unlimited token's top %d of recall holds only hits the limited token sees: the test does not test the order", k)
	}
	var search SearchResult
	structured(t, callTool(t, c.url, limited, "knowmind_search", map[string]any{"query": query, "limit": k, "min_score": 0}), &search)
	var recall knowmind.RecallResult
	structured(t, callTool(t, c.url, limited, "knowmind_recall", map[string]any{"query": query, "k": k, "min_score": 0}), &recall)
	var atTime RecallAtTimeResult
	structured(t, callTool(t, c.url, limited, "knowmind_recall_at_time", map[string]any{"query": query, "k": k, "min_score": 0}), &atTime)
	var retrieve RetrieveResult
	structured(t, callTool(t, c.url, limited, "knowmind_retrieve", map[string]any{"query": query, "limit": k, "min_score": 0}), &retrieve)
	atTimeIDs := make([]string, len(atTime.Hits))
	for i, h := range atTime.Hits {
		atTimeIDs[i] = h.MemoryID
	}
	retrieveIDs := make([]string, len(retrieve.Memories))
	for i, m := range retrieve.Memories {
		retrieveIDs[i] = m.ID
	}
	for name, ids := range map[string][]string{"search": hitIDsOf(search.Hits), "recall": recallIDsOf(recall.Hits),
		"recall_at_time": atTimeIDs, "retrieve": retrieveIDs} {
		if len(ids) != k {
			t.Errorf("%s: %d hits for the limited token, want %d", name, len(ids), k)
		}
		for _, id := range ids {
			if !kunden[id] && (name == "search" || !memories[id]) {
				t.Errorf("%s: the limited token sees %s", name, id)
			}
		}
	}
}

func hitIDsOf(hits []knowmind.SearchHit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

func recallIDsOf(hits []knowmind.RecallHit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.MemoryID
	}
	return ids
}

// TestRankedToolsResolveRelativeTimes: a question's "gestern" is the day before the time of
// asking — now for knowmind_recall, as_of for knowmind_recall_at_time — and ranks the memory
// that happened then (store_memory's occurred_at) above the same words said at other times.
func TestRankedToolsResolveRelativeTimes(t *testing.T) {
	c := newRecallClient(t)
	now := time.Now().UTC()
	store := func(content string, at time.Time) string {
		var res knowmind.StoreResult
		structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "Teammeeting",
			"content": content, "occurred_at": at.Format(time.RFC3339)}), &res)
		return res.MemoryID
	}
	yesterday := store("Im Teammeeting wurde das Budget für den Relaunch noch einmal besprochen.", now.Add(-24*time.Hour))
	earlier := store("Im Teammeeting wurde das Budget für den Relaunch besprochen.", now.AddDate(0, 0, -20))
	earliest := store("Im Teammeeting wurde das Budget für den Relaunch erneut besprochen.", now.AddDate(0, 0, -41))
	asOf := now.AddDate(0, 0, -19).Format(time.RFC3339)
	for _, c2 := range []struct {
		tool, query, asOf, want string
	}{
		{"knowmind_recall", "Was wurde gestern im Teammeeting zum Budget besprochen?", "", yesterday},
		{"knowmind_recall_at_time", "Was wurde gestern im Teammeeting zum Budget besprochen?", asOf, earlier},
		{"knowmind_recall_at_time", "Was wurde vor drei Wochen im Teammeeting zum Budget besprochen?", asOf, earliest},
	} {
		args := map[string]any{"query": c2.query}
		if c2.asOf != "" {
			args["as_of"] = c2.asOf
		}
		if ids := c.recall(c2.tool, args); len(ids) == 0 || ids[0] != c2.want {
			t.Errorf("%s %q as of %q: %+v, want %s first", c2.tool, c2.query, c2.asOf, c.lastRecalled.Hits, c2.want)
		}
	}
}

// TestRankedToolsResolveBareWeekday: a bare weekday in a question told in the past is the
// last such day before the time of asking ("am Montag": not the Monday before it, not another
// day), a weekday in a stated week that week's, so the same words said on other days (in a
// shorter text, which BM25 alone ranks first) rank below. ("recently" is off by default:
// search.Weights.Recently, TestQuestionTimeRecently.)
func TestRankedToolsResolveBareWeekday(t *testing.T) {
	c := newRecallClient(t)
	asOf := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC) // a Wednesday
	store := func(title, content string, at time.Time) string {
		var res knowmind.StoreResult
		structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": title,
			"content": content, "occurred_at": at.Format(time.RFC3339)}), &res)
		return res.MemoryID
	}
	monday := store("Telefonat Yilmaz", "Herr Yilmaz hat im Telefonat die Lizenzerweiterung für das Lager zugesagt.", time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC))
	mondayBefore := store("Telefonat Yilmaz", "Herr Yilmaz hat im Telefonat die Lizenzerweiterung zugesagt.", time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	store("Telefonat Yilmaz", "Herr Yilmaz hat im Telefonat die Lizenzerweiterung für Köln zugesagt.", time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC))
	store("Telefonat Yilmaz", "Herr Yilmaz hat die Lizenzerweiterung im Telefonat zugesagt.", time.Date(2025, 12, 1, 10, 0, 0, 0, time.UTC))
	store("Market", "Mel bought a camera bag at the market.", time.Date(2025, 11, 14, 17, 0, 0, 0, time.UTC))
	friday := store("Market", "Mel bought a new leather camera bag at the market.", time.Date(2026, 3, 6, 17, 0, 0, 0, time.UTC))
	for _, q := range []struct {
		query string
		want  []string // the first hits, in any order
	}{
		{"Was hat Herr Yilmaz am Montag im Telefonat zur Lizenzerweiterung gesagt?", []string{monday}},
		{"Was hat Herr Yilmaz am Montag letzter Woche im Telefonat zur Lizenzerweiterung gesagt?", []string{mondayBefore}},
		{"What did Mel buy at the market on Friday?", []string{friday}},
	} {
		ids := c.recall("knowmind_recall_at_time", map[string]any{"query": q.query, "as_of": asOf.Format(time.RFC3339), "k": 5})
		if len(ids) < len(q.want) || !sameSet(ids[:len(q.want)], q.want) {
			t.Errorf("%q as of %s: %+v, want %v first", q.query, asOf.Format(time.DateOnly), c.lastRecalled.Hits, q.want)
		}
	}
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
}
