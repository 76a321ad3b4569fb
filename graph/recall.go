package graph

// knowmind_recall and knowmind_recall_at_time. A recall prepares its plan (embeds the query, runs
// the service's own searches: the exact vector scan, the text index, the semantic pool), sends
// one DQL request (recallquery.go) that maps the candidates to their eligible memories and walks
// the graph from the seeds, decodes it (recalldecode.go), hands the candidates to package search
// for scoring and fusion, and reads the details of the hits chosen. docs/recall.md has the
// design and the measurements behind the constants.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
	"github.com/knowmind/knowmind/semvec"
)

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

// lexicalVectors tells whether the embedder is lexical (the built-in hash embedder): its
// cosine for words the tenant never wrote is noise, so the vector signal is scaled by the
// query's coverage like the semantic signals (search.Input.VectorCoverage).
func (t *Tenant) lexicalVectors() bool {
	emb := t.c.cfg.Embedder
	return emb != nil && emb.Provider() == "knowmind-hash"
}

// lexicalEvidence tells whether all of a recall's evidence is lexical: the embedder is the
// built-in hash embedder or there is none. Only then does the query's coverage bound what a
// hit can answer (search.Floor): a model embedder may know a word the tenant never wrote.
func (t *Tenant) lexicalEvidence() bool {
	return t.c.cfg.Embedder == nil || t.lexicalVectors()
}

// vectorUnrelated is the cosine an unrelated text typically has with a query under the
// embedder, which maps to a vector score of 0 (rank.Signals.VectorUnrelated). For the hash
// embedder it is the median of a question against a random LoCoMo turn (docs/recall.md). For
// model embedders it is unknown here (under e5-style models unrelated texts score 0.7 and
// more), so the weakest vector candidate stands in.
func (t *Tenant) vectorUnrelated() float64 {
	if emb := t.c.cfg.Embedder; emb != nil && emb.Provider() == "knowmind-hash" {
		return 0.1
	}
	return -1
}

// RerankerName names the cross-encoder recall reranks with, or "none".
func (c *Client) RerankerName() string {
	if c.cfg.Reranker == nil {
		return "none"
	}
	return c.cfg.Reranker.Name()
}

// Recall answers knowmind_recall (q.AsOf nil) and knowmind_recall_at_time (q.AsOf set).
func (t *Tenant) Recall(ctx context.Context, q knowmind.RecallQuery) (knowmind.RecallResult, error) {
	return t.RecallWith(ctx, q, search.Default())
}

// RecallWith is Recall with the plan and weights o (the benchmarks' ablations).
func (t *Tenant) RecallWith(ctx context.Context, q knowmind.RecallQuery, o search.Options) (knowmind.RecallResult, error) {
	return t.RecallTraced(ctx, q, o, nil)
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
	// Explain asks for the evidence behind the hits (the benchmark's per-question dump): the
	// fused entry and the second stage's evidence of each hit returned, the question's word
	// coverage (search.Known) and its text sides' terms with their statistics.
	Explain  bool
	From     []rank.Hit
	Evidence []search.HitEvidence
	Known    float64
	KnownOK  bool
	Sides    [2]search.TextSide
}

// RecallTraced is RecallWith recording into tr (nil: nothing recorded).
func (t *Tenant) RecallTraced(ctx context.Context, q knowmind.RecallQuery, o search.Options, tr *RecallTrace) (knowmind.RecallResult, error) {
	res, _, err := t.recall(ctx, q, o, tr, recallFilter{})
	return res, err
}

// recall runs one recall: the hits f accepts, best first, at most q.K, none below q.MinScore,
// and the metadata of the notes among them by memory id. f applies before k: a hit it refuses
// makes room for the next one.
func (t *Tenant) recall(ctx context.Context, q knowmind.RecallQuery, o search.Options, tr *RecallTrace, f recallFilter) (knowmind.RecallResult, map[string]dgNote, error) {
	start := time.Now()
	// Counted before the caches are ensured, so the budget either sees this reader and keeps
	// the tenant, or drops it first and ensure loads it again.
	t.text.readers.Add(1)
	defer t.text.readers.Add(-1)
	if tr == nil {
		tr = &RecallTrace{} // the few clock reads cost nothing next to a recall
	}
	mark := start
	phase := func(into *time.Duration) {
		now := time.Now()
		*into += now.Sub(mark)
		mark = now
	}
	if q.AsOf != nil {
		f.keep = currentAt(*q.AsOf, f.keep) // a note edited since reads as its revision of then
	}
	q.AskedAt = q.Asked(start) // one time of asking for the plan and the time signals
	req, err := t.PrepareRecall(ctx, q, o)
	if err != nil {
		return knowmind.RecallResult{}, nil, err
	}
	phase(&tr.Prepare)
	res := knowmind.RecallResult{Hits: []knowmind.RecallHit{}, Rerank: "none"}
	if req.DQL == "" {
		res.ElapsedMS = time.Since(start).Milliseconds()
		return res, nil, nil
	}
	in := t.fuseInput(req, o)
	// What the service scores from its own indexes over all the candidates it proposed does
	// not need Dgraph's answer: it runs while the request is in flight.
	early := make(chan *search.Ahead, 1)
	if !o.Plan.ScoreAfter {
		pre := in // in.Signals is filled further below
		go func() { early <- pre.ScoreAhead(req.vecScore, req.semPool) }()
	} else {
		early <- nil
	}
	txn := t.dg.NewReadOnlyTxn()
	tr.Requests = append(tr.Requests, RecallRequest{DQL: req.DQL, Vars: req.Vars})
	resp, err := txn.QueryWithVars(ctx, req.DQL, req.Vars)
	if err != nil {
		return knowmind.RecallResult{}, nil, fmt.Errorf("recall query: %w", err)
	}
	phase(&tr.Query)
	// The response is parsed once into its blocks: the candidates and the hops read theirs.
	var blocks map[string]json.RawMessage
	if err := json.Unmarshal(resp.Json, &blocks); err != nil {
		return knowmind.RecallResult{}, nil, fmt.Errorf("decode recall response: %w", err)
	}
	var out recallResponse
	for name, into := range map[string]any{"vec": &out.Vec, "txt": &out.Txt} {
		if data, found := blocks[name]; found {
			if err := json.Unmarshal(data, into); err != nil {
				return knowmind.RecallResult{}, nil, fmt.Errorf("decode recall %s: %w", name, err)
			}
		}
	}
	out.scoreVectors(req.vecScore)
	if q.AsOf != nil {
		out.validAt(*q.AsOf)
	}
	adjacent, err := parseHops(blocks, q.Hops, req.relations, q.AsOf)
	if err != nil {
		return knowmind.RecallResult{}, nil, err
	}
	phase(&tr.Decode)
	w := o.Weights
	in.Signals = rank.Signals{VectorWeight: t.vectorWeight(), VectorUnrelated: t.vectorUnrelated(),
		Adjacent: adjacent, Hops: q.Hops, Support: w.Support, TitleNeighbours: w.Title > 0 && w.TitleNeighbours}
	cands := out.candidateMemories()
	times := make([]search.MemoryTime, len(cands))
	for i, m := range cands {
		times[i] = search.MemoryTime{Memory: m.UID, ValidFrom: m.ValidFrom, Dates: m.Dates}
	}
	search.TimeSignals(q.Query, q.AskedAt, times, w, &in.Signals)
	in.Ahead = <-early // scored while the request was in flight
	rr := t.c.cfg.Reranker
	if !o.Plan.Rerank {
		rr = nil
	}
	if w.CommonWords && rr == nil && t.lexicalEvidence() {
		in.Common = search.CommonMatches(search.WithoutTime(q.Query, q.AskedAt, w), in.Text, t.c.cfg.WordLevels)
	}
	fused := search.Fuse(out.candidates(), in)
	floor := q.MinScore
	if w.CoverageFloor && rr == nil && t.lexicalEvidence() {
		c, ok := search.Known(&t.text.ix, t.Name, search.WithoutTime(q.Query, q.AskedAt, w), t.c.cfg.Analysis, in.Text)
		floor = search.Floor(q.MinScore, c, ok)
	}
	depth := q.K
	stage := w.Stage2.On() && rr == nil
	if rr != nil {
		depth = search.RerankDepth
	} else if stage {
		depth = max(depth, search.StagePool) // a fixed pool: the top n does not depend on k
	}
	phase(&tr.Fuse)
	// The hits are chosen first (every fused entry passed the memory filter), then only their
	// details are read: the first depth entries, and while keep refused some, the next ones in
	// windows doubling in size (a few reads even when the caller sees little of the tenant, or
	// asks for a category few memories have).
	// Without a reranker or the second stage the scores are final, so the entries below the
	// floor are never read.
	hits, from := []knowmind.RecallHit{}, []rank.Hit{}
	for next, window := 0, depth; len(hits) < depth && next < len(fused); window *= 2 {
		if rr == nil && !stage && search.RoundScore(fused[next].Score) < floor {
			break // scores fall down the list: the rest is below the floor too
		}
		chosen := fused[next:min(next+window, len(fused))]
		next += len(chosen)
		if err := readDetails(ctx, txn, &out, chosen, tr, detailReads{attrs: f.memory != nil, noteSince: q.AsOf != nil}); err != nil {
			return knowmind.RecallResult{}, nil, err
		}
		h, hf := out.hits(chosen, depth-len(hits), q.AsOf != nil, f)
		hits, from = append(hits, h...), append(from, hf...)
	}
	phase(&tr.Details)
	if tr.Explain {
		tr.From = from
		tr.Evidence = search.Explain(hits, in.Text, func(lang, text string) ([]string, int) {
			return t.c.cfg.Analysis.AnalyzeDoc(lang, text, nil)
		})
		tr.Known, tr.KnownOK = search.Known(&t.text.ix, t.Name, q.Query, t.c.cfg.Analysis, in.Text)
		tr.Sides = in.Text
	}
	if stage {
		hits, from = search.Stage2(hits, from, in.Text, w.Stage2, func(lang, text string) ([]string, int) {
			return t.c.cfg.Analysis.AnalyzeDoc(lang, text, nil)
		})
	}
	res.Hits = hits[:min(q.K, len(hits))]
	if rr != nil {
		if reranked, err := search.Rerank(ctx, rr, strings.TrimSpace(q.Query), hits, from); err != nil {
			// The fused order stands, and the answer says it was not reranked.
			t.c.log.Error("rerank failed; returning the fused order", "tenant", t.Name, "reranker", rr.Name(), "err", err)
		} else {
			res.Hits, res.Rerank = reranked[:min(q.K, len(reranked))], rr.Name()
		}
	}
	res.Hits = search.AboveFloor(res.Hits, floor)
	if q.AsOf != nil {
		revs, err := t.revisionHits(ctx, q, floor, f.keep)
		if err != nil {
			return knowmind.RecallResult{}, nil, err
		}
		res.Hits = mergeRevisionHits(res.Hits, revs, q.K)
	}
	notes := map[string]dgNote{}
	for _, n := range out.Notes {
		notes[n.ID] = n
	}
	res.ElapsedMS = time.Since(start).Milliseconds()
	return res, notes, nil
}

// fuseInput gathers what package search scores the candidates with: the text sides, the
// tenant's word vectors, semantic model and title field, and the weights of o.
func (t *Tenant) fuseInput(req RecallRequest, o search.Options) search.Input {
	w := o.Weights
	in := search.Input{Coverage: w.Coverage, VectorCoverage: w.VectorCoverage && o.Plan.Text && o.Plan.TextScore && t.lexicalVectors(), Text: req.text, Analyze: func(uid, lang, text string) ([]string, int) {
		return t.text.tokens.Analyze(uid, lang, text, t.analyzeDoc)
	}, RefTerms: func(refs []uint64) [][]string { return t.text.ix.RefTerms(t.Name, refs) }}
	if !o.Plan.TextScore {
		in.Text = [2]search.TextSide{}
	}
	if w.Semantic > 0 {
		in.Words, in.WordsWeight = &t.text.words, w.Semantic
		if o.Plan.TextScore { // the pool is text candidates: off with the text signal
			in.SemPool, in.PoolAsText = req.semPool, w.PoolAsText
		}
		if req.sem != nil {
			m, qv := req.sem, req.semQuery
			scores := func(refs []uint64) map[uint64]float32 { return m.Scores(qv, refs) }
			if o.Plan.SemanticSVD {
				in.SemScores = scores
			} else if w.Concept > 0 {
				in.ConceptScores, in.ConceptWeight = scores, w.Concept
			}
		}
	}
	if w.Title > 0 {
		in.TitleWeight = w.Title
		in.Titles = func(lang string, terms []string, refs []uint64) (map[uint64]float64, bm25.Stats) {
			return t.text.titles.ScoreRefs(t.Name, lang, terms, refs, bm25.Params{}), t.text.titles.Stats(t.Name, lang, terms...)
		}
	}
	if w.Context > 0 {
		in.Before, in.ContextWeight, in.ContextAdded = t.text.seq.Before, w.Context, w.ContextAdded
		in.RefScores = func(lang string, terms []string, refs []uint64) map[uint64]float64 {
			return t.text.ix.ScoreRefs(t.Name, lang, terms, refs, bm25.Params{})
		}
	}
	if w.Feedback > 0 {
		in.Stats = func(lang string, terms []string) bm25.Stats { return t.text.ix.Stats(t.Name, lang, terms...) }
		in.FeedbackWeight = w.Feedback
	}
	return in
}

// RecallRequest is the DQL request a recall sends, with its variables (the query vector among
// them). The speed benchmark sends it to Dgraph directly to show the service's own overhead.
type RecallRequest struct {
	DQL  string // "" when there is nothing to ask (text only, and no word the index could match)
	Vars map[string]string
	text [2]search.TextSide
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

// PrepareRecall validates q, embeds the query, runs the service's searches and renders the DQL,
// without sending it.
func (t *Tenant) PrepareRecall(ctx context.Context, q knowmind.RecallQuery, o search.Options) (RecallRequest, error) {
	var req RecallRequest
	if err := q.Validate(); err != nil {
		return req, err
	}
	p, w := o.Plan, o.Weights
	if (!p.Text || !p.TextScore) && !p.Vector {
		return req, fmt.Errorf("recall options: at least one of text and vector must be on")
	}
	query := strings.TrimSpace(q.Query)
	req.Vars = map[string]string{}
	served := o.ServedText()
	// The service's three searches — the exact vector scan, the full-text search of each
	// language and the semantic pool — need nothing of each other until their candidates are
	// merged, so they run at once.
	var (
		wg     sync.WaitGroup
		exact  []uint64
		scores []float32
		sides  [2]search.TextSide
		pool   []semvec.Hit
	)
	exactVectors := p.Vector && t.exactVectors() && p.ExactVectors
	if exactVectors || p.Text {
		// The tenant's text index and vectors, loaded once per process and brought up to date
		// with other replicas' writes when the tenant's change watermark moved (watermark.go);
		// the semantic model is built from the index.
		if err := t.text.ensure(ctx, t); err != nil {
			return req, err
		}
		t.text.fresh(ctx, t)
	}
	if p.Vector {
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
			wg.Go(func() { exact, scores, _ = t.text.vec.searchScored(vec, search.VectorCandidates) })
		}
	}
	// Full text, per stored language: the words to match and the statistics to score with.
	// [0] German (Chunk.text@de), [1] English (untagged Chunk.text).
	if p.Text {
		wg.Go(func() {
			for i, lang := range []string{"de", ""} {
				sides[i] = search.NewTextSide(&t.text.ix, t.Name, lang, query, t.c.cfg.Analysis, served)
			}
		})
		if served && (w.SemanticPool > 0 || p.SemanticSVD || w.Concept > 0) {
			wg.Go(func() {
				if m := t.semModel(p.SemanticLinks); m != nil {
					// The terms NewTextSide analyses, in its order.
					terms := slices.Concat(search.QueryTerms(&t.text.ix, t.Name, "de", query, t.c.cfg.Analysis),
						search.QueryTerms(&t.text.ix, t.Name, "", query, t.c.cfg.Analysis))
					if qv := m.Query(terms); qv != nil {
						req.sem, req.semQuery = m, qv
						pool = m.TopN(qv, w.SemanticPool, nil)
					}
				}
			})
		}
	}
	wg.Wait()
	if len(exact) > 0 && !p.DgraphVectorScores {
		req.vecScore = make(map[uint64]float64, len(exact))
		for i, u := range exact {
			req.vecScore[u] = float64(scores[i])
		}
	}
	var textUIDs, textSeeds []uint64
	if p.Text {
		for i, side := range sides {
			side.AddVectorScores(&t.text.ix, t.Name, exact)
			req.text[i] = side
			for u := range side.Scores {
				textUIDs = append(textUIDs, u)
			}
			textSeeds = append(textSeeds, side.Seeds...)
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
		if served && w.Context > 0 && w.Followers > 0 {
			textUIDs = append(textUIDs, t.followers(req.text, textUIDs, w.Followers)...)
		}
		slices.Sort(textUIDs)
		req.Vars["$de"], req.Vars["$en"] = req.text[0].Match, req.text[1].Match
		req.Vars["$sde"], req.Vars["$sen"] = req.text[0].Seed, req.text[1].Seed
		req.Vars["$vde"], req.Vars["$ven"] = req.text[0].Pool, req.text[1].Pool
	}
	if !p.Vector && !req.text[0].On() && !req.text[1].On() {
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
	validFrom, dates := search.TimeReads(query, q.Asked(time.Now()), w)
	dql, err := buildRecallQuery(recallPlan{
		vector: p.Vector,
		textDE: req.text[0].Match != "", textEN: req.text[1].Match != "",
		seedDE: req.text[0].Seed != "", seedEN: req.text[1].Seed != "",
		poolDE: req.text[0].Pool != "", poolEN: req.text[1].Pool != "",
		textServed: served && len(textUIDs) > 0, textUIDs: textUIDs, textSeeds: textSeeds,
		exact: exact, served: req.vecScore != nil, hops: q.Hops, asOf: q.AsOf, relations: relations,
		validFrom: validFrom, dates: dates,
	})
	if err != nil {
		return req, err
	}
	req.DQL, req.relations = dql, len(relations)
	return req, nil
}
