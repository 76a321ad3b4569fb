package search

import (
	"slices"
	"strings"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/prf"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/wordvec"
)

// Candidate is a chunk the store returned for a recall, with its eligible memory ("" when the
// memory filter dropped it).
type Candidate struct {
	Chunk  string // the chunk's uid as the store writes it
	Ref    uint64 // the same uid as a number (0: unparsable)
	Memory string // its memory's uid; "" = not eligible
	// Score is a vector candidate's exact cosine.
	Score float64
	// DE, EN: a text candidate's text, when Dgraph's full-text step read it.
	DE, EN string
}

// Candidates are what the store returned for one recall: the vector and the text candidates.
type Candidates struct {
	Vector, Text []Candidate
}

// Input is what Fuse needs besides the candidates.
type Input struct {
	Text [2]TextSide
	// Analyze analyses text Dgraph read as the text index does (cached): its tokens and its
	// length for BM25 (bm25.Analysis.AnalyzeDoc).
	Analyze func(uid, lang, text string) (tokens []string, length int)
	// Stats looks up corpus statistics for more terms (the feedback's); nil turns feedback off.
	Stats          func(lang string, terms []string) bm25.Stats
	FeedbackWeight float64
	Signals        rank.Signals
	// Words scores the text candidates' semantic similarity to the query (nil: off), a signal
	// of weight WordsWeight.
	Words       *wordvec.Model
	WordsWeight float64
	// RefTerms returns the terms of chunks by uid (the text index's), for the candidates the
	// service's text index found, whose text recall does not read.
	RefTerms func(refs []uint64) [][]string
	// Titles scores chunks by uid on their memory's title (the title field) and gives the
	// titles' statistics for the terms; nil: off. TitleWeight is the signal's weight.
	Titles      func(lang string, terms []string, refs []uint64) (map[uint64]float64, bm25.Stats)
	TitleWeight float64
	// SemPool: the chunks the semantic model proposed, by uid, with their cosine to the query;
	// those no text signal found join the semantic signal with it. SemScores, when set, scores
	// the text candidates' semantic signal with the semantic model instead of Words.
	SemPool   map[uint64]float64
	SemScores func(refs []uint64) map[uint64]float32
	// ConceptScores, when set, scores the text candidates and the pool by the semantic model as
	// a signal of its own (rank.Signals.Concept) of weight ConceptWeight; the pool then joins it
	// instead of the word vectors' signal.
	ConceptScores func(refs []uint64) map[uint64]float32
	ConceptWeight float64
	PoolAsText    float64
	// Ahead: the semantic and title scores computed while the store's request was in flight
	// (nil: compute them here).
	Ahead *Ahead
	// Coverage scales the semantic and concept signals by the share of the query's
	// information the tenant's vocabulary holds (bm25.Coverage, the best of the language
	// sides): the models compare only the query words they know, so without it a question
	// about things the tenant never mentions scores as high as its one known word.
	Coverage bool
	// VectorCoverage scales the vector signal's contribution by the same coverage: for a
	// lexical embedder (the built-in hash embedder), whose cosine for a word the tenant never
	// wrote is the noise of hash collisions and shared character n-grams, not evidence — a
	// one-word question about a thing the store never mentions would otherwise hit the short
	// text whose words collide with it. A model embedder's cosine is semantic and stays as it
	// is. It needs the text sides' terms and statistics (Text).
	VectorCoverage bool
	// Before gives, for chunk uids, the chunk uids of the memory before each one's in its
	// sequence (textdoc.Sequences.Before); nil: no context signal. RefScores scores chunks by
	// uid against a language side's terms with BM25 (the text index's bm25.Index.ScoreRefs);
	// the signal also needs RefTerms (a candidate's own terms).
	// ContextWeight is the context signal's weight (rank.Signals.Context).
	Before        func(refs []uint64) map[uint64][]uint64
	RefScores     func(lang string, terms []string, refs []uint64) map[uint64]float64
	ContextWeight float64
	ContextAdded  bool
	// Common are the query terms that stand for everyday words of a question whose subject
	// the tenant never wrote (CommonMatches); a text chunk holding one query term, one of
	// these, cannot answer it (rank.Signals.CommonOnly). Nil: off. Served sides need RefTerms.
	Common map[string]bool
}

// Fuse scores the text candidates with BM25 (per language corpus, the tenant's statistics) as a
// share of the query's ideal score in that corpus (bm25.Ideal: absolute, comparable across
// queries and languages), takes the vector candidates' exact cosines, adds the semantic, title
// and feedback signals, and hands all with the graph to rank.Fuse.
func Fuse(cands *Candidates, in Input) []rank.Hit {
	sig := in.Signals
	for _, c := range cands.Vector {
		if c.Memory != "" {
			sig.Vector = append(sig.Vector, rank.Chunk{ID: c.Chunk, Memory: c.Memory, Score: c.Score})
		}
	}
	for i, side := range in.Text {
		if (side.Served || side.Match != "") && in.Titles != nil && in.TitleWeight > 0 {
			if sig.Title == nil {
				sig.Title, sig.TitleWeight = map[string]float64{}, in.TitleWeight
			}
			titleMatch(cands, side, in.Ahead.titles(i, in.Titles), sig.Title)
		}
		if side.Served {
			fuseServed(&sig, cands, in, i, side)
			continue
		}
		if side.Match == "" {
			continue
		}
		memoryOf := map[string]string{}
		var docs []bm25.Doc
		for _, c := range cands.Text {
			if c.Memory == "" {
				continue
			}
			body := c.EN
			if i == 0 {
				body = c.DE
			}
			if body == "" {
				continue
			}
			memoryOf[c.Chunk] = c.Memory
			tokens, length := in.Analyze(c.Chunk, side.Lang, body)
			docs = append(docs, bm25.Doc{ID: c.Chunk, Tokens: tokens, Length: length})
			if len(in.Common) > 0 && commonOnly(side.Terms, tokens, in.Common) {
				if sig.CommonOnly == nil {
					sig.CommonOnly = map[string]bool{}
				}
				sig.CommonOnly[c.Chunk] = true
			}
		}
		ideal := bm25.Ideal(side.Terms, side.Stats)
		scored := bm25.Score(side.Terms, docs, side.Stats, bm25.Params{})
		for _, s := range scored {
			if s.Score > 0 && ideal > 0 {
				sig.Text = append(sig.Text, rank.Chunk{ID: s.ID, Memory: memoryOf[s.ID], Score: s.Score / ideal})
			}
		}
		if in.Words != nil && len(docs) > 0 {
			found, texts := make([]rank.Chunk, len(docs)), make([][]string, len(docs))
			for j, d := range docs {
				found[j], texts[j] = rank.Chunk{ID: d.ID, Memory: memoryOf[d.ID]}, d.Tokens
			}
			sig.Semantic = append(sig.Semantic, semantic(in.Words, side.Terms, found, nil, texts)...)
		}
		if in.Stats != nil && ideal > 0 {
			sig.Feedback = append(sig.Feedback, feedback(side, docs, scored, memoryOf, ideal, in.Stats)...)
		}
	}
	if in.Before != nil && in.RefScores != nil && in.RefTerms != nil && in.ContextWeight > 0 {
		sig.Context, sig.CommonBefore = contextSignal(cands, in)
		if len(sig.Context) > 0 {
			sig.ContextWeight, sig.ContextAdded = in.ContextWeight, in.ContextAdded
		}
	}
	if len(in.SemPool) > 0 {
		// The pool's chunks that no text signal found: semantic evidence alone.
		text := make(map[string]bool, len(sig.Text))
		for _, c := range sig.Text {
			text[c.ID] = true
		}
		for _, c := range cands.Text {
			if s, ok := in.SemPool[c.Ref]; ok && c.Ref != 0 && !text[c.Chunk] && c.Memory != "" {
				if in.PoolAsText > 0 {
					sig.Text = append(sig.Text, rank.Chunk{ID: c.Chunk, Memory: c.Memory, Score: in.PoolAsText * s})
				}
				if in.ConceptScores != nil {
					sig.Concept = append(sig.Concept, rank.Chunk{ID: c.Chunk, Memory: c.Memory, Score: s})
				} else {
					sig.Semantic = append(sig.Semantic, rank.Chunk{ID: c.Chunk, Memory: c.Memory, Score: s})
				}
			}
		}
	}
	if in.Coverage || in.VectorCoverage {
		cov, _ := Coverage(in.Text)
		if in.Coverage {
			scale(sig.Semantic, cov)
			scale(sig.Concept, cov)
		}
		if in.VectorCoverage {
			sig.Vector = scaleAbove(sig.Vector, max(sig.VectorUnrelated, 0), cov)
		}
	}
	if len(sig.Feedback) > 0 {
		sig.FeedbackWeight = in.FeedbackWeight
	}
	if len(sig.Semantic) > 0 {
		sig.SemanticWeight = in.WordsWeight
	}
	if len(sig.Concept) > 0 {
		sig.ConceptWeight = in.ConceptWeight
	}
	return rank.Fuse(sig)
}

// Coverage is the share of the query's information the tenant's vocabulary holds
// (bm25.Coverage, after decompounding), the best of the language sides; ok is false when no side
// analysed the query into terms (a vector-only plan, a question of stop words only).
func Coverage(sides [2]TextSide) (c float64, ok bool) {
	for _, side := range sides {
		if len(side.Terms) > 0 {
			c, ok = max(c, bm25.Coverage(side.Terms, side.Stats)), true
		}
	}
	return c, ok
}

// fuseServed adds the signals of side i, whose candidates the service's text index proposed
// (scored there: side.Scores), to sig.
func fuseServed(sig *rank.Signals, cands *Candidates, in Input, i int, side TextSide) {
	ideal := bm25.Ideal(side.Terms, side.Stats)
	var found []rank.Chunk
	var refs []uint64
	for _, c := range cands.Text {
		if s := side.Scores[c.Ref]; c.Ref != 0 && s > 0 && ideal > 0 && c.Memory != "" {
			sig.Text = append(sig.Text, rank.Chunk{ID: c.Chunk, Memory: c.Memory, Score: s / ideal})
			found, refs = append(found, rank.Chunk{ID: c.Chunk, Memory: c.Memory}), append(refs, c.Ref)
		}
	}
	if len(refs) == 0 {
		return
	}
	if len(in.Common) > 0 && in.RefTerms != nil {
		for j, terms := range in.RefTerms(refs) {
			if commonOnly(side.Terms, terms, in.Common) {
				if sig.CommonOnly == nil {
					sig.CommonOnly = map[string]bool{}
				}
				sig.CommonOnly[found[j].ID] = true
			}
		}
	}
	if in.ConceptScores != nil {
		sig.Concept = append(sig.Concept, positive(found, inOrder(refs, in.ConceptScores(refs)))...)
	}
	switch {
	case in.SemScores != nil:
		sig.Semantic = append(sig.Semantic, positive(found, inOrder(refs, in.SemScores(refs)))...)
	case in.Words != nil && in.RefTerms != nil:
		if sims := in.Ahead.semantic(i, refs); sims != nil {
			sig.Semantic = append(sig.Semantic, positive(found, sims)...)
		} else {
			sig.Semantic = append(sig.Semantic, semantic(in.Words, side.Terms, found, refs, in.RefTerms(refs))...)
		}
	}
}

// semantic scores candidates (texts[i] the terms of found[i], chunk uids refs[i] or nil) by their
// similarity to the query's terms under the word vectors; only positive similarities count.
// With refs the word vectors keep each chunk's text norm until the next write.
func semantic(words *wordvec.Model, query []string, found []rank.Chunk, refs []uint64, texts [][]string) []rank.Chunk {
	return positive(found, words.SimilarityKeyed(query, refs, texts))
}

// scale multiplies the chunks' scores by f.
func scale(chunks []rank.Chunk, f float64) {
	for i := range chunks {
		chunks[i].Score *= f
	}
}

// scaleAbove scales the part of each cosine above floor (what the fusion counts: a cosine at the
// floor counts 0) by f, and drops the chunks left with nothing above it.
func scaleAbove(chunks []rank.Chunk, floor, f float64) []rank.Chunk {
	out := chunks[:0]
	for _, c := range chunks {
		if c.Score <= floor || f <= 0 {
			continue
		}
		c.Score = floor + (c.Score-floor)*f
		out = append(out, c)
	}
	return out
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
func feedback(side TextSide, docs []bm25.Doc, scored []bm25.Scored, memoryOf map[string]string, ideal float64,
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
	st := stats(side.Lang, prf.Candidates(side.Terms, fb))
	terms := prf.Expand(side.Terms, fb, st, prf.Params{Terms: feedbackTerms, Weight: 1, MinDocs: feedbackMinDocs})
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

// titleMatch scores the memories of the text and vector candidates on their title for one
// language side: the title field's BM25 of the chunk found as a share of the ideal score of the
// query terms some title holds (a query word no title holds does not count against a title),
// the best chunk's per memory, into match.
func titleMatch(cands *Candidates, side TextSide, titles func(string, []string, []uint64) (map[uint64]float64, bm25.Stats), match map[string]float64) {
	memoryOf := map[uint64]string{}
	var refs []uint64
	add := func(c Candidate) {
		if c.Ref != 0 && c.Memory != "" {
			if _, ok := memoryOf[c.Ref]; !ok {
				memoryOf[c.Ref] = c.Memory
				refs = append(refs, c.Ref)
			}
		}
	}
	for _, c := range cands.Text {
		add(c)
	}
	for _, c := range cands.Vector {
		add(c)
	}
	if len(refs) == 0 {
		return
	}
	scores, st := titles(side.Lang, side.Terms, refs)
	if len(scores) == 0 {
		return
	}
	var held []string
	for _, term := range side.Terms {
		if st.DF[term] > 0 {
			held = append(held, term)
		}
	}
	ideal := bm25.Ideal(held, st)
	if ideal <= 0 {
		return
	}
	for u, s := range scores {
		m := memoryOf[u]
		match[m] = max(match[m], min(s/ideal, 1))
	}
}

// contextSignal scores each text and vector candidate by the memory before it in its sequence:
// the BM25 score, as a share of the query's ideal score, of that memory's best chunk on the
// query terms the candidate itself lacks, on each side the service's text index served. A reply
// ("been doing it for 3 years") is then found by the question it answers ("How long have you
// been doing pottery?"), while the sections of one document that all name its subject ("Bäckerei
// Hofmann") do not count that word twice.
func contextSignal(cands *Candidates, in Input) ([]rank.Chunk, map[string]bool) {
	type cand struct {
		chunk, memory string
	}
	of := map[uint64]cand{}
	var refs []uint64
	for _, list := range [][]Candidate{cands.Text, cands.Vector} {
		for _, c := range list {
			if _, ok := of[c.Ref]; !ok && c.Ref != 0 && c.Memory != "" {
				of[c.Ref] = cand{c.Chunk, c.Memory}
				refs = append(refs, c.Ref)
			}
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	before := in.Before(refs)
	if len(before) == 0 {
		return nil, nil
	}
	followers := make([]uint64, 0, len(before))
	for _, r := range refs {
		if len(before[r]) > 0 {
			followers = append(followers, r)
		}
	}
	own := in.RefTerms(followers)
	best := map[uint64]float64{}
	bestFrom := map[uint64]contextFrom{}
	for si, side := range in.Text {
		ideal := bm25.Ideal(side.Terms, side.Stats)
		if !side.Served || ideal <= 0 {
			continue
		}
		// The followers grouped by the query terms they lack: one scoring per group.
		type group struct {
			missing []string
			members []uint64
		}
		groups := map[string]*group{}
		var keys []string
		for i, r := range followers {
			var missing []string
			for _, term := range side.Terms {
				if i >= len(own) || !slices.Contains(own[i], term) {
					missing = append(missing, term)
				}
			}
			if len(missing) == 0 {
				continue
			}
			key := strings.Join(missing, "\x00")
			g := groups[key]
			if g == nil {
				g = &group{missing: missing}
				groups[key] = g
				keys = append(keys, key)
			}
			g.members = append(g.members, r)
		}
		for _, key := range keys {
			g := groups[key]
			var prev []uint64
			for _, r := range g.members {
				prev = append(prev, before[r]...)
			}
			scores := in.RefScores(side.Lang, g.missing, prev)
			for _, r := range g.members {
				for _, p := range before[r] {
					if s := scores[p] / ideal; s > best[r] {
						best[r] = min(s, 1)
						bestFrom[r] = contextFrom{prev: p, side: si}
					}
				}
			}
		}
	}
	var out []rank.Chunk
	for _, r := range refs {
		if s := best[r]; s > 0 {
			out = append(out, rank.Chunk{ID: of[r].chunk, Memory: of[r].memory, Score: s})
		}
	}
	return out, commonBefore(in, followers, own, bestFrom, func(r uint64) string { return of[r].chunk })
}

// contextFrom is the memory before a follower that gave it its context score, by chunk uid, and
// the text side it was scored on.
type contextFrom struct {
	prev uint64
	side int
}

// commonBefore are the followers' chunks (chunk(r) for uid r) that, together with the memory
// before them that scored them, hold one query term, an everyday word of a question whose
// subject the tenant never wrote (Input.Common): the reply to "I'm over the moon" found by
// "How many moons does Neptune have?" (rank.Signals.CommonBefore). own[i] are followers[i]'s
// terms. Nil when Input.Common is.
func commonBefore(in Input, followers []uint64, own [][]string, from map[uint64]contextFrom, chunk func(uint64) string) map[string]bool {
	if len(in.Common) == 0 || len(from) == 0 {
		return nil
	}
	var prevs []uint64
	for _, r := range followers {
		if f, ok := from[r]; ok {
			prevs = append(prevs, f.prev)
		}
	}
	prevTerms := in.RefTerms(prevs)
	var out map[string]bool
	j := 0
	for i, r := range followers {
		f, ok := from[r]
		if !ok {
			continue
		}
		var both []string
		if i < len(own) {
			both = append(both, own[i]...)
		}
		if j < len(prevTerms) {
			both = append(both, prevTerms[j]...)
		}
		j++
		if commonOnly(in.Text[f.side].Terms, both, in.Common) {
			if out == nil {
				out = map[string]bool{}
			}
			out[chunk(r)] = true
		}
	}
	return out
}
