package docs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/graph/dql"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/timeq"
)

// The example tenant the queries in docs/queries run against: a small CRM
// graph in the shape the service writes it (Memory and Chunk nodes as
// graph's ingest writes them, relation edges through graph's Link, a
// SUPERSEDES chain as update_fact leaves it), with fixed dates so that
// "valid at" and "in period" queries have one right answer. The ids are
// the ones the .dql files use as defaults, so each file runs in Ratel as is
// against a tenant seeded like this and shows what to replace.

type seedChunk struct{ heading, text string }

type seedMemory struct {
	id, kind, title, memoryType, lang, source string
	tags                                      []string
	chunks                                    []seedChunk
	createdAt, validFrom, validTo             string
	updateReason, status                      string
	entities                                  []string // seedEntities keys
}

// seedEntities are the entities facts name (memory engine): Entity nodes
// keyed "<type>/<id>", pointed at by Memory.entities.
var seedEntities = []struct{ typ, id, name string }{
	{"organisation", "mueller-gmbh", "Müller GmbH"},
}

var seedMemories = []seedMemory{
	{id: "memory_mueller_kunde", title: "Müller GmbH (Kunde)", memoryType: "semantic", lang: "de",
		tags: []string{"class:client", "kunde"}, createdAt: "2026-01-10T09:00:00Z", entities: []string{"organisation/mueller-gmbh"},
		chunks: []seedChunk{{text: "Die Müller GmbH in Detmold ist seit 2024 Kundin. Ansprechpartnerin ist Frau Schmidt."}}},
	{id: "memory_workshop_2026_03_12", title: "Workshop Einarbeitung Müller GmbH", memoryType: "episodic", lang: "de",
		tags: []string{"class:workshop", "workshop"}, createdAt: "2026-03-12T15:00:00Z", entities: []string{"organisation/mueller-gmbh"},
		chunks: []seedChunk{{text: "Im Workshop am 12.03.2026 haben wir die Einarbeitung neuer Mitarbeiter bei der Müller GmbH geplant."}}},
	{id: "memory_offer_2026_02", title: "Angebot Schulungspaket Müller GmbH", memoryType: "procedural", lang: "de",
		tags: []string{"angebot"}, createdAt: "2026-02-15T10:00:00Z",
		chunks: []seedChunk{{text: "Angebot über ein Schulungspaket mit drei Terminen für die Müller GmbH."}}},
	{id: "memory_quality_review_2026_03_20", title: "Quality review minutes", memoryType: "episodic", lang: "en",
		tags: []string{"protokoll", "qm"}, source: "meeting-notes", createdAt: "2026-03-20T11:00:00Z",
		chunks: []seedChunk{{text: "The quality reviews found two open corrective actions; the QM handbook chapter on audits applies."}}},
	// The fact chain: v1 -> v2 -> v3 (update_fact: each new version SUPERSEDES the previous).
	{id: "memory_mueller_tarif_v1", entities: []string{"organisation/mueller-gmbh"}, title: "Tarif Müller GmbH bis 31.01.2026", memoryType: "semantic", lang: "de",
		tags: []string{"tarif"}, createdAt: "2025-06-01T08:00:00Z", validFrom: "2025-06-01T08:00:00Z", validTo: "2026-02-01T00:00:00Z",
		chunks: []seedChunk{{text: "Müller GmbH läuft auf Tarif Basic mit drei Plätzen."}}},
	{id: "memory_mueller_tarif_v2", entities: []string{"organisation/mueller-gmbh"}, title: "Tarif Müller GmbH ab 01.02.2026", memoryType: "semantic", lang: "de",
		tags: []string{"tarif"}, createdAt: "2026-02-01T00:00:00Z", validTo: "2026-04-01T00:00:00Z",
		updateReason: "Upgrade auf Business",
		chunks:       []seedChunk{{text: "Müller GmbH läuft auf Tarif Business mit fünf Plätzen."}}},
	{id: "memory_mueller_tarif_v3", entities: []string{"organisation/mueller-gmbh"}, title: "Tarif Müller GmbH ab 01.04.2026", memoryType: "semantic", lang: "de",
		tags: []string{"tarif"}, createdAt: "2026-04-01T00:00:00Z",
		updateReason: "Zwei Plätze dazu",
		chunks:       []seedChunk{{text: "Müller GmbH läuft auf Tarif Business mit sieben Plätzen."}}},
	// Documents have no memory_type or tags (knowmind_upload_document takes none).
	{id: "document_qm_handbuch", kind: "document", title: "QM-Handbuch", lang: "de",
		createdAt: "2025-11-03T12:00:00Z", source: "qm-handbuch-v3.md",
		chunks: []seedChunk{
			{heading: "Geltungsbereich", text: "Dieses Handbuch gilt für alle Standorte der Firma."},
			{heading: "Audits", text: "Interne Audits finden zweimal im Jahr statt; Abweichungen werden als Korrekturmaßnahmen erfasst."},
			{heading: "Schulungen", text: "Jede Einarbeitung umfasst eine Schulung zum Qualitätsmanagement."},
		}},
	// A failed ingest: kept with status failed and no chunks, never searchable.
	{id: "memory_failed_upload", title: "Scan Lieferschein", memoryType: "reference", lang: "de",
		tags: []string{"scan"}, createdAt: "2026-03-25T09:30:00Z", status: "failed"},
}

// seedLinks are written with graph's Link, which materialises the inverse.
var seedLinks = []struct{ from, rel, to string }{
	{"memory_workshop_2026_03_12", "FOR_CLIENT", "memory_mueller_kunde"},
	{"memory_offer_2026_02", "FOR_CLIENT", "memory_mueller_kunde"},
	{"memory_quality_review_2026_03_20", "REFERENCES", "document_qm_handbuch"},
	{"memory_workshop_2026_03_12", "RELATES_TO", "memory_offer_2026_02"},
	{"memory_workshop_2026_03_12", "REFERENCES", "document_qm_handbuch"},
}

// seedUnlinks are linked and then unlinked: closed edges (valid_to set)
// that the open-edge filters must leave out.
var seedUnlinks = []struct{ from, rel, to string }{
	{"memory_quality_review_2026_03_20", "FOR_CLIENT", "memory_mueller_kunde"},
}

var (
	seedOnce   sync.Once
	seeded     *graph.Tenant
	seedErr    error
	seedVector = map[string]string{} // memory id -> its first chunk's vector
)

// seedTenant creates and fills the example tenant once per test binary.
func seedTenant(t *testing.T) *graph.Tenant {
	t.Helper()
	seedOnce.Do(func() {
		ten := dgraphtest.NewTenant(t)
		seedErr = seed(context.Background(), dgraphtest.Conn(t, ten), ten)
		seeded = ten
	})
	if seedErr != nil {
		t.Fatalf("seed: %v", seedErr)
	}
	return seeded
}

// seed writes the example through raw (a client on ten's namespace) in the shapes ingest writes,
// links through the service, and writes the history edges update_fact leaves.
func seed(ctx context.Context, raw *dql.Conn, ten *graph.Tenant) error {
	// The service's default embedder, so the vectors are what a default
	// install stores.
	emb, err := embed.New(embed.Config{})
	if err != nil {
		return err
	}
	defer emb.Close()
	var nodes []map[string]any
	for _, e := range seedEntities {
		key := e.typ + "/" + e.id
		nodes = append(nodes, map[string]any{"uid": entityBlank(key), "dgraph.type": "Entity", "Entity.key": key,
			"Entity.type": e.typ, "Entity.id": e.id, "Entity.name": e.name, "Entity.created_at": "2025-06-01T08:00:00Z"})
	}
	for _, m := range seedMemories {
		n, err := memoryNode(ctx, emb, m)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
	}
	js, _ := json.Marshal(nodes)
	if err := raw.SetJSON(ctx, js); err != nil {
		return fmt.Errorf("write memories: %w", err)
	}
	for _, l := range seedLinks {
		if _, err := ten.Link(ctx, l.from, l.to, l.rel); err != nil {
			return fmt.Errorf("link %s %s %s: %w", l.from, l.rel, l.to, err)
		}
	}
	for _, l := range seedUnlinks {
		if _, err := ten.Link(ctx, l.from, l.to, l.rel); err != nil {
			return fmt.Errorf("link %s %s %s: %w", l.from, l.rel, l.to, err)
		}
		if _, err := ten.Unlink(ctx, l.from, l.to, l.rel); err != nil {
			return fmt.Errorf("unlink %s %s %s: %w", l.from, l.rel, l.to, err)
		}
	}
	if err := supersede(ctx, raw, "memory_mueller_tarif_v2", "memory_mueller_tarif_v1"); err != nil {
		return err
	}
	return supersede(ctx, raw, "memory_mueller_tarif_v3", "memory_mueller_tarif_v2")
}

// memoryNode is the JSON the ingest path writes for one memory or document
// (graph/ingest.go): German chunk text under the @de tag, English untagged.
func memoryNode(ctx context.Context, emb embed.Embedder, m seedMemory) (map[string]any, error) {
	kind, status, validFrom := m.kind, m.status, m.validFrom
	if kind == "" {
		kind = "memory"
	}
	if status == "" {
		status = "indexed"
	}
	if validFrom == "" {
		validFrom = m.createdAt
	}
	var content []string
	for _, c := range m.chunks {
		content = append(content, c.text)
	}
	sum := sha256.Sum256([]byte(strings.Join(content, "\n\n")))
	n := map[string]any{
		"uid": "_:" + m.id, "dgraph.type": "Memory",
		"Memory.id": m.id, "Memory.kind": kind, "Memory.title": m.title, "Memory.content": strings.Join(content, "\n\n"),
		"Memory.preview":     runes.Truncate(strings.Join(content, "\n\n"), knowmind.RecallMaxContentChars),
		"Memory.status":      status,
		"Memory.content_sha": hex.EncodeToString(sum[:]), "Memory.lang": m.lang,
		"Memory.created_at": m.createdAt, "Memory.updated_at": m.createdAt, "Memory.valid_from": validFrom,
		"Memory.chunk_count": 0,
	}
	if m.memoryType != "" {
		n["Memory.memory_type"] = m.memoryType
	}
	if len(m.tags) > 0 {
		n["Memory.tags"] = m.tags
	}
	if m.source != "" {
		n["Memory.source"] = m.source
	}
	if m.validTo != "" {
		n["Memory.valid_to"] = m.validTo
	}
	if m.updateReason != "" {
		n["Memory.update_reason"] = m.updateReason
	}
	if at, err := time.Parse(time.RFC3339, validFrom); err == nil {
		var dates []string
		for _, d := range timeq.Dates(strings.Join(content, "\n\n"), at, knowmind.MaxMemoryDates) {
			dates = append(dates, d.Format(time.RFC3339))
		}
		if len(dates) > 0 {
			n["Memory.dates"] = dates
		}
	}
	var ents []map[string]string
	for _, key := range m.entities {
		ents = append(ents, map[string]string{"uid": entityBlank(key)})
	}
	if len(ents) > 0 {
		n["Memory.entities"] = ents
	}
	if status != "indexed" {
		n["Memory.error"] = "embedding provider unreachable"
		return n, nil
	}
	texts := make([]string, len(m.chunks))
	for i, c := range m.chunks {
		header := m.title
		if c.heading != "" {
			header += " > " + c.heading
		}
		texts[i] = header + "\n\n" + c.text
	}
	vecs, err := emb.EmbedPassages(ctx, texts)
	if err != nil {
		return nil, err
	}
	textPred := "Chunk.text"
	if m.lang == "de" {
		textPred = "Chunk.text@de"
	}
	var chunks []map[string]any
	for i, c := range m.chunks {
		ch := map[string]any{
			"uid": fmt.Sprintf("_:%s_c%d", m.id, i), "dgraph.type": "Chunk",
			textPred: texts[i], "Chunk.embedding": graph.VectorString(vecs[i]), "Chunk.position": i,
		}
		if c.heading != "" {
			ch["Chunk.heading"] = c.heading
		}
		chunks = append(chunks, ch)
		if i == 0 {
			seedVector[m.id] = graph.VectorString(vecs[i])
		}
	}
	n["Memory.chunks"] = chunks
	n["Memory.chunk_count"] = len(chunks)
	return n, nil
}

// entityBlank is the blank node of a seeded entity in the seed's one mutation.
func entityBlank(key string) string {
	return "_:entity_" + strings.NewReplacer("/", "_", "-", "_").Replace(key)
}

// supersede writes the two history edges update_fact writes between a new
// version and the one it replaces (graph/facts.go): newer -SUPERSEDES->
// older and the materialised older -SUPERSEDED_BY-> newer, with the facets
// every relation edge has. The memories' validity is already seeded.
func supersede(ctx context.Context, raw *dql.Conn, newer, older string) error {
	q := `query q($n: string, $o: string) { n as var(func: eq(Memory.id, $n)) o as var(func: eq(Memory.id, $o)) }`
	var at string
	for _, m := range seedMemories {
		if m.id == newer {
			at = m.createdAt
		}
	}
	ts, _ := time.Parse(time.RFC3339, at)
	facets := func(id string, inverse bool) string {
		return fmt.Sprintf(`(id=%q, created_at=%s, valid_from=%s, inverse=%t)`, id,
			ts.Format(time.RFC3339Nano), ts.Format(time.RFC3339Nano), inverse)
	}
	nquads := fmt.Sprintf("uid(n) <SUPERSEDES> uid(o) %s .\nuid(o) <SUPERSEDED_BY> uid(n) %s .",
		facets(graph.EdgeID(newer, "SUPERSEDES", older), false),
		facets(graph.EdgeID(older, "SUPERSEDED_BY", newer), true))
	return raw.Upsert(ctx, q, map[string]string{"$n": newer, "$o": older}, []byte(nquads))
}

// TestSeedLooksLikeWhatTheServiceWrites stores a memory, a document and a
// fact update through graph's real ingest path in a second tenant and
// checks that the seeded example uses the same predicates per node kind,
// the same text language tags and the same edge facets, so the queries
// this page documents are tested on the graph the service really writes.
func TestSeedLooksLikeWhatTheServiceWrites(t *testing.T) {
	ctx := context.Background()
	seededTen := seedTenant(t)
	real := dgraphtest.NewTenant(t)
	mem, err := real.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Müller GmbH (Kunde)", MemoryType: "semantic",
		Tags: []string{"class:client"}, Source: "crm", Content: "Die Müller GmbH in Detmold ist seit 2024 Kundin. Ansprechpartnerin ist Frau Schmidt.",
		Entities: []knowmind.CandidateEntity{{Type: "organisation", Name: "Müller GmbH"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := real.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Quality review minutes", MemoryType: "episodic",
		Content: "The quality reviews found two open corrective actions; the QM handbook chapter on audits applies."}); err != nil {
		t.Fatal(err)
	}
	if _, err := real.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "QM-Handbuch", Source: "qm-handbuch-v3.md",
		Content: "# Geltungsbereich\n\nDieses Handbuch gilt für alle Standorte der Firma.\n\n# Audits\n\nInterne Audits finden zweimal im Jahr statt; Abweichungen werden als Korrekturmaßnahmen erfasst.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := real.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: mem.ID, NewTitle: "Müller GmbH (Kunde seit 2023)",
		NewContent: "Die Müller GmbH in Detmold ist seit 2023 Kundin.", UpdateReason: "Datum korrigiert"}); err != nil {
		t.Fatal(err)
	}
	for _, what := range []struct{ name, fn, filter string }{
		{"memory", `type(Memory)`, `eq(Memory.kind, "memory") AND eq(Memory.status, "indexed")`},
		{"document", `eq(Memory.kind, "document")`, `eq(Memory.status, "indexed")`},
		{"chunk", `type(Chunk)`, `has(Chunk.position)`},
	} {
		got, want := usedPredicates(t, seededTen, what.fn, what.filter), usedPredicates(t, real, what.fn, what.filter)
		if !slices.Equal(got, want) {
			t.Errorf("%s nodes: the seed uses %v, the service writes %v", what.name, got, want)
		}
	}
	for _, rel := range []string{"SUPERSEDES", "SUPERSEDED_BY"} {
		got, want := edgeFacets(t, seededTen, rel), edgeFacets(t, real, rel)
		if !slices.Equal(got, want) {
			t.Errorf("%s facets: the seed writes %v, the service %v", rel, got, want)
		}
	}
}

// usedPredicates lists the predicates that at least one selected node
// has; Chunk.text is listed per language tag ("Chunk.text" untagged,
// "Chunk.text@de"), since has() does not tell them apart.
func usedPredicates(t *testing.T, ten *graph.Tenant, fn, filter string) []string {
	t.Helper()
	ctx := context.Background()
	resp, err := dgraphtest.Conn(t, ten).Query(ctx, `schema {}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Schema []struct{ Predicate string } `json:"schema"`
	}
	if err := json.Unmarshal(resp, &schema); err != nil {
		t.Fatal(err)
	}
	var preds []string
	for _, s := range schema.Schema {
		// Node fields only (Type.field): relation predicates depend on
		// what is linked, and are compared through their facets.
		if strings.Contains(s.Predicate, ".") && !strings.HasPrefix(s.Predicate, "dgraph.") &&
			!strings.HasPrefix(s.Predicate, "Meta.") && s.Predicate != "Chunk.text" {
			preds = append(preds, s.Predicate)
		}
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, p := range preds {
		fmt.Fprintf(&b, "  p%d(func: %s) @filter((%s) AND has(<%s>)) { count(uid) }\n", i, fn, filter, p)
	}
	fmt.Fprintf(&b, "  untagged(func: %s) @filter(%s) { t: Chunk.text }\n  de(func: %s) @filter(%s) { t: Chunk.text@de }\n}", fn, filter, fn, filter)
	resp, err = dgraphtest.Conn(t, ten).Query(ctx, b.String(), nil)
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	var out map[string][]map[string]any
	if err := json.Unmarshal(resp, &out); err != nil {
		t.Fatal(err)
	}
	var used []string
	for i, p := range preds {
		if r := out[fmt.Sprintf("p%d", i)]; len(r) > 0 && r[0]["count"].(float64) > 0 {
			used = append(used, p)
		}
	}
	for key, name := range map[string]string{"untagged": "Chunk.text", "de": "Chunk.text@de"} {
		if slices.ContainsFunc(out[key], func(m map[string]any) bool { return m["t"] != nil }) {
			used = append(used, name)
		}
	}
	sort.Strings(used)
	return used
}

// edgeFacets lists the facet names on the rel edges of a tenant.
func edgeFacets(t *testing.T, ten *graph.Tenant, rel string) []string {
	t.Helper()
	resp, err := dgraphtest.Conn(t, ten).Query(context.Background(), `{ q(func: has(`+rel+`)) { `+rel+` @facets { uid } } }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Q []map[string][]map[string]any }
	if err := json.Unmarshal(resp, &out); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range out.Q {
		for _, e := range n[rel] {
			for k := range e {
				if f, ok := strings.CutPrefix(k, rel+"|"); ok {
					seen[f] = true
				}
			}
		}
	}
	var names []string
	for f := range seen {
		names = append(names, f)
	}
	sort.Strings(names)
	return names
}
