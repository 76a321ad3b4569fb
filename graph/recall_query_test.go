package graph

import (
	"strings"
	"testing"
	"time"
)

// TestRecallQueryShape renders the recall DQL and checks what one request must hold; run with
// -v to read it.
func TestRecallQueryShape(t *testing.T) {
	rels := []string{"RELATES_TO", "SUPERSEDES"}
	q, err := buildRecallQuery(recallPlan{vector: true, textDE: true, textEN: true, seedDE: true, seedEN: true,
		k: 5, hops: 2, relations: rels})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + q)
	for _, want := range []string{
		"similar_to(Chunk.embedding, 100, $vec, ef: 2000)", "math(emb dot $vec)",
		"anyoftext(Chunk.text@de, $de)", "anyoftext(Chunk.text, $en)",
		"SV as var(func: uid(VC), orderdesc: val(vs), first: 10)",
		"<RELATES_TO> (first: 25) @facets(" + edgeOpenFilter + ")", "<~RELATES_TO>", "<~SUPERSEDES>",
		"hop1(func: uid(S0))", "hop2(func: uid(F1))", "F2 as var", "mem(func: uid(M0, F1, F2))",
		memoryCurrentFilter,
	} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %q", want)
		}
	}
	if strings.Count(q, "query recall(") != 1 {
		t.Error("not one request")
	}

	asOf := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	q, err = buildRecallQuery(recallPlan{vector: true, textEN: true, k: 25, hops: 0, asOf: &asOf, relations: rels})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "similar_to(Chunk.embedding, 250,") || strings.Contains(q, "hop1") || strings.Contains(q, "TD as") ||
		!strings.Contains(q, memoryAtTimeFilter) {
		t.Errorf("k=25, hops=0, at time, English only:\n%s", q)
	}
	q, _ = buildRecallQuery(recallPlan{vector: true, k: 5, hops: 1, asOf: &asOf, relations: rels})
	if !strings.Contains(q, `@facets(le(valid_from, "2026-03-14T00:00:00Z") AND NOT le(valid_to, "2026-03-14T00:00:00Z"))`) {
		t.Errorf("edges at as_of:\n%s", q)
	}
}
