package docs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
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
func runQuery(t *testing.T, dg *dgo.Dgraph, path string) map[string][]any {
	t.Helper()
	q, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := dg.NewReadOnlyTxn().Query(ctx, string(q))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out map[string][]any
	if err := json.Unmarshal(resp.Json, &out); err != nil {
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
func checkQuery(t *testing.T, dg *dgo.Dgraph, path string) {
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
			checkQuery(t, ten.DG(), path)
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

// TestAnalystLoginSeesOnlyItsTenant logs in the way an analyst does with
// `knowmind tenant credentials` (gRPC like a client, and HTTP /login +
// /query like Ratel) and checks that no query reaches another tenant or
// the service's own data.
func TestAnalystLoginSeesOnlyItsTenant(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a := seedTenant(t)
	b := dgraphtest.NewTenant(t)
	secretOfB := `_:m <Memory.id> "memory_of_b" .
_:m <Memory.title> "Nur für Mandant B" .
_:m <Memory.tags> "tarif" .
_:m <Memory.kind> "document" .
_:m <Memory.status> "indexed" .
_:m <Memory.valid_from> "2026-01-01T00:00:00Z" .
_:m <Memory.created_at> "2026-03-01T00:00:00Z" .
_:m <dgraph.type> "Memory" .`
	if _, err := b.DG().NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true, SetNquads: []byte(secretOfB)}); err != nil {
		t.Fatal(err)
	}
	// A token exists in the default namespace (the service's).
	if _, _, err := env.Client.CreateToken(ctx, a.Name, []knowmind.Scope{knowmind.ScopeRead}, "analyst-test", nil); err != nil {
		t.Fatal(err)
	}

	cred, err := env.Client.NamespaceCredentials(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Namespace != a.Namespace || cred.User != "groot" || cred.Password == "" {
		t.Fatalf("credentials %+v for namespace %d", cred, a.Namespace)
	}

	analyst := dialAlphas(t, env.Alphas)
	if err := analyst.LoginIntoNamespace(ctx, cred.User, cred.Password, cred.Namespace); err != nil {
		t.Fatalf("analyst login: %v", err)
	}
	// Every documented query runs with the analyst's login and sees only A.
	for _, f := range analystQueries(t) {
		if ids := blockIDs(runQuery(t, analyst, f)); slices.Contains(ids, "memory_of_b") {
			t.Errorf("%s as tenant A's analyst returned tenant B's memory", f)
		}
	}
	all := runQueryText(t, analyst, `{
  memories(func: has(Memory.id)) { Memory.id }
  tenants(func: has(Tenant.name)) { Tenant.name }
  tokens(func: has(Token.hash)) { Token.tenant }
}`)
	if got := len(all["memories"]); got != len(seedMemories) {
		t.Errorf("analyst of A sees %d memories, want A's %d: %v", got, len(seedMemories), blockIDs(all["memories"]))
	}
	if len(all["tenants"]) != 0 || len(all["tokens"]) != 0 {
		t.Errorf("analyst of A sees the service's tenants %v / tokens %v", all["tenants"], all["tokens"])
	}

	// The password opens A's namespace only.
	for _, ns := range []uint64{b.Namespace, 0} {
		other := dialAlphas(t, env.Alphas)
		if err := other.LoginIntoNamespace(ctx, cred.User, cred.Password, ns); err == nil {
			t.Errorf("tenant A's password logs into namespace %d", ns)
		}
	}

	// Ratel's way: HTTP /login with the namespace, then /query with the JWT.
	httpAddr := alphaHTTP(env)
	jwt := httpLogin(t, httpAddr, cred.User, cred.Password, cred.Namespace)
	body := httpQuery(t, httpAddr, jwt, `{ q(func: eq(Memory.tags, "tarif")) { Memory.id } }`)
	if !strings.Contains(body, "memory_mueller_tarif_v1") || strings.Contains(body, "memory_of_b") {
		t.Errorf("Ratel-style query as tenant A: %s", body)
	}

	if _, err := env.Client.NamespaceCredentials(ctx, "no-such-tenant"); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("unknown tenant: %v, want ENOTFOUND", err)
	}
	if _, err := env.Client.NamespaceCredentials(ctx, "Bad Name"); knowmind.ErrorCode(err) != knowmind.EINVALID {
		t.Errorf("invalid tenant name: %v, want EINVALID", err)
	}
}

func runQueryText(t *testing.T, dg *dgo.Dgraph, q string) map[string][]any {
	t.Helper()
	resp, err := dg.NewReadOnlyTxn().Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]any
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// dialAlphas is a client of its own, as Ratel or a notebook would have.
func dialAlphas(t *testing.T, alphas []string) *dgo.Dgraph {
	t.Helper()
	var stubs []api.DgraphClient
	for _, a := range alphas {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		stubs = append(stubs, api.NewDgraphClient(conn))
	}
	return dgo.NewDgraphClient(stubs...)
}

func alphaHTTP(env *dgraphtest.Env) string {
	if len(env.HTTP) > 0 {
		return env.HTTP[0]
	}
	host, port, _ := net.SplitHostPort(env.Alphas[0])
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p-1000))
}

func httpLogin(t *testing.T, addr, user, password string, namespace uint64) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"userid": user, "password": password, "namespace": namespace})
	resp, err := http.Post("http://"+addr+"/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			AccessJWT string `json:"accessJWT"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.AccessJWT == "" {
		t.Fatalf("HTTP /login into namespace %d: %v %+v", namespace, err, out.Errors)
	}
	return out.Data.AccessJWT
}

func httpQuery(t *testing.T, addr, jwt, q string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/query", strings.NewReader(q))
	req.Header.Set("Content-Type", "application/dql")
	req.Header.Set("X-Dgraph-AccessToken", jwt)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP /query: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestAnalystUserIsReadOnly: the login `knowmind tenant analyst` hands out
// reads everything the documented queries need and can change nothing.
func TestAnalystUserIsReadOnly(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	a := seedTenant(t)
	cred, err := env.Client.AnalystLogin(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if cred.User != "analyst" || cred.Namespace != a.Namespace {
		t.Fatalf("analyst credentials %+v", cred)
	}
	analyst := dialAlphas(t, env.Alphas)
	if err := analyst.LoginIntoNamespace(ctx, cred.User, cred.Password, cred.Namespace); err != nil {
		t.Fatalf("analyst login: %v", err)
	}
	for _, f := range analystQueries(t) {
		checkQuery(t, analyst, f)
	}
	_, err = analyst.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true,
		SetNquads: []byte(`_:x <Memory.id> "written_by_analyst" .`)})
	if err == nil {
		t.Error("the analyst could write a memory")
	}
	if err := analyst.Alter(ctx, &api.Operation{Schema: `<Memory.title>: string .`}); err == nil {
		t.Error("the analyst could alter the schema")
	}
	if err := analyst.Alter(ctx, &api.Operation{DropAll: true}); err == nil {
		t.Error("the analyst could drop all data")
	}
	if n := len(runQueryText(t, analyst, `{ q(func: eq(Memory.id, "written_by_analyst")) { uid } }`)["q"]); n != 0 {
		t.Error("the analyst's mutation was stored")
	}
	// Asking again rotates the password.
	again, err := env.Client.AnalystLogin(ctx, a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if again.Password == cred.Password {
		t.Fatal("password not rotated")
	}
	if err := dialAlphas(t, env.Alphas).LoginIntoNamespace(ctx, cred.User, cred.Password, cred.Namespace); err == nil {
		t.Error("the old analyst password still logs in")
	}
	if err := dialAlphas(t, env.Alphas).LoginIntoNamespace(ctx, again.User, again.Password, again.Namespace); err != nil {
		t.Errorf("the new analyst password: %v", err)
	}
}
