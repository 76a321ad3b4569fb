package graph

// The DQL of knowmind_recall and knowmind_recall_at_time: the one request that finds a recall's
// candidates and their graph neighbourhood (recallQuery), rendered from a plan, and the request
// that reads the details of the hits chosen (recallDetailsQuery). recall.go sends them.

import (
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/search"
)

// HNSW's query-time ef and the edge fan-out; the candidate budgets are package search's.
const (
	// vectorEF is similar_to's query-time ef (the HNSW search list; its default is 90) when
	// HNSW is the vector signal (no exact search): Dgraph v25.2.0's HNSW misses many true
	// neighbours at the default, and its recall falls with corpus size (docs/recall.md).
	vectorEF = 2000
	// VectorEF and ExactVectorEF are the two for the benchmarks' labels.
	VectorEF      = vectorEF
	ExactVectorEF = exactVectorEF
	// exactVectorEF is similar_to's ef next to the exact search (vecindex.go), where HNSW is
	// only the safety net for chunks the service has not seen yet, a fraction of vectorEF's cost.
	exactVectorEF = 200
	// edgeFanout bounds the neighbours followed per node, relation and direction, so a hub node
	// (a client with a thousand workshops) cannot blow up the neighbourhood.
	edgeFanout = 25
)

// Facet filters on relation edges, the rule of relations.go: an edge is open while it has no
// valid_to (a facet filter on a missing facet is false, so NOT le(...) holds exactly for open
// edges); at time T it is valid when valid_from <= T < valid_to.
const (
	edgeOpenFilter   = `NOT le(valid_to, "9999-12-31T23:59:59Z")`
	edgeAtTimeFilter = `le(valid_from, "%[1]s") AND NOT le(valid_to, "%[1]s")`
)

// Memory filters: what recall may return. Failed ingests never (status indexed only);
// recall: current versions only (no valid_to: update_fact sets it on the superseded one);
// recall_at_time: valid at $asof (valid_from <= $asof < valid_to).
//
// Each is written so that Dgraph reads the small sets, never the big one: eq(Memory.status,
// "indexed") read the index entry of every memory of the tenant (100k uids at 100k memories)
// each time a filter ran, five or more times per recall, and NOT has(Memory.valid_to) cost
// milliseconds per recall at 100k even with no valid_to stored (docs/dgraph-notes.md, DQL). Their negations read the other
// statuses (failed, pending, trashed: few) and the superseded memories, and mean the same for
// memory nodes, which always have a status (ingest writes it) — a hop reaches nothing else.
// valid_from <= $asof has no small side (le reads every memory written before $asof, gt every
// one after — a bulk import puts a whole tenant in one hour of the index — and comparing a
// value variable, le(val(v), $asof), costs more than the rest of the filter), so Dgraph leaves
// it out and the service compares the valid_from the request reads for every memory it may
// return: the candidates' (recallResponse.validAt) and the hops' eligible neighbours (ok,
// parseHops). A hop may thus pass through a memory that became valid after $asof, along edges
// valid at $asof (only back-dated edges or a future occurred_at make such a pair); it is never
// returned. Measured at 100k in docs/recall.md.
var (
	memoryCurrentFilter = `NOT eq(Memory.status, ` + otherStatuses + `) AND NOT le(Memory.valid_to, "9999-12-31T23:59:59Z")`
	memoryAtTimeFilter  = `NOT eq(Memory.status, ` + otherStatuses + `) AND NOT le(Memory.valid_to, $asof)`
)

// otherStatuses are the statuses a recallable memory does not have: every status but indexed.
var otherStatuses = `["` + knowmind.StatusPending + `", "` + knowmind.StatusFailed + `", "` + knowmind.StatusTrashed + `"]`

// recallQuery is the one DQL request of a recall. Blocks:
//
//	VH      HNSW's approximate top-N chunks
//	VX      the exact top-N chunks by the service's own scan of the vectors (vecindex.go),
//	        given by uid. Normally (recallPlan.served) the service has scored them itself
//	        and VX is the whole vector step: no VH, no VC, no pools, no vector read — the
//	        request starts from a few dozen uids. search.Plan.DgraphVectorScores (a benchmark
//	        comparison) adds VH at a small ef as a safety net and VC re-scoring in Dgraph
//	PD, PE  a wider full-text pool per language (same rarest-first words, bigger budget),
//	        only without VX: they catch true neighbours HNSW missed
//	VC      vector candidates: VH, VX, the text candidates and the pools, each re-scored exactly
//	        (vs = dot product with the query vector = cosine, vectors being unit length). The
//	        chunks holding the query's most specific words catch true neighbours HNSW missed,
//	        at the cost of reading their vectors. vec keeps the best N by exact score.
//	TD, TE  full-text candidates: German analysis on Chunk.text@de, English on untagged text
//	SV, SD, SE  graph seeds: the best vector chunks by exact score and the chunks holding the
//	        query's rarest words (search.GraphSeeds); S0 their memories
//	hopN    the open edges (or valid at as_of) of the previous frontier (S0, then FN-1) over
//	        every relation predicate, outgoing only: every writer materialises a link's inverse
//	        (relations.go), so a node's own edges already reach its incoming links and ~REL
//	        would read each of them a second time. EN the neighbours that pass the memory
//	        filter — once per hop over the reached set, not once per edge list (32 filters per
//	        node before); FN the new ones among them, the next frontier
//	ok      the eligible neighbours of all hops (E1, E2, …): the service keeps only edges to
//	        these (an edge list is read unfiltered, so the fan-out cap counts ineligible
//	        neighbours too)
//	vec     vector candidates, best exact score first, each with its eligible memory (and
//	        its time where the question or as_of needs it)
//	txt     text candidates with their text (for BM25) and their eligible memory (as vec)
//
// It reads uids and the text candidates' text only: the details of the memories (id, title,
// preview, a document's chunk) are read by recallDetailsQuery for the hits chosen, a few of the
// hundreds of memories this request reaches.
var recallQuery = template.Must(template.New("recall").Parse(`query recall($vec: float32vector, $de: string, $en: string, $sde: string, $sen: string, $vde: string, $ven: string, $asof: string) {
{{- if .Served}}
  VX as var(func: uid({{.Exact}}))
{{- else if .Vector}}
  VH as var(func: similar_to(Chunk.embedding, {{.VectorN}}, $vec, ef: {{.VectorEF}}))
{{- if .Exact}}
  VX as var(func: uid({{.Exact}}))
{{- end}}
  VC as var(func: uid({{.VectorPool}})) {
    emb as Chunk.embedding
    vs as math(emb dot $vec)
  }
{{- end}}
{{- if .TextServed}}
  TX as var(func: uid({{.TextUIDs}}))
{{- end}}
{{- if .TextDE}}
  TD as var(func: anyoftext(Chunk.text@de, $de), first: {{.TextCap}})
{{- end}}
{{- if .TextEN}}
  TE as var(func: anyoftext(Chunk.text, $en), first: {{.TextCap}})
{{- end}}
{{- if .PoolDE}}
  PD as var(func: anyoftext(Chunk.text@de, $vde), first: {{.PoolCap}})
{{- end}}
{{- if .PoolEN}}
  PE as var(func: anyoftext(Chunk.text, $ven), first: {{.PoolCap}})
{{- end}}
{{- if .Hops}}
{{- if .Served}}
  SV as var(func: uid({{.ExactSeeds}}))
{{- else if .Vector}}
  SV as var(func: uid(VC), orderdesc: val(vs), first: {{.Seeds}})
{{- end}}
{{- if .SeedDE}}
  SD as var(func: anyoftext(Chunk.text@de, $sde), first: {{.Seeds}})
{{- end}}
{{- if .SeedEN}}
  SE as var(func: anyoftext(Chunk.text, $sen), first: {{.Seeds}})
{{- end}}
{{- if .TextSeeds}}
  SX as var(func: uid({{.TextSeeds}}))
{{- end}}
  var(func: uid({{.SeedVars}})) {
    S0 as ~Memory.chunks @filter({{.MemoryFilter}})
  }
{{- end}}
{{- range $h := .Hops}}
{{- range $i, $rel := $.Relations}}
  hop{{$h.N}}e{{$i}}(func: uid({{$h.From}})) {
    uid
    h{{$h.N}}r{{$i}} as e: <{{$rel}}> (first: {{$.Fanout}}) @facets({{$.EdgeFilter}}) { uid }
  }
{{- end}}
  E{{$h.N}} as var(func: uid({{$h.Reached}})) @filter({{$.MemoryFilter}})
{{- if $h.Next}}
  F{{$h.N}} as var(func: uid(E{{$h.N}})) @filter(NOT uid({{$h.Seen}}))
{{- end}}
{{- end}}
{{- if .Hops}}
  ok(func: uid({{.Eligible}})) { uid{{if .AtTime}} f: Memory.valid_from{{end}} }
{{- end}}
{{- if .Served}}
  vec(func: uid(VX)) {
    uid
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid{{.MemoryTime}} }
  }
{{- else if .Vector}}
  vec(func: uid(VC), orderdesc: val(vs), first: {{.VectorN}}) {
    uid
    s: val(vs)
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid{{.MemoryTime}} }
  }
{{- end}}
{{- if .TextServed}}
  txt(func: uid(TX)) {
    uid
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid{{.MemoryTime}} }
  }
{{- else if or .TextDE .TextEN}}
  txt(func: uid({{.TextVars}})) {
    uid
    de: Chunk.text@de
    en: Chunk.text
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid{{.MemoryTime}} }
  }
{{- end}}
}`))

type recallHop struct {
	N             int
	From, Reached string // uid() argument lists
	Seen          string
	Next          bool // another hop follows: FN, the new frontier, is needed
}

type recallQueryArgs struct {
	Vector         bool
	VectorN        int
	VectorEF       int
	VectorPool     string // uid() arguments whose chunks are re-scored exactly: VH and the text candidates
	Exact          string // uids of the exact search's top chunks ("" = none)
	Served         bool   // the service scored the vector candidates: VX alone, no HNSW, no re-score
	ExactSeeds     string // with Served: the best search.GraphSeeds of Exact
	VectorVar      string // the block holding the vector candidates: VC, or VX when Served
	TextDE, TextEN bool
	TextServed     bool   // the service searched its own text index: TX by uid, no anyoftext
	TextUIDs       string // with TextServed: the chunks it proposes
	TextSeeds      string // with TextServed: the chunks holding the rarest query words, graph seeds (SX)
	TextCap        int
	TextVars       string
	MemoryFilter   string
	AtTime         bool   // MemoryFilter is memoryAtTimeFilter: ok reads valid_from, the service compares it
	MemoryTime     string // what the candidates' memories are read with beside uid: recallPlan.validFrom, .dates
	EdgeFilter     string
	Relations      []string
	Fanout         int
	Hops           []recallHop
	Eligible       string // the hops' E vars: every neighbour that passed the memory filter
	Seeds          int
	SeedDE, SeedEN bool
	SeedVars       string
	PoolDE, PoolEN bool // wider full-text pools for the vector re-score (PD, PE)
	PoolCap        int
}

// recallPlan is what one recall asks Dgraph for.
type recallPlan struct {
	vector         bool     // vector candidates
	textDE, textEN bool     // full-text candidates per stored language
	seedDE, seedEN bool     // full-text graph seeds per stored language
	poolDE, poolEN bool     // full-text pools for the vector re-score per stored language
	exact          []uint64 // the exact vector search's top chunks, best first (nil: not searched)
	// textServed: the service searched its own text index (bm25.Index.Search): textUIDs are
	// the candidates, textSeeds the chunks holding the rarest query words (graph seeds), sent by
	// uid; no anyoftext, no text read.
	textServed bool
	textUIDs   []uint64
	textSeeds  []uint64
	// served: the service scored the exact candidates itself (RecallRequest.vecScore), so the
	// query only maps them to their eligible memories: no HNSW and no vectors read.
	served    bool
	hops      int
	asOf      *time.Time
	relations []string
	// validFrom, dates: read the candidates' Memory.valid_from, Memory.dates (the time signals
	// and as_of need them; search.TimeReads). Most questions need neither, and reading them for
	// every candidate memory was a measurable part of the request (docs/recall.md).
	validFrom, dates bool
}

// buildRecallQuery renders recallQuery. Relation names come from the shapes set (validated
// UPPER_SNAKE names); as_of is a time formatted here; everything a client typed travels as a
// variable.
func buildRecallQuery(p recallPlan) (string, error) {
	a := recallQueryArgs{
		Vector: p.vector, VectorN: search.VectorCandidates, VectorEF: vectorEF,
		TextDE: p.textDE, TextEN: p.textEN, TextCap: search.TextCap,
		MemoryFilter: memoryCurrentFilter, EdgeFilter: edgeOpenFilter,
		Relations: p.relations, Fanout: edgeFanout, Seeds: search.GraphSeeds,
	}
	if p.validFrom || p.asOf != nil {
		a.MemoryTime += " f: Memory.valid_from"
	}
	if p.dates {
		a.MemoryTime += " d: Memory.dates"
	}
	if p.asOf != nil {
		a.MemoryFilter, a.AtTime = memoryAtTimeFilter, true
		a.EdgeFilter = fmt.Sprintf(edgeAtTimeFilter, p.asOf.UTC().Format(time.RFC3339Nano))
	}
	var cands, text, seeds []string
	a.VectorVar = "VC"
	if p.vector && p.served && len(p.exact) > 0 {
		a.Served, a.VectorVar = true, "VX"
		a.Exact = formatUIDs(p.exact)
		a.ExactSeeds = formatUIDs(p.exact[:min(len(p.exact), search.GraphSeeds)])
	}
	if p.vector {
		cands, seeds = append(cands, a.VectorVar), append(seeds, "SV")
	}
	if p.textDE {
		cands, text = append(cands, "TD"), append(text, "TD")
	}
	if p.textEN {
		cands, text = append(cands, "TE"), append(text, "TE")
	}
	if p.textServed && len(p.textUIDs) > 0 {
		a.TextServed, a.TextUIDs = true, formatUIDs(p.textUIDs)
		a.TextDE, a.TextEN = false, false
		cands, text = append(cands, "TX"), []string{"TX"}
	}
	pool := append([]string{"VH"}, text...)
	a.PoolDE, a.PoolEN, a.PoolCap = p.vector && p.poolDE, p.vector && p.poolEN, search.VectorPoolCap
	if p.vector && p.exact != nil && !a.Served {
		// The exact candidates make the pools and a wide HNSW search pointless.
		a.Exact, a.VectorEF = formatUIDs(p.exact), exactVectorEF
		a.PoolDE, a.PoolEN = false, false
		pool = append(pool, "VX")
	}
	if a.PoolDE {
		pool = append(pool, "PD")
	}
	if a.PoolEN {
		pool = append(pool, "PE")
	}
	a.VectorPool = strings.Join(pool, ", ")
	if a.Served {
		a.PoolDE, a.PoolEN = false, false
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("recall query without candidates")
	}
	a.TextVars = strings.Join(text, ", ")
	a.SeedDE, a.SeedEN = p.seedDE && p.textDE, p.seedEN && p.textEN
	if a.SeedDE {
		seeds = append(seeds, "SD")
	}
	if a.SeedEN {
		seeds = append(seeds, "SE")
	}
	if a.TextServed && len(p.textSeeds) > 0 {
		a.TextSeeds = formatUIDs(p.textSeeds)
		seeds = append(seeds, "SX")
	}
	a.SeedVars = strings.Join(seeds, ", ")
	if len(p.relations) > 0 && len(seeds) > 0 {
		seen, eligible := []string{"S0"}, []string{}
		for n := 1; n <= p.hops; n++ {
			h := recallHop{N: n, From: "S0", Seen: strings.Join(seen, ", "), Next: n < p.hops}
			if n > 1 {
				h.From = "F" + strconv.Itoa(n-1)
			}
			reached := make([]string, 0, len(p.relations))
			for i := range p.relations {
				reached = append(reached, fmt.Sprintf("h%dr%d", n, i))
			}
			h.Reached = strings.Join(reached, ", ")
			a.Hops = append(a.Hops, h)
			seen = append(seen, "F"+strconv.Itoa(n))
			eligible = append(eligible, "E"+strconv.Itoa(n))
		}
		a.Eligible = strings.Join(eligible, ", ")
	}
	var b strings.Builder
	if err := recallQuery.Execute(&b, a); err != nil {
		return "", err
	}
	return b.String(), nil
}

// recallAttrsBlock is added to recallDetailsQuery when a filter reads the hits' category and
// entities (retrieve's relevance mode).
const recallAttrsBlock = `
  attrs(func: uid(%s)) { uid Memory.category Memory.entities { Entity.type Entity.id } }`

// recallDetailsQuery reads what a recall returns of the memories it chose, once they are
// chosen (the second request of a recall, in the same read-only transaction; sent again for
// the next fused entries when the caller may not see some of these): id, kind, title, source
// and validity; their stored preview (the first knowmind.RecallMaxContentChars characters:
// every write stores it, and stores older than schema 5 got theirs on open, previews.go),
// never the whole content; for notes what their visibility depends on (owner, class, project)
// and what search filters on (path, tags); for documents the chunk that represents the hit
// (%[2]s, when it is not a text candidate whose text the first request read:
// recallChunksBlock) and the first chunk, chosen by eq(Chunk.position, 0): an orderasc over a
// predicate has a fixed cost per request whatever the number of uids, even none
// (docs/dgraph-notes.md, DQL). Reading these for every candidate and neighbour (hundreds) cost
// more than the second round trip. %[1]s and %[2]s are uid lists Dgraph returned; %[3]s and
// %[4]s are recallNoteSince's block and field for a recall as of a time, empty otherwise.
const recallDetailsQuery = `{%[3]s
  mem(func: uid(%[1]s)) {
    uid
    Memory.id
    Memory.kind
    Memory.title
    Memory.source
    Memory.valid_from
    Memory.valid_to
  }
  content(func: uid(%[1]s)) @filter(NOT eq(Memory.kind, "document")) {
    uid
    Memory.preview
  }
  notes(func: uid(%[1]s)) @filter(eq(Memory.kind, "note")) {
    uid Memory.id Memory.tags Note.path Note.class Note.owner Note.project { uid Project.handle Project.aliases }
    Memory.created_at%[4]s
  }
  docs(func: uid(%[1]s)) @filter(eq(Memory.kind, "document")) {
    uid
    head: Memory.chunks @filter(eq(Chunk.position, 0)) { uid de: Chunk.text@de en: Chunk.text }
  }%[2]s
}`

// recallNoteSinceBlock and recallNoteSinceField read, for a recall as of a time, when each
// note hit's present body became current (dgNote.bodySince: a note edited since reads as its
// revision of then). The newest revision's end is the maximum of a value variable:
// an ordering by a predicate has a fixed cost per request even when no hit is a note
// (docs/dgraph-notes.md, DQL).
const (
	recallNoteSinceBlock = `
  var(func: uid(%s)) @filter(eq(Memory.kind, "note")) { ~Revision.note { revEnd as Revision.valid_to } newestEnd as max(val(revEnd)) }`
	recallNoteSinceField = ` newest_revision_end: val(newestEnd)`
)

// recallChunksBlock is recallDetailsQuery's block for the chunks of document hits (%s: uids).
const recallChunksBlock = `
  chunks(func: uid(%s)) {
    uid
    de: Chunk.text@de
    en: Chunk.text
  }`
