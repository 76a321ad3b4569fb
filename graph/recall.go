package graph

// knowmind_recall and knowmind_recall_at_time. This file plans the recall (which words, which
// exact vector candidates), renders and sends its one DQL request (recallQuery below), decodes
// the answer and scores the text candidates with BM25; package rank does the rest — fusion of
// text and vector, graph neighbours, reranking order, and the exact vector top-N. docs/recall.md
// has the measurements behind the constants.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	// goccy/go-json decodes the recall's answers (hundreds of candidates and hop edges) in a
	// third of encoding/json's time, with the same API (docs/recall.md).
	json "github.com/goccy/go-json"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/prf"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/timeq"
	"github.com/knowmind/knowmind/wordvec"
)

// Candidate budgets. Dgraph cannot rank full-text matches and its HNSW search is approximate,
// so recall fetches more candidates than it returns and ranks them itself.
const (
	// vectorOverFetch: similar_to asks HNSW for max(vectorOverFetch·k, vectorMinCandidates)
	// chunks; recall re-scores them exactly and keeps the best k memories. The over-fetch also
	// absorbs chunks whose memory the filters drop (similar_to filters only after its top-k).
	vectorOverFetch     = 10
	vectorMinCandidates = 100
	// vectorEF is similar_to's query-time ef (the HNSW search list; its default is 90) when
	// HNSW is the vector signal (no exact search): Dgraph v25.2.0's HNSW misses many true
	// neighbours at the default, and its recall falls with corpus size (docs/recall.md).
	vectorEF = 2000
	// VectorEF and ExactVectorEF are the two for the benchmarks' labels.
	VectorEF      = vectorEF
	ExactVectorEF = exactVectorEF
	// exactVectorEF is similar_to's ef next to the exact search (vecindex.go), where HNSW is
	// only the safety net for chunks the service has not seen yet: the ef that was recall's
	// before the exact search, a fraction of vectorEF's cost.
	exactVectorEF = 200
	// vectorPoolBudget, vectorPoolCap: the chunks holding the query's words, chosen rarest first
	// like the text candidates but with a wider budget, join the exact vector re-score (they
	// are never BM25-scored), to catch true neighbours HNSW misses when there is no exact search.
	vectorPoolBudget = 2000
	vectorPoolCap    = 3000
	// textBudget bounds the chunks the full-text step fetches per language: the query terms
	// are chosen rarest first (by the tenant's document frequencies) while their summed document
	// frequency stays within it, see matchTerms.
	textBudget = 400
	// textCap is the hard limit of the full-text step per language (first: N takes the lowest
	// uids, not the best, so it must rarely bind: textBudget keeps it from doing so).
	textCap = 1000
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
// 4–8 ms per recall at 100k even with no valid_to stored. Their negations read the other
// statuses (failed, pending, trashed: few) and the superseded memories, and mean the same for
// memory nodes, which always have a status (ingest writes it) — a hop reaches nothing else.
// valid_from <= $asof has no small side (le reads every memory written before $asof, gt every
// one after — a bulk import puts a whole tenant in one hour of the index — and comparing a
// value variable, le(val(v), $asof), cost 14–34 ms more per recall at 100k), so Dgraph leaves
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
//	        request starts from a few dozen uids. Only the DgraphVectorScores ablation keeps
//	        the plan before: VH at a small ef as a safety net and VC re-scoring in Dgraph
//	PD, PE  a wider full-text pool per language (same rarest-first words, bigger budget),
//	        only without VX: they catch true neighbours HNSW missed
//	VC      vector candidates: VH, VX, the text candidates and the pools, each re-scored exactly
//	        (vs = dot product with the query vector = cosine, vectors being unit length). The
//	        chunks holding the query's most specific words catch true neighbours HNSW missed,
//	        at the cost of reading their vectors. vec keeps the best N by exact score.
//	TD, TE  full-text candidates: German analysis on Chunk.text@de, English on untagged text
//	SV, SD, SE  graph seeds: the best vector chunks by exact score and the chunks holding the
//	        query's rarest words (see graphSeeds); S0 their memories
//	hopN    the open edges (or valid at as_of) of the previous frontier (S0, then FN-1) over
//	        every relation predicate, outgoing only: every writer materialises a link's inverse
//	        (relations.go), so a node's own edges already reach its incoming links and ~REL
//	        would read each of them a second time. EN the neighbours that pass the memory
//	        filter — once per hop over the reached set, not once per edge list (32 filters per
//	        node before); FN the new ones among them, the next frontier
//	ok      the eligible neighbours of all hops (E1, E2, …): the service keeps only edges to
//	        these (an edge list is read unfiltered, so the fan-out cap counts ineligible
//	        neighbours too)
//	vec     vector candidates, best exact score first, each with its eligible memory
//	txt     text candidates with their text (for BM25) and their eligible memory
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
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid f: Memory.valid_from }
  }
{{- else if .Vector}}
  vec(func: uid(VC), orderdesc: val(vs), first: {{.VectorN}}) {
    uid
    s: val(vs)
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid f: Memory.valid_from }
  }
{{- end}}
{{- if .TextServed}}
  txt(func: uid(TX)) {
    uid
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid f: Memory.valid_from }
  }
{{- else if or .TextDE .TextEN}}
  txt(func: uid({{.TextVars}})) {
    uid
    de: Chunk.text@de
    en: Chunk.text
    m: ~Memory.chunks @filter({{.MemoryFilter}}) { uid f: Memory.valid_from }
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
	ExactSeeds     string // with Served: the best graphSeeds(k) of Exact
	VectorVar      string // the block holding the vector candidates: VC, or VX when Served
	TextDE, TextEN bool
	TextServed     bool   // the service searched its own text index: TX by uid, no anyoftext
	TextUIDs       string // with TextServed: the chunks it proposes
	TextSeeds      string // with TextServed: the chunks holding the rarest query words, graph seeds (SX)
	TextCap        int
	TextVars       string
	MemoryFilter   string
	AtTime         bool // MemoryFilter is memoryAtTimeFilter: ok reads valid_from, the service compares it
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
	k, hops   int
	asOf      *time.Time
	relations []string
}

// vectorCandidates is how many chunks each vector step (HNSW, the exact search) proposes for
// a recall of k.
func vectorCandidates(k int) int { return max(vectorOverFetch*k, vectorMinCandidates) }

// graphSeeds is how many of the strongest vector chunks, and at most how many chunks holding
// the query's rarest words, seed the graph expansion. A neighbour scores below the hit that
// reached it, so only hits that can end near the top k matter as seeds; expanding from every
// candidate (hundreds) made the 2-hop neighbourhood most of a 10k-memory graph and recall
// 0.5 s slower. The text seeds approximate BM25's top in DQL, where it cannot be computed: the
// chunks holding the query's most specific (highest-IDF) words.
func graphSeeds(k int) int { return max(2*k, 10) }

// buildRecallQuery renders recallQuery. Relation names come from the shapes set (validated
// UPPER_SNAKE names); as_of is a time formatted here; everything a client typed travels as a
// variable.
func buildRecallQuery(p recallPlan) (string, error) {
	a := recallQueryArgs{
		Vector: p.vector, VectorN: vectorCandidates(p.k), VectorEF: vectorEF,
		TextDE: p.textDE, TextEN: p.textEN, TextCap: textCap,
		MemoryFilter: memoryCurrentFilter, EdgeFilter: edgeOpenFilter,
		Relations: p.relations, Fanout: edgeFanout, Seeds: graphSeeds(p.k),
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
		a.ExactSeeds = formatUIDs(p.exact[:min(len(p.exact), graphSeeds(p.k))])
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
	a.PoolDE, a.PoolEN, a.PoolCap = p.vector && p.poolDE, p.vector && p.poolEN, vectorPoolCap
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

// recallDetailsQuery reads what a recall returns of the memories it chose, once they are
// chosen (the second and last request of a recall, in the same read-only transaction): id,
// kind, title, source and validity; their stored preview (the first
// knowmind.RecallMaxContentChars characters), and the whole content only of memories written
// before previews existed; for documents the chunk that represents the hit (%[2]s, when it is
// not a text candidate whose text the first request read: recallChunksBlock) and the first chunk,
// chosen by eq(Chunk.position, 0): an orderasc over a predicate cost Dgraph ~4 ms per request at
// 100k memories whatever the number of uids, even none (docs/dgraph-notes.md). Reading these
// for every candidate and neighbour (hundreds) cost more than the second round trip. %[1]s and
// %[2]s are uid lists Dgraph returned.
const recallDetailsQuery = `{
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
  legacy(func: uid(%[1]s)) @filter(NOT eq(Memory.kind, "document") AND NOT has(Memory.preview)) {
    uid
    Memory.content
  }
  docs(func: uid(%[1]s)) @filter(eq(Memory.kind, "document")) {
    uid
    head: Memory.chunks @filter(eq(Chunk.position, 0)) { uid de: Chunk.text@de en: Chunk.text }
  }%[2]s
}`

// recallChunksBlock is recallDetailsQuery's block for the chunks of document hits (%s: uids).
const recallChunksBlock = `
  chunks(func: uid(%s)) {
    uid
    de: Chunk.text@de
    en: Chunk.text
  }`

// recallResponse is the JSON of recallQuery.
type recallResponse struct {
	Vec []struct {
		UID   string  `json:"uid"`
		Score float64 `json:"s"`
		M     []dgMem `json:"m"`
	} `json:"vec"`
	Txt []struct {
		UID string  `json:"uid"`
		DE  string  `json:"de"`
		EN  string  `json:"en"`
		M   []dgMem `json:"m"`
	} `json:"txt"`
	Mem []struct {
		UID       string     `json:"uid"`
		ID        string     `json:"Memory.id"`
		Kind      string     `json:"Memory.kind"`
		Title     string     `json:"Memory.title"`
		Source    string     `json:"Memory.source"`
		ValidFrom *time.Time `json:"Memory.valid_from"`
		ValidTo   *time.Time `json:"Memory.valid_to"`
	} `json:"mem"`
	Content []struct {
		UID     string `json:"uid"`
		Preview string `json:"Memory.preview"`
	} `json:"content"`
	Legacy []struct {
		UID     string `json:"uid"`
		Content string `json:"Memory.content"`
	} `json:"legacy"`
	Docs []struct {
		UID  string        `json:"uid"`
		Head []dgChunkText `json:"head"`
	} `json:"docs"`
	Chunks []dgChunkText `json:"chunks"`
}

// dgMem is a candidate chunk's memory with what the time signal needs.
type dgMem struct {
	UID       string     `json:"uid"`
	ValidFrom *time.Time `json:"f"`
}

// validAt keeps, of the candidates' memories, those valid from asof on (valid_from <= asof;
// the request checked the rest of memoryAtTimeFilter).
func (out *recallResponse) validAt(asof time.Time) {
	keep := func(ms []dgMem) []dgMem {
		kept := ms[:0]
		for _, m := range ms {
			if m.ValidFrom != nil && !m.ValidFrom.After(asof) {
				kept = append(kept, m)
			}
		}
		return kept
	}
	for i := range out.Vec {
		out.Vec[i].M = keep(out.Vec[i].M)
	}
	for i := range out.Txt {
		out.Txt[i].M = keep(out.Txt[i].M)
	}
}

// candidateMemories lists the memories of the text and vector candidates (a memory once per
// candidate chunk that reached it).
func (out *recallResponse) candidateMemories() []dgMem {
	var mems []dgMem
	for _, c := range out.Txt {
		mems = append(mems, c.M...)
	}
	for _, c := range out.Vec {
		mems = append(mems, c.M...)
	}
	return mems
}

type dgUID struct {
	UID string `json:"uid"`
}

type dgChunkText struct {
	UID string `json:"uid"`
	DE  string `json:"de"`
	EN  string `json:"en"`
}

func (c dgChunkText) text() string {
	if c.DE != "" {
		return c.DE
	}
	return c.EN
}

// vectorWeight is the vector signal's weight against full text (1). The built-in hash
// embedder is lexical — it rewards shared words and word pieces, as BM25 does — so at equal
// weight it counts the same evidence twice; a quarter weight measured best on LoCoMo
// (docs/recall.md). Semantic models (hugot, OpenAI-compatible) add what BM25 cannot see
// (synonyms, paraphrase, other languages) and get the usual equal weight.
func (t *Tenant) vectorWeight() float64 {
	if emb := t.c.cfg.Embedder; emb != nil && emb.Provider() == "knowmind-hash" {
		return 0.25
	}
	return 1
}

// vectorUnrelated is the cosine an unrelated text typically has with a query under the
// embedder, which maps to a vector score of 0 (rank.Signals.VectorUnrelated). For the hash
// embedder it was measured on LoCoMo: question against a random turn, median 0.11, 90th
// percentile 0.22 (docs/recall.md). For model embedders it is unknown here (no model can be
// downloaded to measure; under e5-style models unrelated texts score 0.7 and more), so the
// weakest vector candidate stands in, as before.
func (t *Tenant) vectorUnrelated() float64 {
	if emb := t.c.cfg.Embedder; emb != nil && emb.Provider() == "knowmind-hash" {
		return 0.1
	}
	return -1
}

// Reranker is what recall needs from a cross-encoder (implemented by package rerank): one
// relevance probability (0..1) per passage, in the passages' order.
type Reranker interface {
	Name() string
	Score(ctx context.Context, query string, passages []string) ([]float64, error)
}

// rerankDepth is how many fused candidates the cross-encoder reads (at least k): one model run
// per candidate, so the depth bounds recall's latency.
const rerankDepth = 20

// RerankerName names the cross-encoder recall reranks with, or "none".
func (c *Client) RerankerName() string {
	if c.cfg.Reranker == nil {
		return "none"
	}
	return c.cfg.Reranker.Name()
}

// Ablation turns recall's signals off one by one, for the benchmarks' ablation tables; the
// zero value (what the tools use) keeps them all. The graph signal is RecallQuery.Hops.
type Ablation struct {
	NoText   bool // no full-text candidates (BM25)
	NoVector bool // no vector candidates
	NoRerank bool // skip the cross-encoder even when one is configured
	// NoTextScore fetches the full-text candidates (they join the vector re-score and seed the
	// graph) but gives BM25 no say in the ranking: the vector signal as full recall computes
	// it, which the speed benchmark measures against exact search.
	NoTextScore bool
	// NoExactVectors skips the service's exact vector search: vector candidates come from
	// Dgraph's HNSW and the full-text pools only (as with Config.NoExactVectors), to show what
	// the exact search adds.
	NoExactVectors bool
	// NoSupport turns off the evidence of neighbouring hits (rank.Signals.Support).
	NoSupport bool
	// WithFeedback turns on pseudo-relevance feedback (package prf), which is off by default:
	// on LoCoMo it lowered MRR (docs/recall.md).
	WithFeedback bool
	// NoTime ignores the time a question names (package timeq).
	NoTime bool
	// NoSemantic turns off the semantic signal: the text candidates' similarity to the query
	// under the tenant's co-occurrence word vectors (package wordvec).
	NoSemantic bool
	// SemanticWeight, when above 0, replaces the semantic signal's weight (semanticWeight),
	// for the benchmark's comparison.
	SemanticWeight float64
	// NoTitle turns off the title field (rank.Signals.Title); TitleWeight, when above 0,
	// replaces its weight (titleWeight), for the benchmark's comparison.
	NoTitle     bool
	TitleWeight float64
	// NoTitleNeighbours keeps the title factor to direct hits (rank.Signals.TitleNeighbours off).
	NoTitleNeighbours bool
	// DgraphVectorScores keeps the exact search but lets Dgraph re-score its candidates with
	// HNSW's and the text candidates' (the plan before the service scored them), for the speed
	// benchmark's comparison.
	DgraphVectorScores bool
	// DgraphText takes the full-text candidates from Dgraph's anyoftext (the chunks holding the
	// query's rarest words, their text read and BM25-scored in the service) instead of the
	// service's own text index: the plan before, for the benchmarks' comparison. WithFeedback
	// implies it (feedback needs the candidates' text).
	DgraphText bool
	// SemanticPool, when above 0, replaces how many chunks the semantic model's exact scan
	// proposes as further text candidates (semanticPool); below 0 turns the pool off.
	SemanticPool int
	// SemanticSVD scores the semantic signal with the semantic model (package semvec: PPMI +
	// SVD) instead of the co-occurrence word vectors (package wordvec).
	SemanticSVD bool
	// ConceptWeight, when above 0, replaces the concept signal's weight (conceptWeight: the
	// text and pool candidates' cosine under the semantic model, beside the word vectors'
	// signal); below 0 turns it off.
	ConceptWeight float64
	// PoolAsText, when above 0, scores the semantic pool's chunks that no text signal found in
	// the text signal too, as PoolAsText × their cosine (a soft match for chunks that share no
	// query word).
	PoolAsText float64
	// NoSemanticLinks uses a semantic model built without the links between memories as the
	// chunks' context (semvec.Doc.Near).
	NoSemanticLinks bool
}

// The time a question names (timeq.Parse) is a further signal of weight timeWeight; a memory's
// time matches fully inside the named span, half at timeSlack outside it. Measured on LoCoMo
// (docs/recall.md).
const (
	timeWeight = 0.5
	timeSlack  = 72 * time.Hour
)

// semanticWeight is the weight of the semantic signal (the text candidates' cosine to the
// query under the tenant's co-occurrence word vectors) against full text's 1. Measured on
// LoCoMo (docs/recall.md).
const semanticWeight = 0.5

// semanticPool is how many chunks the tenant's semantic model (package semvec, graph/semantic.go)
// proposes per recall, by an exact scan of every chunk's vector, as further text candidates
// scored by the semantic signal alone (0: off). Measured on LoCoMo (docs/recall.md, fifth
// session).
const semanticPool = 30

// conceptWeight is the weight of the concept signal: the text candidates' and the semantic
// pool's cosine to the query under the tenant's semantic model (package semvec), a signal beside
// the word vectors' (0: off). Measured on LoCoMo (docs/recall.md, fifth session).
const conceptWeight = 0.25

// conceptWeightOf is the concept signal's weight under ablation a.
func conceptWeightOf(a Ablation) float64 { return ablated(a.ConceptWeight, conceptWeight) }

// semanticPoolSize is the semantic pool's size under ablation a.
func semanticPoolSize(a Ablation) int { return ablated(a.SemanticPool, semanticPool) }

// ablated reads an ablation's override of a default: above 0 replaces it, below 0 turns it off
// (0), 0 keeps it.
func ablated[T int | float64](override, def T) T {
	switch {
	case override > 0:
		return override
	case override < 0:
		return 0
	}
	return def
}

// graphSupport is the weight of neighbouring hits' evidence (rank.Signals.Support).
const graphSupport = 1.0

// ValidateRecall checks a recall's parameters, naming the one at fault (-32602).
func ValidateRecall(q knowmind.RecallQuery) error {
	query := strings.TrimSpace(q.Query)
	if query == "" {
		return knowmind.InvalidParam("query", "query is required and must not be empty")
	}
	if utf8.RuneCountInString(query) > knowmind.RecallMaxQueryChars {
		return knowmind.InvalidParam("query", "query exceeds %d characters", knowmind.RecallMaxQueryChars)
	}
	if q.K < 1 || q.K > knowmind.RecallMaxK {
		return knowmind.InvalidParam("k", "k must be between 1 and %d", knowmind.RecallMaxK)
	}
	if q.Hops < 0 || q.Hops > knowmind.RecallMaxHops {
		return knowmind.InvalidParam("hops", "hops must be between 0 and %d", knowmind.RecallMaxHops)
	}
	if !(q.MinScore >= 0 && q.MinScore <= 1) {
		return knowmind.InvalidParam("min_score", "min_score must be between 0 and 1")
	}
	return nil
}

// Recall answers knowmind_recall (q.AsOf nil) and knowmind_recall_at_time (q.AsOf set).
func (t *Tenant) Recall(ctx context.Context, q knowmind.RecallQuery) (knowmind.RecallResult, error) {
	return t.RecallAblated(ctx, q, Ablation{})
}

// RecallAblated is Recall with the signals a turned off.
func (t *Tenant) RecallAblated(ctx context.Context, q knowmind.RecallQuery, a Ablation) (knowmind.RecallResult, error) {
	return t.RecallTraced(ctx, q, a, nil)
}

// RecallTrace is where one recall's time went, and the requests it sent to Dgraph in order
// (the speed benchmark sends them again without the service and breaks the service's time
// down by phase).
type RecallTrace struct {
	// Prepare: validation, embedding, the service's text and vector search, the plan. Query:
	// the first request's round trip. Decode: parsing its answer. Fuse: scoring and fusion.
	// Details: the second request (the chosen hits' details) with its parsing.
	Prepare, Query, Decode, Fuse, Details time.Duration
	Requests                              []RecallRequest // DQL and Vars of each request sent
}

// RecallTraced is RecallAblated recording into tr (nil: nothing recorded).
func (t *Tenant) RecallTraced(ctx context.Context, q knowmind.RecallQuery, a Ablation, tr *RecallTrace) (knowmind.RecallResult, error) {
	start := time.Now()
	if tr == nil {
		tr = &RecallTrace{} // the few clock reads cost nothing next to a recall
	}
	mark := start
	phase := func(into *time.Duration) {
		now := time.Now()
		*into += now.Sub(mark)
		mark = now
	}
	req, err := t.PrepareRecall(ctx, q, a)
	if err != nil {
		return knowmind.RecallResult{}, err
	}
	phase(&tr.Prepare)
	res := knowmind.RecallResult{Hits: []knowmind.RecallHit{}, Rerank: "none"}
	if req.DQL != "" {
		text := req.text
		if a.NoTextScore {
			text = [2]textSide{}
		}
		in := fuseInput{text: text, analyze: func(uid, lang, text string) ([]string, int) {
			return t.text.tokens.analyze(uid, lang, text, t.analyzeDoc)
		}}
		if !a.NoSemantic {
			in.words, in.wordsWeight = &t.text.words, semanticWeight
			in.refTerms = func(refs []uint64) [][]string { return t.text.ix.RefTerms(t.Name, refs) }
			if a.SemanticWeight > 0 {
				in.wordsWeight = a.SemanticWeight
			}
			if !a.NoTextScore { // the pool is text candidates: off with the text signal
				in.semPool, in.poolAsText = req.semPool, a.PoolAsText
			}
			if req.sem != nil {
				m, qv := req.sem, req.semQuery
				scores := func(refs []uint64) map[uint64]float32 { return m.Scores(qv, refs) }
				if a.SemanticSVD {
					in.semScores = scores
				} else if w := conceptWeightOf(a); w > 0 {
					in.conceptScores, in.conceptWeight = scores, w
				}
			}
		}
		if !a.NoTitle {
			in.titleWeight = titleWeight
			if a.TitleWeight > 0 {
				in.titleWeight = a.TitleWeight
			}
			in.titles = func(lang string, terms []string, refs []uint64) (map[uint64]float64, bm25.Stats) {
				return t.text.titles.ScoreRefs(t.Name, lang, terms, refs, bm25.Params{}), t.text.titles.Stats(t.Name, lang, terms...)
			}
		}
		if a.WithFeedback {
			in.stats = func(lang string, terms []string) bm25.Stats { return t.text.ix.Stats(t.Name, lang, terms...) }
		}
		// What the service scores from its own indexes over all the candidates it proposed does
		// not need Dgraph's answer: it runs while the request is in flight.
		early := make(chan *aheadScores, 1)
		if scoringAhead {
			pre := in // in is filled further below
			go func() { early <- pre.scoreAhead(req) }()
		} else {
			early <- nil
		}
		txn := t.dg.NewReadOnlyTxn()
		tr.Requests = append(tr.Requests, RecallRequest{DQL: req.DQL, Vars: req.Vars})
		resp, err := txn.QueryWithVars(ctx, req.DQL, req.Vars)
		if err != nil {
			return knowmind.RecallResult{}, fmt.Errorf("recall query: %w", err)
		}
		phase(&tr.Query)
		// The response is parsed once into its blocks: the candidates and the hops read theirs.
		var blocks map[string]json.RawMessage
		if err := json.Unmarshal(resp.Json, &blocks); err != nil {
			return knowmind.RecallResult{}, fmt.Errorf("decode recall response: %w", err)
		}
		var out recallResponse
		for name, into := range map[string]any{"vec": &out.Vec, "txt": &out.Txt} {
			if data, found := blocks[name]; found {
				if err := json.Unmarshal(data, into); err != nil {
					return knowmind.RecallResult{}, fmt.Errorf("decode recall %s: %w", name, err)
				}
			}
		}
		req.scoreVectors(&out)
		if q.AsOf != nil {
			out.validAt(*q.AsOf)
		}
		adjacent, err := parseHops(blocks, q.Hops, req.relations, q.AsOf)
		if err != nil {
			return knowmind.RecallResult{}, err
		}
		phase(&tr.Decode)
		sig := rank.Signals{VectorWeight: t.vectorWeight(), VectorUnrelated: t.vectorUnrelated(),
			Adjacent: adjacent, Hops: q.Hops, Support: graphSupport, TitleNeighbours: !a.NoTitle && !a.NoTitleNeighbours}
		if a.NoSupport {
			sig.Support = 0
		}
		if span, ok := timeq.Parse(q.Query); ok && !a.NoTime {
			// The time the question names against each memory's time (valid_from: when it
			// was stored, or the occurred_at capture was given).
			sig.Time, sig.TimeWeight = map[string]float64{}, timeWeight
			for _, m := range out.candidateMemories() {
				if m.ValidFrom != nil {
					sig.Time[m.UID] = span.Match(*m.ValidFrom, timeSlack)
				}
			}
		}
		in.sig = sig
		in.ahead = <-early // scored while the request was in flight
		fused := fuse(&out, in)
		rr := t.c.cfg.Reranker
		depth := q.K
		if rr != nil && !a.NoRerank {
			depth = max(q.K, rerankDepth)
		}
		// The hits are chosen first (every fused entry passed the memory filter), then only
		// their details are read.
		chosen := fused[:min(depth, len(fused))]
		phase(&tr.Fuse)
		if err := readDetails(ctx, txn, &out, chosen, tr); err != nil {
			return knowmind.RecallResult{}, err
		}
		phase(&tr.Details)
		hits, from := out.hits(chosen, depth, q.AsOf != nil)
		if rr == nil || a.NoRerank {
			res.Hits = hits
		} else {
			if reranked, err := rerankHits(ctx, rr, strings.TrimSpace(q.Query), hits, from); err != nil {
				// The fused order stands, and the answer says it was not reranked.
				t.c.log.Error("rerank failed; returning the fused order", "tenant", t.Name, "reranker", rr.Name(), "err", err)
				res.Hits = hits[:min(q.K, len(hits))]
			} else {
				res.Hits, res.Rerank = reranked[:min(q.K, len(reranked))], rr.Name()
			}
		}
		// Scores fall down the list: the hits at or above the floor are a prefix.
		for i, h := range res.Hits {
			if h.Score < q.MinScore {
				res.Hits = res.Hits[:i]
				break
			}
		}
	}
	res.ElapsedMS = time.Since(start).Milliseconds()
	return res, nil
}

// readDetails reads the details of the chosen hits (recallDetailsQuery) in the recall's
// transaction, into out.Mem, out.Content, out.Docs and out.Chunks.
func readDetails(ctx context.Context, txn *dgo.Txn, out *recallResponse, chosen []rank.Hit, tr *RecallTrace) error {
	if len(chosen) == 0 {
		return nil
	}
	read := make(map[string]bool, len(out.Txt))
	for _, c := range out.Txt {
		if c.DE != "" || c.EN != "" {
			read[c.UID] = true // Dgraph's text step read it (the service's own search reads none)
		}
	}
	uids := make([]uint64, 0, len(chosen))
	var chunks []uint64
	for _, h := range chosen {
		if u, err := parseUID(h.ID); err == nil {
			uids = append(uids, u)
		}
		if u, err := parseUID(h.Chunk); err == nil && h.Chunk != "" && !read[h.Chunk] {
			chunks = append(chunks, u)
		}
	}
	chunkBlock := ""
	if len(chunks) > 0 {
		chunkBlock = fmt.Sprintf(recallChunksBlock, formatUIDs(chunks))
	}
	dql := fmt.Sprintf(recallDetailsQuery, formatUIDs(uids), chunkBlock)
	tr.Requests = append(tr.Requests, RecallRequest{DQL: dql})
	resp, err := txn.Query(ctx, dql)
	if err != nil {
		return fmt.Errorf("recall details query: %w", err)
	}
	var content recallResponse
	if err := json.Unmarshal(resp.Json, &content); err != nil {
		return fmt.Errorf("decode recall details: %w", err)
	}
	out.Mem, out.Docs, out.Chunks = content.Mem, content.Docs, content.Chunks
	out.Content = content.Content
	for _, l := range content.Legacy {
		for i := range out.Content {
			if out.Content[i].UID == l.UID {
				out.Content[i].Preview = l.Content
			}
		}
	}
	return nil
}

// RecallRequest is the DQL request a recall sends, with its variables (the query vector among
// them). The speed benchmark sends it to Dgraph directly to show the service's own overhead.
type RecallRequest struct {
	DQL  string // "" when there is nothing to ask (text only, and no word the index could match)
	Vars map[string]string
	text [2]textSide
	// vecScore: the vector candidates' scores by chunk uid when the service scored them (the
	// exact search over the vectors it holds, which are the stored ones); nil when Dgraph
	// re-scores them in the query.
	vecScore map[uint64]float64
	// relations: how many relation predicates the hops follow (their blocks hopNeI)
	relations int
	// sem and semQuery: the semantic model and the query's vector in it, when the semantic
	// pool or SemanticSVD asked for them; semPool the pool's chunks by uid with their cosine.
	sem      *semvec.Model
	semQuery []float32
	semPool  map[uint64]float64
}

// scoreVectors fills in the scores of the vector candidates the service scored, and drops
// those it did not (none: the query asks for exactly those).
func (r RecallRequest) scoreVectors(out *recallResponse) {
	if r.vecScore == nil {
		return
	}
	kept := out.Vec[:0]
	for _, c := range out.Vec {
		u, err := parseUID(c.UID)
		if s, ok := r.vecScore[u]; err == nil && ok {
			c.Score = s
			kept = append(kept, c)
		}
	}
	out.Vec = kept
}

// PrepareRecall validates q, embeds the query, chooses the full-text terms and renders the DQL,
// without sending it.
func (t *Tenant) PrepareRecall(ctx context.Context, q knowmind.RecallQuery, a Ablation) (RecallRequest, error) {
	var req RecallRequest
	if err := ValidateRecall(q); err != nil {
		return req, err
	}
	if (a.NoText || a.NoTextScore) && a.NoVector {
		return req, fmt.Errorf("ablation: at least one of text and vector must be on")
	}
	query := strings.TrimSpace(q.Query)
	req.Vars = map[string]string{}
	useVector := !a.NoVector
	served := !a.DgraphText && !a.WithFeedback
	// The service's three searches — the exact vector scan, the full-text search of each
	// language and the semantic pool — need nothing of each other until their candidates are
	// merged, so they run at once: at one client on two cores a recall's prepare took their sum.
	var (
		wg     sync.WaitGroup
		exact  []uint64
		scores []float32
		sides  [2]textSide
		pool   []semvec.Hit
	)
	exactVectors := useVector && t.exactVectors() && !a.NoExactVectors
	if exactVectors || !a.NoText {
		// The tenant's text index and vectors, loaded once per process (a sync with the store
		// started when one is due, textsync.go); the semantic model is built from the index.
		if err := t.text.ensure(ctx, t); err != nil {
			return req, err
		}
		t.text.maybeSync(ctx, t)
	}
	if useVector {
		emb := t.c.cfg.Embedder
		if emb == nil {
			return req, knowmind.Errorf(knowmind.EPROVIDER, "no embedding provider is configured")
		}
		vec, err := emb.EmbedQuery(ctx, query)
		if err != nil {
			t.c.log.Error("embed recall query", "tenant", t.Name, "err", err)
			return req, knowmind.Errorf(knowmind.EPROVIDER, "the embedding provider failed")
		}
		req.Vars["$vec"] = VectorString(vec)
		if exactVectors {
			// false: nothing held (a new tenant) or another dimension; HNSW and the pools stand in.
			wg.Go(func() { exact, scores, _ = t.text.vec.searchScored(vec, vectorCandidates(q.K)) })
		}
	}
	// Full text, per stored language: the words to match and the statistics to score with.
	// [0] German (Chunk.text@de), [1] English (untagged Chunk.text).
	// The service searches its own text index unless an ablation asks for Dgraph's full-text
	// step (feedback needs the candidates' text, which only that step reads).
	if !a.NoText {
		wg.Go(func() {
			for i, lang := range []string{"de", ""} {
				sides[i] = t.textSide(lang, query, q.K, served)
			}
		})
		if n := semanticPoolSize(a); served && (n > 0 || a.SemanticSVD || conceptWeightOf(a) > 0) {
			wg.Go(func() {
				if m := t.semModel(!a.NoSemanticLinks); m != nil {
					// The terms textSide analyses, in its order.
					terms := slices.Concat(t.analyzeQuery("de", query), t.analyzeQuery("", query))
					if qv := m.Query(terms); qv != nil {
						req.sem, req.semQuery = m, qv
						pool = m.TopN(qv, n, nil)
					}
				}
			})
		}
	}
	wg.Wait()
	if len(exact) > 0 && !a.DgraphVectorScores {
		req.vecScore = make(map[uint64]float64, len(exact))
		for i, u := range exact {
			req.vecScore[u] = float64(scores[i])
		}
	}
	var textUIDs, textSeeds []uint64
	if !a.NoText {
		for i, side := range sides {
			if side.served {
				// A vector candidate outside the text top keeps its own BM25 score, as when
				// Dgraph's text step returned it, instead of counting as holding none of the words.
				maps.Copy(side.scores, t.text.ix.ScoreRefs(t.Name, side.lang, side.terms, exact, bm25.Params{}))
			}
			req.text[i] = side
			for u := range side.scores {
				textUIDs = append(textUIDs, u)
			}
			textSeeds = append(textSeeds, side.seeds...)
		}
		if req.sem != nil {
			have := make(map[uint64]bool, len(textUIDs))
			for _, u := range textUIDs {
				have[u] = true
			}
			req.semPool = map[uint64]float64{}
			for _, h := range pool {
				if h.Score <= 0 {
					break
				}
				req.semPool[h.Ref] = float64(h.Score)
				if !have[h.Ref] {
					textUIDs = append(textUIDs, h.Ref)
				}
			}
		}
		slices.Sort(textUIDs)
		req.Vars["$de"], req.Vars["$en"] = req.text[0].match, req.text[1].match
		req.Vars["$sde"], req.Vars["$sen"] = req.text[0].seed, req.text[1].seed
		req.Vars["$vde"], req.Vars["$ven"] = req.text[0].pool, req.text[1].pool
	}
	if !useVector && !req.text[0].on() && !req.text[1].on() {
		return req, nil
	}
	if q.AsOf != nil {
		req.Vars["$asof"] = q.AsOf.UTC().Format(time.RFC3339Nano)
	}
	var relations []string
	if q.Hops > 0 {
		var err error
		if relations, err = t.linkedRelations(ctx); err != nil {
			return req, err
		}
	}
	dql, err := buildRecallQuery(recallPlan{
		vector: useVector,
		textDE: req.text[0].match != "", textEN: req.text[1].match != "",
		seedDE: req.text[0].seed != "", seedEN: req.text[1].seed != "",
		poolDE: req.text[0].pool != "", poolEN: req.text[1].pool != "",
		textServed: served && len(textUIDs) > 0, textUIDs: textUIDs, textSeeds: textSeeds,
		exact: exact, served: req.vecScore != nil, k: q.K, hops: q.Hops, asOf: q.AsOf, relations: relations,
	})
	if err != nil {
		return req, err
	}
	req.DQL, req.relations = dql, len(relations)
	return req, nil
}

// textSide is the full-text part of a recall for one stored language.
type textSide struct {
	lang  string   // "de" or "" (untagged, English analysis)
	match string   // the query words sent to anyoftext ("" = no full-text step)
	seed  string   // the rarest of them, whose chunks seed the graph expansion
	pool  string   // the words whose chunks join the vector re-score (a wider budget)
	terms []string // the query's analysed terms, all of them, for BM25
	stats bm25.Stats
	// served: the service searched its text index. scores holds the BM25 score of the chunks it
	// proposes (the best textCandidates, and every vector candidate holding a query term), by
	// chunk uid; seeds up to graphSeeds chunks holding the query's rarest words. match and seed
	// are then empty.
	served bool
	scores map[uint64]float64
	seeds  []uint64
}

// on tells whether the side has candidates to ask Dgraph about.
func (s textSide) on() bool { return s.match != "" || len(s.scores) > 0 }

// textCandidates is how many chunks the service's text search proposes per language for a
// recall of k: as many as the vector step, exactly the best by BM25 (Dgraph's anyoftext could
// only return the chunks holding the rarest words, in uid order).
func textCandidates(k int) int { return vectorCandidates(k) }

// textSide analyses the query for one language and finds its text candidates: with served, the
// best textCandidates(k) of the tenant's text index and as seeds up to graphSeeds(k) chunks
// holding the rarest query words (PrepareRecall adds the vector candidates' scores); otherwise
// the words anyoftext should match.
func (t *Tenant) textSide(lang, query string, k int, served bool) textSide {
	side := textSide{lang: lang, terms: t.analyzeQuery(lang, query)}
	if len(side.terms) == 0 {
		return side
	}
	st := t.text.ix.Stats(t.Name, lang, side.terms...)
	side.stats = st
	if st.Docs == 0 {
		return side // no text stored in this language: nothing to match
	}
	if served {
		side.served, side.scores = true, map[uint64]float64{}
		for _, h := range t.text.ix.Search(t.Name, lang, side.terms, textCandidates(k), bm25.Params{}) {
			if h.Ref != 0 { // 0: a chunk held without its uid (none since uids are read); not askable
				side.scores[h.Ref] = h.Score
			}
		}
		// The graph seeds are the chunks holding the query's most specific words, as Dgraph's
		// full-text step chose them (matchTerms within graphSeeds): on LoCoMo they seeded better
		// than the BM25 top (docs/recall.md).
		side.seeds = t.text.ix.Holding(t.Name, lang, rarestTerms(lang, query, st, int64(graphSeeds(k))), graphSeeds(k))
		side.pool = matchTerms(lang, query, st, vectorPoolBudget)
		return side
	}
	side.match = matchTerms(lang, query, st, textBudget)
	side.seed = matchTerms(lang, query, st, int64(graphSeeds(k)))
	side.pool = matchTerms(lang, query, st, vectorPoolBudget)
	return side
}

// analyzeQuery analyses a query as the tenant's text index analysed its documents
// (analyzeText), splitting compounds against the index's own terms too.
func (t *Tenant) analyzeQuery(lang, query string) []string {
	return t.c.cfg.Analysis.Analyze(lang, query, func(term string) bool { return t.text.ix.Has(t.Name, lang, term) })
}

// matchTerms chooses which query words the full-text step matches. Dgraph returns matches
// unranked and cuts them at the lowest uids, so a query with a common word ("Kunde" in a CRM)
// would fill the candidate list with arbitrary chunks. Instead the terms are taken rarest
// first while their summed document frequency stays within budget (the rarest always), which
// bounds the candidates by the statistics and keeps the chunks that hold the query's most
// specific words. Dropped terms still count in BM25 for the chunks that are fetched; a chunk
// that holds only dropped (common, low-IDF) terms is what the budget gives up — the usual
// max-score trade-off. Returns the original words whose terms were chosen, for Dgraph to
// analyse exactly as it analysed the stored text (a stem analysed again may change).
func matchTerms(lang, query string, st bm25.Stats, budget int64) string {
	chosen := map[string]bool{}
	for _, term := range rarestTerms(lang, query, st, budget) {
		chosen[term] = true
	}
	if len(chosen) == 0 {
		return ""
	}
	var words []string
	for _, w := range strings.Fields(query) {
		for _, term := range bm25.Terms(lang, w) {
			if chosen[term] {
				words = append(words, w)
				break
			}
		}
	}
	return strings.Join(words, " ")
}

// rarestTerms are the query's terms taken rarest first while their summed document frequency
// stays within budget (the rarest always): matchTerms' choice, as analysed terms.
func rarestTerms(lang, query string, st bm25.Stats, budget int64) []string {
	terms := bm25.Terms(lang, query)
	slices.SortStableFunc(terms, func(a, b string) int { return int(st.DF[a] - st.DF[b]) })
	var sum int64
	for i, term := range terms {
		df := st.DF[term]
		if i > 0 && sum+df > budget {
			return terms[:i]
		}
		sum += df
	}
	return terms
}

// parseHops reads the hop blocks of a decoded response (hopNeI: each node's edges of one
// relation under "e") into an adjacency list; only the eligible neighbours (the ok block) count.
func parseHops(blocks map[string]json.RawMessage, hops, relations int, asOf *time.Time) (map[string][]string, error) {
	adjacent := map[string][]string{}
	if hops == 0 || relations == 0 {
		return adjacent, nil
	}
	var ok []dgMem
	if data, found := blocks["ok"]; found {
		if err := json.Unmarshal(data, &ok); err != nil {
			return nil, fmt.Errorf("decode recall hops: %w", err)
		}
	}
	eligible := make(map[string]bool, len(ok))
	for _, u := range ok {
		// At a time, valid from then on (the request left valid_from to the service).
		if asOf == nil || (u.ValidFrom != nil && !u.ValidFrom.After(*asOf)) {
			eligible[u.UID] = true
		}
	}
	// One block per hop and relation (hopNeI), every node with its edges under "e": typed
	// decoding (a node's keys decoded one by one as raw messages cost more than the whole
	// request's other decoding).
	var nodes []struct {
		UID   string  `json:"uid"`
		Edges []dgUID `json:"e"`
	}
	for n := 1; n <= hops; n++ {
		for i := range relations {
			data, found := blocks["hop"+strconv.Itoa(n)+"e"+strconv.Itoa(i)]
			if !found {
				continue
			}
			nodes = nodes[:0]
			if err := json.Unmarshal(data, &nodes); err != nil {
				return nil, fmt.Errorf("decode recall hop %d: %w", n, err)
			}
			for _, node := range nodes {
				from := node.UID
				for _, p := range node.Edges {
					if eligible[p.UID] && p.UID != from && !slices.Contains(adjacent[from], p.UID) {
						adjacent[from] = append(adjacent[from], p.UID)
					}
				}
			}
		}
	}
	return adjacent, nil
}

// fuseInput is what fuse needs besides the DQL answer.
type fuseInput struct {
	text    [2]textSide
	analyze func(uid, lang, text string) ([]string, int) // cached Tenant.analyzeDoc: tokens, length
	// stats looks up corpus statistics for more terms (the feedback's); nil turns feedback off.
	stats func(lang string, terms []string) bm25.Stats
	sig   rank.Signals
	// words scores the text candidates' semantic similarity to the query (nil: off), a signal
	// of weight wordsWeight.
	words       *wordvec.Model
	wordsWeight float64
	// refTerms returns the terms of chunks by uid (the text index's), for the candidates the
	// service's text index found, whose text recall does not read.
	refTerms func(refs []uint64) [][]string
	// titles scores chunks by uid on their memory's title (the title field, textIndex.titles)
	// and gives the titles' statistics for the terms; nil: off. titleWeight is the signal's
	// weight.
	titles      func(lang string, terms []string, refs []uint64) (map[uint64]float64, bm25.Stats)
	titleWeight float64
	// semPool: the chunks the semantic model proposed, by uid, with their cosine to the query;
	// those no text signal found join the semantic signal with it. semScores, when set, scores
	// the text candidates' semantic signal with the semantic model instead of words.
	semPool   map[uint64]float64
	semScores func(refs []uint64) map[uint64]float32
	// conceptScores, when set, scores the text candidates and the pool by the semantic model as
	// a signal of its own (rank.Signals.Concept) of weight conceptWeight; the pool then joins it
	// instead of the word vectors' signal.
	conceptScores func(refs []uint64) map[uint64]float32
	conceptWeight float64
	poolAsText    float64
	// ahead: the semantic and title scores computed while the first request was in flight
	// (nil: compute them here).
	ahead *aheadScores
}

// Pseudo-relevance feedback (package prf): the best feedbackDocs text candidates of the first
// pass give up to feedbackTerms words (each in at least feedbackMinDocs of them) that score the
// candidates again as a further signal of weight feedbackWeight. Measured on LoCoMo
// (docs/recall.md).
const (
	feedbackDocs    = 5
	feedbackTerms   = 5
	feedbackMinDocs = 2
	feedbackWeight  = 0.15
)

// fuse scores the text candidates with BM25 (per language corpus, the tenant's statistics) as a
// share of the query's ideal score in that corpus (bm25.Ideal: absolute, comparable across
// queries and languages), takes the vector candidates' exact cosines, and hands both with the
// graph to rank.Fuse.
func fuse(out *recallResponse, in fuseInput) []rank.Hit {
	sig := in.sig
	for _, c := range out.Vec {
		if len(c.M) > 0 {
			sig.Vector = append(sig.Vector, rank.Chunk{ID: c.UID, Memory: c.M[0].UID, Score: c.Score})
		}
	}
	for i, side := range in.text {
		if (side.served || side.match != "") && in.titles != nil && in.titleWeight > 0 {
			if sig.Title == nil {
				sig.Title, sig.TitleWeight = map[string]float64{}, in.titleWeight
			}
			titleMatch(out, side, in.ahead.titles(i, in.titles), sig.Title)
		}
		if side.served {
			ideal := bm25.Ideal(side.terms, side.stats)
			var found []rank.Chunk
			var refs []uint64
			for _, c := range out.Txt {
				u, err := parseUID(c.UID)
				if s := side.scores[u]; err == nil && s > 0 && ideal > 0 && len(c.M) > 0 {
					sig.Text = append(sig.Text, rank.Chunk{ID: c.UID, Memory: c.M[0].UID, Score: s / ideal})
					found, refs = append(found, rank.Chunk{ID: c.UID, Memory: c.M[0].UID}), append(refs, u)
				}
			}
			if in.conceptScores != nil && len(refs) > 0 {
				sig.Concept = append(sig.Concept, positive(found, inOrder(refs, in.conceptScores(refs)))...)
			}
			switch {
			case in.semScores != nil && len(refs) > 0:
				sig.Semantic = append(sig.Semantic, positive(found, inOrder(refs, in.semScores(refs)))...)
			case in.words != nil && in.refTerms != nil && len(refs) > 0:
				if sims := in.ahead.semantic(i, refs); sims != nil {
					sig.Semantic = append(sig.Semantic, positive(found, sims)...)
				} else {
					sig.Semantic = append(sig.Semantic, semantic(in.words, side.terms, found, refs, in.refTerms(refs))...)
				}
			}
			continue
		}
		if side.match == "" {
			continue
		}
		memoryOf := map[string]string{}
		var docs []bm25.Doc
		for _, c := range out.Txt {
			if len(c.M) == 0 {
				continue
			}
			body := c.EN
			if i == 0 {
				body = c.DE
			}
			if body == "" {
				continue
			}
			memoryOf[c.UID] = c.M[0].UID
			tokens, length := in.analyze(c.UID, side.lang, body)
			docs = append(docs, bm25.Doc{ID: c.UID, Tokens: tokens, Length: length})
		}
		ideal := bm25.Ideal(side.terms, side.stats)
		scored := bm25.Score(side.terms, docs, side.stats, bm25.Params{})
		for _, s := range scored {
			if s.Score > 0 && ideal > 0 {
				sig.Text = append(sig.Text, rank.Chunk{ID: s.ID, Memory: memoryOf[s.ID], Score: s.Score / ideal})
			}
		}
		if in.words != nil && len(docs) > 0 {
			found, texts := make([]rank.Chunk, len(docs)), make([][]string, len(docs))
			for j, d := range docs {
				found[j], texts[j] = rank.Chunk{ID: d.ID, Memory: memoryOf[d.ID]}, d.Tokens
			}
			sig.Semantic = append(sig.Semantic, semantic(in.words, side.terms, found, nil, texts)...)
		}
		if in.stats != nil && ideal > 0 {
			sig.Feedback = append(sig.Feedback, feedback(side, docs, scored, memoryOf, ideal, in.stats)...)
		}
	}
	if len(in.semPool) > 0 {
		// The pool's chunks that no text signal found: semantic evidence alone.
		text := make(map[string]bool, len(sig.Text))
		for _, c := range sig.Text {
			text[c.ID] = true
		}
		for _, c := range out.Txt {
			u, err := parseUID(c.UID)
			if s, ok := in.semPool[u]; err == nil && ok && !text[c.UID] && len(c.M) > 0 {
				if in.poolAsText > 0 {
					sig.Text = append(sig.Text, rank.Chunk{ID: c.UID, Memory: c.M[0].UID, Score: in.poolAsText * s})
				}
				if in.conceptScores != nil {
					sig.Concept = append(sig.Concept, rank.Chunk{ID: c.UID, Memory: c.M[0].UID, Score: s})
				} else {
					sig.Semantic = append(sig.Semantic, rank.Chunk{ID: c.UID, Memory: c.M[0].UID, Score: s})
				}
			}
		}
	}
	if len(sig.Feedback) > 0 {
		sig.FeedbackWeight = feedbackWeight
	}
	if len(sig.Semantic) > 0 {
		sig.SemanticWeight = in.wordsWeight
	}
	if len(sig.Concept) > 0 {
		sig.ConceptWeight = in.conceptWeight
	}
	return rank.Fuse(sig)
}

// semantic scores candidates (texts[i] the terms of found[i], chunk uids refs[i] or nil) by their
// similarity to the query's terms under the word vectors; only positive similarities count.
// With refs the word vectors keep each chunk's text norm until the next write.
func semantic(words *wordvec.Model, query []string, found []rank.Chunk, refs []uint64, texts [][]string) []rank.Chunk {
	return positive(found, words.SimilarityKeyed(query, refs, texts))
}

// inOrder returns the scores of refs in their order (0 for a ref without one).
func inOrder(refs []uint64, scores map[uint64]float32) []float64 {
	out := make([]float64, len(refs))
	for i, u := range refs {
		out[i] = float64(scores[u])
	}
	return out
}

// positive returns found[i] scored sims[i], for the positive scores.
func positive(found []rank.Chunk, sims []float64) []rank.Chunk {
	var out []rank.Chunk
	for i, s := range sims {
		if s > 0 {
			c := found[i]
			c.Score = s
			out = append(out, c)
		}
	}
	return out
}

// feedback scores docs against the terms the best first-pass candidates (scored, best first)
// add to the query, as shares of the expansion's ideal score.
func feedback(side textSide, docs []bm25.Doc, scored []bm25.Scored, memoryOf map[string]string, ideal float64,
	stats func(lang string, terms []string) bm25.Stats) []rank.Chunk {
	tokens := make(map[string][]string, len(docs))
	for _, d := range docs {
		tokens[d.ID] = d.Tokens
	}
	var fb []prf.Feedback
	for _, s := range scored[:min(len(scored), feedbackDocs)] {
		if s.Score > 0 {
			fb = append(fb, prf.Feedback{Tokens: tokens[s.ID], Score: s.Score / ideal})
		}
	}
	if len(fb) < feedbackMinDocs {
		return nil
	}
	st := stats(side.lang, prf.Candidates(side.terms, fb))
	terms := prf.Expand(side.terms, fb, st, prf.Params{Terms: feedbackTerms, Weight: 1, MinDocs: feedbackMinDocs})
	if len(terms) == 0 {
		return nil
	}
	var expIdeal float64
	n := max(st.Docs, 1)
	for _, t := range terms {
		expIdeal += t.Weight * bm25.IDF(n, min(max(st.DF[t.Term], 1), n))
	}
	var out []rank.Chunk
	for _, s := range bm25.ScoreWeighted(terms, docs, st, bm25.Params{}) {
		if s.Score > 0 {
			out = append(out, rank.Chunk{ID: s.ID, Memory: memoryOf[s.ID], Score: s.Score / expIdeal})
		}
	}
	return out
}

// hits turns the first k fused memories into the tool's result; from[i] is the fused entry
// of hit i.
func (out *recallResponse) hits(fused []rank.Hit, k int, atTime bool) (hits []knowmind.RecallHit, from []rank.Hit) {
	type memInfo struct {
		id, kind, title, source string
		validFrom, validTo      *time.Time
	}
	mems := make(map[string]memInfo, len(out.Mem))
	for _, m := range out.Mem {
		mems[m.UID] = memInfo{m.ID, m.Kind, m.Title, m.Source, m.ValidFrom, m.ValidTo}
	}
	content := make(map[string]string, len(out.Content))
	for _, c := range out.Content {
		content[c.UID] = c.Preview
	}
	chunkText := map[string]string{}
	for _, c := range out.Txt {
		chunkText[c.UID] = dgChunkText{DE: c.DE, EN: c.EN}.text()
	}
	for _, c := range out.Chunks {
		chunkText[c.UID] = c.text()
	}
	docHead := map[string]string{}
	for _, d := range out.Docs {
		if len(d.Head) > 0 {
			docHead[d.UID] = d.Head[0].text()
		}
	}

	res := make([]knowmind.RecallHit, 0, k)
	from = make([]rank.Hit, 0, k)
	for _, h := range fused {
		if len(res) == k {
			break
		}
		m, ok := mems[h.ID]
		if !ok || m.id == "" {
			continue // not an eligible memory (defensive: every hit passed the memory filter)
		}
		hit := knowmind.RecallHit{MemoryID: m.id, Kind: m.kind, Title: m.title, Source: m.source,
			Score: roundScore(h.Score)}
		if m.kind == knowmind.KindDocument {
			hit.Content = chunkText[h.Chunk]
			if hit.Content == "" {
				hit.Content = docHead[h.ID]
			}
		} else {
			hit.Content = content[h.ID]
		}
		hit.Content = runes.Truncate(hit.Content, knowmind.RecallMaxContentChars)
		if atTime {
			hit.ValidFrom, hit.ValidTo = m.validFrom, m.validTo
		}
		res = append(res, hit)
		from = append(from, h)
	}
	return res, from
}

// rerankHits orders candidates by the cross-encoder's probability that each (title and
// content) answers query; that probability becomes the score, graph neighbours staying below
// the hit that reached them (rank.Rerank).
func rerankHits(ctx context.Context, rr Reranker, query string, hits []knowmind.RecallHit, from []rank.Hit) ([]knowmind.RecallHit, error) {
	passages := make([]string, len(hits))
	for i, h := range hits {
		passages[i] = strings.TrimSpace(h.Title + "\n" + h.Content)
	}
	scores, err := rr.Score(ctx, query, passages)
	if err != nil {
		return nil, err
	}
	if len(scores) != len(hits) {
		return nil, fmt.Errorf("reranker returned %d scores for %d passages", len(scores), len(hits))
	}
	order, final := rank.Rerank(from, scores)
	out := make([]knowmind.RecallHit, len(hits))
	for i, j := range order {
		out[i] = hits[j]
		out[i].Score = roundScore(final[j])
	}
	return out, nil
}

// roundScore keeps four decimals (scores are for ordering and thresholds, not for more).
// Rounding is monotone, so it never reorders hits.
func roundScore(s float64) float64 {
	return math.Round(s*10000) / 10000
}
