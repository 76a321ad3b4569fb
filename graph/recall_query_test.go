package graph

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRecallQueryShape renders the recall DQL and checks what one request must hold; run with
// -v to read it.
func TestRecallQueryShape(t *testing.T) {
	rels := []string{"RELATES_TO", "SUPERSEDES"}
	q, err := buildRecallQuery(recallPlan{vector: true, textDE: true, textEN: true, seedDE: true, seedEN: true,
		hops: 2, relations: rels})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + q)
	for _, want := range []string{
		"similar_to(Chunk.embedding, 100, $vec, ef: 2000)", "math(emb dot $vec)",
		"anyoftext(Chunk.text@de, $de)", "anyoftext(Chunk.text, $en)",
		"SV as var(func: uid(VC), orderdesc: val(vs), first: 20)",
		"h1r0 as e: <RELATES_TO> (first: 25) @facets(" + edgeOpenFilter + ") { uid }", "h2r1 as e: <SUPERSEDES>",
		"hop1e0(func: uid(S0))", "hop1e1(func: uid(S0))", "hop2e0(func: uid(F1))",
		// One memory filter per hop over what it reached, the frontier the new ones.
		"E1 as var(func: uid(h1r0, h1r1)) @filter(" + memoryCurrentFilter + ")",
		"F1 as var(func: uid(E1)) @filter(NOT uid(S0))", "ok(func: uid(E1, E2))",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %q", want)
		}
	}
	// Materialised inverses make reverse edges redundant; edge lists carry no memory filter.
	if strings.Contains(q, "<~") || strings.Count(q, memoryCurrentFilter) != 5 { // S0, E1, E2, vec, txt
		t.Errorf("reverse edges or a filter per edge list:\n%s", q)
	}
	if strings.Count(q, "query recall(") != 1 {
		t.Error("not one request")
	}

	asOf := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	q, err = buildRecallQuery(recallPlan{vector: true, textEN: true, hops: 0, asOf: &asOf, relations: rels})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "similar_to(Chunk.embedding, 100,") || strings.Contains(q, "hop1") || strings.Contains(q, "TD as") ||
		!strings.Contains(q, memoryAtTimeFilter) {
		t.Errorf("hops=0, at time, English only:\n%s", q)
	}
	q, _ = buildRecallQuery(recallPlan{vector: true, hops: 1, asOf: &asOf, relations: rels})
	if !strings.Contains(q, `@facets(le(valid_from, "2026-03-14T00:00:00Z") AND NOT le(valid_to, "2026-03-14T00:00:00Z"))`) {
		t.Errorf("edges at as_of:\n%s", q)
	}
	// valid_from <= as_of is the service's: the eligible neighbours come with their valid_from.
	if !strings.Contains(q, "ok(func: uid(E1)) { uid f: Memory.valid_from }") {
		t.Errorf("at as_of, ok does not read valid_from:\n%s", q)
	}
	if strings.Contains(q, "Memory.valid_from,") || strings.Contains(q, "le(val(") {
		t.Errorf("valid_from compared in Dgraph:\n%s", q)
	}
}

// With the service's exact search scored in the service, the request names the vector
// candidates and the graph seeds by uid and reads no vector: no HNSW, no math, no pools; the
// memories' details are left to recallDetailsQuery.
func TestRecallQueryServedVectors(t *testing.T) {
	rels := []string{"RELATES_TO"}
	exact := make([]uint64, 100)
	for i := range exact {
		exact[i] = uint64(0x100 + i)
	}
	q, err := buildRecallQuery(recallPlan{vector: true, textDE: true, seedDE: true, poolDE: true,
		exact: exact, served: true, hops: 2, relations: rels})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"VX as var(func: uid(0x100, 0x101,", "vec(func: uid(VX))",
		"SV as var(func: uid(0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x106, 0x107, 0x108, 0x109, 0x10a, 0x10b, 0x10c, 0x10d, 0x10e, 0x10f, 0x110, 0x111, 0x112, 0x113))",
		"var(func: uid(SV, SD))", "hop2e0(func: uid(F1))",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %q:\n%s", want, q)
		}
	}
	for _, not := range []string{"similar_to", "math(", "Chunk.embedding", "PD as", "VC", "mem(", "Memory.title"} {
		if strings.Contains(q, not) {
			t.Errorf("query holds %q:\n%s", not, q)
		}
	}
	// Not served (Plan.DgraphVectorScores, or nothing held): Dgraph scores the vectors itself.
	q, _ = buildRecallQuery(recallPlan{vector: true, textDE: true, exact: exact, hops: 0, relations: rels})
	if !strings.Contains(q, "math(emb dot $vec)") || !strings.Contains(q, "ef: 200)") {
		t.Errorf("re-scored in Dgraph:\n%s", q)
	}
}

// The candidates' memories are read with their time only where a time signal or as_of needs
// it (search.TimeReads): most questions name no time, and the request reads hundreds of them.
func TestRecallQueryReadsTimeOnlyWhenAsked(t *testing.T) {
	rels := []string{"RELATES_TO"}
	exact := []uint64{0x100, 0x101}
	asOf := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		plan recallPlan
		want string
	}{
		{"no time in the question", recallPlan{}, "{ uid }"},
		{"a when-question", recallPlan{dates: true}, "{ uid d: Memory.dates }"},
		{"a named day", recallPlan{validFrom: true, dates: true}, "{ uid f: Memory.valid_from d: Memory.dates }"},
		{"as of a time", recallPlan{asOf: &asOf}, "{ uid f: Memory.valid_from }"},
	} {
		p := c.plan
		p.vector, p.textDE, p.textServed, p.textUIDs = true, true, true, []uint64{0x200}
		p.exact, p.served, p.hops, p.relations = exact, true, 1, rels
		q, err := buildRecallQuery(p)
		if err != nil {
			t.Fatal(err)
		}
		// vec and txt each read their memories so.
		n := 0
		for line := range strings.Lines(q) {
			if strings.Contains(line, "m: ~Memory.chunks") {
				if !strings.HasSuffix(strings.TrimSpace(line), ") "+c.want) {
					t.Errorf("%s: %s, want %s", c.name, strings.TrimSpace(line), c.want)
				}
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s: %d memory reads, want vec's and txt's:\n%s", c.name, n, q)
		}
	}
}

func TestScoreVectors(t *testing.T) {
	out := recallResponse{}
	out.Vec = append(out.Vec, struct {
		UID   string  `json:"uid"`
		Score float64 `json:"s"`
		M     []dgMem `json:"m"`
	}{UID: "0x2a"}, struct {
		UID   string  `json:"uid"`
		Score float64 `json:"s"`
		M     []dgMem `json:"m"`
	}{UID: "0x7"})
	out.scoreVectors(map[uint64]float64{0x2a: 0.5})
	if len(out.Vec) != 1 || out.Vec[0].UID != "0x2a" || out.Vec[0].Score != 0.5 {
		t.Fatalf("scored: %+v", out.Vec)
	}
}

// recall_at_time keeps only the candidates' memories valid from as_of on (the request checked
// their status and valid_to).
func TestValidAt(t *testing.T) {
	asOf := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	before, after := asOf.Add(-time.Hour), asOf.Add(time.Hour)
	var out recallResponse
	out.Txt = append(out.Txt, struct {
		UID string  `json:"uid"`
		DE  string  `json:"de"`
		EN  string  `json:"en"`
		M   []dgMem `json:"m"`
	}{UID: "0x1", M: []dgMem{{UID: "0xa", ValidFrom: &before}, {UID: "0xb", ValidFrom: &after}, {UID: "0xc"}, {UID: "0xd", ValidFrom: &asOf}}})
	out.validAt(asOf)
	if m := out.Txt[0].M; len(m) != 2 || m[0].UID != "0xa" || m[1].UID != "0xd" {
		t.Fatalf("kept %+v, want 0xa and 0xd", m)
	}
}

// At a time, a neighbour is eligible only when valid from then on: the request leaves
// valid_from to the service.
func TestParseHopsAtTime(t *testing.T) {
	raw := []byte(`{"hop1e0":[{"uid":"0x1","e":[{"uid":"0x2"},{"uid":"0x3"},{"uid":"0x4"}]}],
	  "ok":[{"uid":"0x2","f":"2026-03-13T00:00:00Z"},{"uid":"0x3","f":"2026-03-15T00:00:00Z"},{"uid":"0x4"}]}`)
	var blocks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	asOf := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	adj, err := parseHops(blocks, 1, 1, &asOf)
	if err != nil {
		t.Fatal(err)
	}
	if got := adj["0x1"]; len(got) != 1 || got[0] != "0x2" {
		t.Fatalf("at %v: neighbours %v, want 0x2 only", asOf, got)
	}
	if adj, _ := parseHops(blocks, 1, 1, nil); len(adj["0x1"]) != 3 {
		t.Fatalf("now: neighbours %v, want all three", adj["0x1"])
	}
}
