package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/graph/dql"
	"github.com/knowmind/knowmind/shapes"
)

func TestMain(m *testing.M) { dgraphtest.Main(m, nil) }

// analystQueries are the numbered query files analysts.md shows
// (queries/relations.dql belongs to docs/relations.md and its own test).
func analystQueries(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("queries/[0-9][0-9]-*.dql")
	if err != nil || len(files) < 10 {
		t.Fatalf("want at least ten analyst queries in docs/queries, have %v (%v)", files, err)
	}
	return files
}

// expectation says what one query file must return on the seeded tenant:
// per result block, the Memory.id values found anywhere in it (as a set,
// or in order with ordered), plus any further check.
type expectation struct {
	ids     map[string][]string
	ordered bool
	check   func(t *testing.T, out map[string][]any)
}

var expectations = map[string]expectation{
	"15-named-days.dql": {ids: map[string][]string{"named": {
		// "Im Workshop am 12.03.2026": the only current text naming a day in March 2026.
		"memory_workshop_2026_03_12"}}},
	"14-entity-facts.dql": {ordered: true, ids: map[string][]string{"entity": {
		// by valid_from: the tariff's three versions (two closed) and the client and workshop facts
		"memory_mueller_tarif_v1", "memory_mueller_kunde", "memory_mueller_tarif_v2", "memory_workshop_2026_03_12",
		"memory_mueller_tarif_v3"}}},
	"01-neighbourhood.dql": {ids: map[string][]string{"neighbourhood": {
		"memory_workshop_2026_03_12", "memory_mueller_kunde", "memory_offer_2026_02", "document_qm_handbuch", "memory_quality_review_2026_03_20"}}},
	"02-fact-timeline.dql": {ordered: true, ids: map[string][]string{"timeline": {
		"memory_mueller_tarif_v1", "memory_mueller_tarif_v2", "memory_mueller_tarif_v3"}}}, // from v2, both ways, oldest first
	"03-valid-at.dql": {ids: map[string][]string{"valid": {
		// 2026-03-14: tariff v2 (Feb-Apr), not v1 (closed) or v3 (from April),
		// not the review (stored later), not the failed ingest.
		"document_qm_handbuch", "memory_mueller_kunde", "memory_mueller_tarif_v2", "memory_offer_2026_02", "memory_workshop_2026_03_12"}}},
	"04-most-linked.dql": {
		ids: map[string][]string{"most_linked": {
			"memory_workshop_2026_03_12", "memory_mueller_kunde", "memory_offer_2026_02", "document_qm_handbuch",
			"memory_quality_review_2026_03_20", "memory_mueller_tarif_v1", "memory_mueller_tarif_v2", "memory_mueller_tarif_v3"}},
		check: func(t *testing.T, out map[string][]any) {
			links := map[string]float64{}
			for _, r := range out["most_linked"] {
				m := r.(map[string]any)
				links[m["Memory.id"].(string)] = m["links"].(float64)
			}
			first := out["most_linked"][0].(map[string]any)["Memory.id"]
			// The client's unlinked FOR_CLIENT edge from the review is closed:
			// it counts for neither end.
			if first != "memory_workshop_2026_03_12" || links["memory_workshop_2026_03_12"] != 3 ||
				links["memory_mueller_kunde"] != 2 || links["memory_quality_review_2026_03_20"] != 1 {
				t.Errorf("most linked: first %v, links %v", first, links)
			}
		}},
	"05-documents-and-chunks.dql": {
		ids: map[string][]string{"documents": {"document_qm_handbuch"}},
		check: func(t *testing.T, out map[string][]any) {
			doc := out["documents"][0].(map[string]any)
			var headings []string
			for _, c := range doc["Memory.chunks"].([]any) {
				headings = append(headings, c.(map[string]any)["Chunk.heading"].(string))
			}
			if !slices.Equal(headings, []string{"Geltungsbereich", "Audits", "Schulungen"}) {
				t.Errorf("chunks in order: %v", headings)
			}
		}},
	"06-tag-in-period.dql": {ordered: true, ids: map[string][]string{"tagged": { // tariff v1 is tagged too but from 2025
		"memory_mueller_tarif_v3", "memory_mueller_tarif_v2"}}},
	"07-similar-chunks.dql": {check: func(t *testing.T, out map[string][]any) {
		got := blockIDs(out["similar"])
		// Its own first chunk is the nearest vector; the handbook's audit
		// chapter shares the most words.
		if len(out["similar"]) != 3 || !slices.Contains(got, "memory_quality_review_2026_03_20") || !slices.Contains(got, "document_qm_handbuch") {
			t.Errorf("similar chunks: %v", got)
		}
	}},
	"08-fulltext.dql": {ids: map[string][]string{
		"german":  {"memory_workshop_2026_03_12", "document_qm_handbuch"}, // "Einarbeitungen" -> Einarbeitung
		"english": {"memory_quality_review_2026_03_20"},                   // "review" -> reviews
	}},
	"09-for-client-reverse.dql": {
		// The review's FOR_CLIENT edge was unlinked: not listed.
		ids: map[string][]string{"clients": {"memory_mueller_kunde", "memory_workshop_2026_03_12", "memory_offer_2026_02"}},
		check: func(t *testing.T, out map[string][]any) {
			if n := out["clients"][0].(map[string]any)["open_links"]; n != 2.0 {
				t.Errorf("open_links = %v, want 2", n)
			}
		}},
	"10-counts-by-type.dql": {check: func(t *testing.T, out map[string][]any) {
		for block, want := range map[string]map[string]float64{
			// Documents have no memory_type; the failed reference is not indexed.
			"current":      {"semantic": 2, "episodic": 2, "procedural": 1},
			"all_versions": {"semantic": 4, "episodic": 2, "procedural": 1},
		} {
			got := map[string]float64{}
			for _, g := range out[block][0].(map[string]any)["@groupby"].([]any) {
				m := g.(map[string]any)
				got[m["Memory.memory_type"].(string)] = m["count"].(float64)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", block, got, want)
			}
		}
	}},
	"11-superseded-history.dql": {ordered: true, ids: map[string][]string{"superseded": {
		"memory_mueller_tarif_v2", "memory_mueller_tarif_v3", "memory_mueller_tarif_v1", "memory_mueller_tarif_v2"}}},
	"12-edges-with-facets.dql": {
		ids: map[string][]string{"references": {"memory_quality_review_2026_03_20", "memory_workshop_2026_03_12", "document_qm_handbuch"}},
		check: func(t *testing.T, out map[string][]any) {
			edge := out["references"][0].(map[string]any)["REFERENCES"].([]any)[0].(map[string]any)
			for _, f := range []string{"id", "created_at", "valid_from", "inverse"} {
				if _, ok := edge["REFERENCES|"+f]; !ok {
					t.Errorf("edge facets %v lack %s", edge, f)
				}
			}
		}},
	"13-failed-ingests.dql": {ids: map[string][]string{"failed": {"memory_failed_upload"}}},
}

// runQuery runs a query file's text as an analyst pastes it into Ratel:
// no variables passed, the defaults in the file apply.
func runQuery(t *testing.T, dg *dql.Conn, path string) map[string][]any {
	t.Helper()
	q, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := dg.Query(ctx, string(q), nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out map[string][]any
	if err := json.Unmarshal(resp, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// blockIDs collects every Memory.id in a result block, depth first.
func blockIDs(v any) []string {
	var ids []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if id, ok := x["Memory.id"].(string); ok {
				ids = append(ids, id)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return ids
}

func uniqueSorted(ids []string) []string {
	out := slices.Clone(ids)
	sort.Strings(out)
	return slices.Compact(out)
}

// checkQuery runs one query file and compares the result with its
// expectation.
func checkQuery(t *testing.T, dg *dql.Conn, path string) {
	t.Helper()
	name := filepath.Base(path)
	exp, ok := expectations[name]
	if !ok {
		t.Fatalf("%s has no expectation in docs_test.go: add what it must return on the seeded tenant", name)
	}
	out := runQuery(t, dg, path)
	for block, want := range exp.ids {
		var got []string
		if exp.ordered {
			got = blockIDs(out[block])
		} else {
			got, want = uniqueSorted(blockIDs(out[block])), uniqueSorted(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s block %s: Memory.ids %v, want %v", name, block, got, want)
		}
	}
	if exp.check != nil {
		exp.check(t, out)
	}
}

func TestAnalystQueriesReturnTheDocumentedNodes(t *testing.T) {
	ten := seedTenant(t)
	files := analystQueries(t)
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".dql"), func(t *testing.T) {
			checkQuery(t, dgraphtest.Conn(t, ten), path)
		})
	}
	for name := range expectations {
		if !slices.Contains(files, filepath.Join("queries", name)) {
			t.Errorf("expectation for %s, but there is no such query file", name)
		}
	}
}

// TestAnalystsDocShowsEveryQueryFile keeps analysts.md and the files the
// same: every ```dql block in the markdown is one query file, verbatim,
// and every file is shown once, under a line that names it.
func TestAnalystsDocShowsEveryQueryFile(t *testing.T) {
	md, err := os.ReadFile("analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```dql\n(.*?)```").FindAllSubmatchIndex(md, -1)
	shown := map[string]int{}
	files := analystQueries(t)
	for _, b := range blocks {
		body := strings.TrimSpace(string(md[b[2]:b[3]]))
		before := string(md[max(0, b[0]-400):b[0]])
		match := ""
		for _, f := range files {
			data, _ := os.ReadFile(f)
			if strings.TrimSpace(string(data)) == body {
				match = f
			}
		}
		if match == "" {
			t.Errorf("analysts.md has a dql block that is no file in docs/queries (edit the file, then paste it):\n%s", body)
			continue
		}
		if !strings.Contains(before, match) {
			t.Errorf("analysts.md shows %s without naming it (a link to %s) just above", match, match)
		}
		shown[match]++
	}
	for _, f := range files {
		if shown[f] != 1 {
			t.Errorf("analysts.md shows %s %d times, want once", f, shown[f])
		}
	}
}

// TestQueriesNameEveryRelation: the queries that walk "all relations" list
// each relation predicate of the shipped shapes, so a new relation type in
// shapes/default.yaml shows up here until the docs follow.
func TestQueriesNameEveryRelation(t *testing.T) {
	set, err := shapes.Default()
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile("analysts.md")
	for _, f := range []string{"queries/01-neighbourhood.dql", "queries/04-most-linked.dql"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range set.Names() {
			if !regexp.MustCompile(`\b` + rel + `\b`).Match(data) {
				t.Errorf("%s does not follow relation %s", f, rel)
			}
		}
	}
	for _, rel := range set.Names() {
		if !bytes.Contains(md, []byte("`"+rel+"`")) {
			t.Errorf("analysts.md does not list relation %s", rel)
		}
	}
}

// TestDocumentedQueriesRunAsTheAnalyst: the read-only login `knowmind tenant analyst` hands out
// (graph/analysts_test.go checks what it may do) reads everything the documented queries need.
func TestDocumentedQueriesRunAsTheAnalyst(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a := seedTenant(t)
	cred, err := env.Client.AnalystLogin(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	analyst := dgraphtest.LoginConn(t, cred, env.Alphas...)
	for _, f := range analystQueries(t) {
		checkQuery(t, analyst, f)
	}
}
