package rank

import (
	"cmp"
	"math"
	"slices"
)

// Chunk is a candidate chunk of one signal: its raw score (BM25, cosine) and the memory it
// belongs to ("" = no eligible memory; the chunk is dropped).
type Chunk struct {
	ID     string
	Memory string
	Score  float64
}

// Signals is what one recall gathered, for Fuse.
type Signals struct {
	// Text holds the full-text candidates scored by their BM25 as a share of the query's ideal
	// score (bm25.Ideal: 1 = holds every query term once at average length; only positive
	// scores count; above 1 counts as 1), Vector the vector candidates scored by their exact
	// cosine; any order.
	Text, Vector []Chunk
	// VectorWeight is the vector signal's weight in the fusion; the text signal weighs 1.
	VectorWeight float64
	// Feedback holds the text candidates scored against the expanded query's added terms
	// (pseudo-relevance feedback), on the text signal's scale, with its weight; nil = off.
	Feedback       []Chunk
	FeedbackWeight float64
	// Semantic holds candidates scored by a second, semantic similarity to the query (the
	// cosine of co-occurrence word vectors, package wordvec; 0..1, below 0 counts as 0), with
	// its weight; nil = off.
	Semantic       []Chunk
	SemanticWeight float64
	// Concept holds candidates scored by a second semantic similarity (the cosine of the
	// tenant's PPMI+SVD text vectors, package semvec; below 0 counts as 0), with its weight;
	// nil = off.
	Concept       []Chunk
	ConceptWeight float64
	// Context holds candidates scored by the memory before theirs in its sequence (the text
	// signal's score of that memory: the question a reply answers), with its weight; nil =
	// off. A signal of the mean like Semantic: a memory found only by what precedes it is a
	// hit too.
	Context       []Chunk
	ContextWeight float64
	// ContextAdded adds the context signal to the mean of the others (Scored.Added) instead
	// of making it a member.
	ContextAdded bool
	// Time maps memories to how well their time matches the time the query names (0..1; nil
	// when it names none), with its weight. It only counts for memories a text or vector
	// signal found: a date alone makes no hit.
	Time       map[string]float64
	TimeWeight float64
	// Title maps memories to how well their title matches the query (0..1: the title field's
	// BM25 as a share of the query's ideal score in the titles; nil = off), with its weight. It
	// is a factor, not a further signal of the mean: a direct hit's fused score is multiplied by
	// 1 + TitleWeight·match (at most 1), so memories whose title does not match keep their
	// score, and a title alone makes no hit; with TitleNeighbours graph neighbours too.
	Title       map[string]float64
	TitleWeight float64
	// Dated maps memories to 1 when the question asks for a time ("When did …?") and the
	// memory's text names a day, with its weight: a factor like Title (a direct hit's score ×
	// 1 + DatedWeight·v, at most 1), so the memories that state no day keep their score.
	Dated       map[string]float64
	DatedWeight float64
	// VectorUnrelated is the cosine an unrelated text typically has with a query under the
	// embedder in use: it maps to 0, cosine 1 to 1. Negative means unknown: the weakest vector
	// candidate stands in (relative, as candidates go).
	VectorUnrelated float64
	// Adjacent lists each memory's graph neighbours (both edge directions); Hops is how far
	// Fuse follows them.
	Adjacent map[string][]string
	Hops     int
	// Support weighs the evidence of neighbouring hits (0 = off, 1 = full): a memory next to
	// hits (one edge away, either direction) gains as if each neighbouring direct hit scored s
	// were a further piece of evidence s·HopDecay (noisy-or), so a memory that several hits
	// point at, or a weak hit between strong ones, rises. A memory reached only through the
	// graph still stays below the hit that reached it.
	Support float64
	// TitleNeighbours also applies the title factor to a memory reached through the graph whose
	// own title matches (Title), on top of the share of its hit's boosted score it inherits, and
	// strictly below that hit: on LoCoMo the answer is often the named speaker's reply next to
	// the other speaker's turn that shares the question's words.
	TitleNeighbours bool
	// CommonOnly holds text chunks (ids) that hold one of the question's terms, an everyday
	// word of a question whose subject the tenant never wrote (search.CommonMatches: "moon" of
	// "How many moons does Neptune have?"). A direct hit found by the question's words (its
	// text score at least its context score) whose best text chunk is one of them is left out
	// before the graph expansion, with the neighbours it alone would reach. nil: none is.
	CommonOnly map[string]bool
	// CommonBefore holds the chunks whose context score came from a memory before them that,
	// with them, holds one query term of that kind: a direct hit the context signal found (its
	// context score above its text score) by one of them is left out the same way.
	CommonBefore map[string]bool
}

// Fuse ranks the memories of one recall:
//
//  1. Each signal's chunks are ordered by score (ties by chunk id for text, input order for
//     vectors) and folded to memories: a memory takes its best chunk's score (Fold).
//  2. Score fusion (Relative): each signal on its own absolute scale 0..1 — text as the share
//     of the query's ideal BM25, cosine between an unrelated text's (VectorUnrelated) and 1 —
//     and combined as the weighted mean. Nothing is scaled by the best candidate, so the top
//     hit of a query nothing in the corpus answers scores low, not 1.
//  3. Title (Signals.Title): a direct hit's score × (1 + TitleWeight·match); the same for a
//     memory that names a day when the question asks when (Signals.Dated).
//  4. Words that cannot answer (Signals.CommonOnly): a direct hit found by one everyday word
//     of a question whose subject the tenant never wrote is left out.
//  5. Graph (Expand): a neighbour reached over h edges from a hit scored s scores s·HopDecay^h,
//     strictly below the hit; a memory keeps the best of its own and its graph score; with
//     TitleNeighbours a neighbour whose own title matches gains its title factor too (still
//     below its hit); then neighbour support (Support).
//
// A direct hit is represented by its best chunk (Hit.Chunk) in the signal that ranks it
// higher; a memory reached through the graph has none.
func Fuse(s Signals) []Hit {
	textList, textBest := scoredList(bestFirst(s.Text, true), 1)
	vecList, vecBest := scoredList(bestFirst(s.Vector, false), s.VectorWeight)
	textMems, vecMems := textList.IDs, vecList.IDs

	lists := make([]Scored, 0, 4)
	if len(textMems) > 0 {
		textList.Top = 1
		lists = append(lists, textList)
	}
	if len(s.Feedback) > 0 && s.FeedbackWeight > 0 {
		l, _ := scoredList(bestFirst(s.Feedback, true), s.FeedbackWeight)
		l.Top = 1
		lists = append(lists, l)
	}
	if len(s.Semantic) > 0 && s.SemanticWeight > 0 {
		l, _ := scoredList(bestFirst(s.Semantic, true), s.SemanticWeight)
		l.Top = 1
		lists = append(lists, l)
	}
	if len(s.Concept) > 0 && s.ConceptWeight > 0 {
		l, _ := scoredList(bestFirst(s.Concept, true), s.ConceptWeight)
		l.Top = 1
		lists = append(lists, l)
	}
	var contextBest map[string]string
	if len(s.Context) > 0 && s.ContextWeight > 0 {
		var l Scored
		l, contextBest = scoredList(bestFirst(s.Context, true), s.ContextWeight)
		l.Top, l.Added = 1, s.ContextAdded
		lists = append(lists, l)
	}
	if len(vecMems) > 0 {
		if s.VectorUnrelated >= 0 {
			vecList.Floor, vecList.Top = s.VectorUnrelated, 1
		} else {
			vecList.Floor = vecList.Scores[len(vecList.Scores)-1]
		}
		lists = append(lists, vecList)
	}
	if len(s.Time) > 0 && s.TimeWeight > 0 {
		l := Scored{Weight: s.TimeWeight, Top: 1}
		seen := map[string]bool{}
		for _, m := range slices.Concat(textMems, vecMems) {
			if v := s.Time[m]; v > 0 && !seen[m] {
				seen[m] = true
				l.IDs, l.Scores = append(l.IDs, m), append(l.Scores, v)
			}
		}
		if len(l.IDs) > 0 {
			lists = append(lists, l)
		}
	}
	direct := Relative(lists...)
	factor := func(by map[string]float64, weight float64) {
		if weight <= 0 || len(by) == 0 {
			return
		}
		for i, h := range direct {
			if v := by[h.ID]; v > 0 {
				direct[i].Score = min(h.Score*(1+weight*v), 1)
			}
		}
		slices.SortStableFunc(direct, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	}
	factor(s.Title, s.TitleWeight)
	factor(s.Dated, s.DatedWeight)
	textRank, vecRank := indexOf(textMems), indexOf(vecMems)
	contextScore := map[string]float64{}
	for _, c := range s.Context {
		if c.Memory != "" {
			contextScore[c.Memory] = max(contextScore[c.Memory], c.Score)
		}
	}
	if len(s.CommonOnly) > 0 || len(s.CommonBefore) > 0 {
		direct = slices.DeleteFunc(direct, func(h Hit) bool {
			text := 0.0
			if r, ok := textRank[h.ID]; ok {
				text = textList.Scores[r]
			}
			ctx := contextScore[h.ID]
			switch {
			case text > 0 && text >= ctx:
				return s.CommonOnly[textBest[h.ID]]
			case ctx > text:
				return s.CommonBefore[contextBest[h.ID]]
			}
			return false
		})
	}
	hits := Expand(direct, s.Adjacent, s.Hops)
	if s.TitleNeighbours && s.TitleWeight > 0 && len(s.Title) > 0 {
		hits = s.titleNeighbours(hits, direct)
	}
	if s.Support > 0 && s.Hops > 0 {
		hits = Support(hits, direct, s.Adjacent, s.Support)
	}

	for i, h := range hits {
		if h.Via != "" {
			continue
		}
		if r, ok := textRank[h.ID]; ok {
			hits[i].Text = textList.Scores[r]
		}
		hits[i].Context = contextScore[h.ID]
		tr, tok := textRank[h.ID]
		vr, vok := vecRank[h.ID]
		switch {
		case tok && (!vok || tr <= vr):
			hits[i].Chunk = textBest[h.ID]
		case vok:
			hits[i].Chunk = vecBest[h.ID]
		default:
			hits[i].Chunk = contextBest[h.ID] // found by the memory before it alone
		}
	}
	return hits
}

// titleNeighbours multiplies the score of each memory reached through the graph whose own
// title matches by 1 + TitleWeight·match, strictly below the direct hit that reached it (its
// score in direct), and reorders hits, best first (ties keep their order), when any changed.
func (s Signals) titleNeighbours(hits, direct []Hit) []Hit {
	var origin map[string]float64
	changed := false
	for i, h := range hits {
		v := s.Title[h.ID]
		if v <= 0 || h.Via == "" {
			continue
		}
		if origin == nil {
			origin = make(map[string]float64, len(direct))
			for _, d := range direct {
				origin[d.ID] = d.Score
			}
		}
		hits[i].Score = min(h.Score*(1+s.TitleWeight*v), math.Nextafter(origin[h.Via], 0))
		changed = true
	}
	if changed {
		slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	}
	return hits
}

// Support adds the evidence of neighbouring direct hits to each of hits (see Signals.Support)
// and reorders them, best first (ties keep their order). direct are the direct hits with their
// own scores, best first; adjacent is read in both directions.
//
// A hit's neighbours are multiplied in their order in direct, not in the order their edges
// were listed or a map met them: a product rounds differently in another order, and two
// memories with the same evidence must tie, in every call.
func Support(hits, direct []Hit, adjacent map[string][]string, weight float64) []Hit {
	place := make(map[string]int, len(direct))
	for j, h := range direct {
		if _, dup := place[h.ID]; !dup {
			place[h.ID] = j
		}
	}
	score := make(map[string]float64, len(hits))
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	// Undirected one-edge neighbourhoods of the hits, holding only direct hits (only they lend
	// evidence), as places in direct: the adjacency of two hops from every seed is far larger
	// than what is asked of it.
	near := make(map[string][]int, len(hits))
	for _, h := range hits {
		for _, to := range adjacent[h.ID] {
			if j, ok := place[to]; ok {
				near[h.ID] = append(near[h.ID], j)
			}
		}
	}
	for j, d := range direct {
		if place[d.ID] != j {
			continue
		}
		for _, to := range adjacent[d.ID] {
			if _, ok := score[to]; ok {
				near[to] = append(near[to], j)
			}
		}
	}
	out := slices.Clone(hits)
	for i, h := range out {
		js := near[h.ID]
		slices.Sort(js)
		miss := 1.0
		for k, j := range js {
			if o := direct[j].ID; (k > 0 && js[k-1] == j) || o == h.ID || o == h.Via {
				continue
			}
			miss *= 1 - direct[j].Score*HopDecay
		}
		e := weight * (1 - miss)
		if e <= 0 {
			continue
		}
		v := 1 - (1-h.Score)*(1-e)
		if h.Via != "" {
			// Strictly below the hit that reached it.
			v = min(v, math.Nextafter(score[h.Via], 0))
		}
		out[i].Score = max(h.Score, v)
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// bestFirst returns chunks ordered by falling score; ties by chunk id when byID, else in input
// order. The input is not reordered.
func bestFirst(chunks []Chunk, byID bool) []Chunk {
	out := slices.Clone(chunks)
	slices.SortStableFunc(out, func(a, b Chunk) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 || !byID {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// scoredList folds chunks (best first) to memories (Fold) into one signal's list for Relative:
// each memory with its best chunk's score; best names that chunk.
func scoredList(chunks []Chunk, weight float64) (l Scored, best map[string]string) {
	ids := make([]string, len(chunks))
	memoryOf := make(map[string]string, len(chunks))
	score := make(map[string]float64, len(chunks))
	for i, c := range chunks {
		ids[i] = c.ID
		if _, seen := score[c.ID]; !seen {
			memoryOf[c.ID], score[c.ID] = c.Memory, c.Score
		}
	}
	l.Weight = weight
	l.IDs, best = Fold(ids, func(c string) string { return memoryOf[c] })
	for _, m := range l.IDs {
		l.Scores = append(l.Scores, score[best[m]])
	}
	return l, best
}

func indexOf(ids []string) map[string]int {
	m := make(map[string]int, len(ids))
	for i, id := range ids {
		m[id] = i
	}
	return m
}

// Rerank orders hits by a cross-encoder's scores (scores[i] for hits[i], clamped to 0..1),
// which become their scores. A memory reached through the graph stays strictly below the hit
// that reached it: its score is at most that hit's reranked score × HopDecay per hop (when the
// origin is among hits, as it is whenever hits is a prefix of Fuse's order). It returns the
// new order as indexes into hits and the final score of each hit (indexed like hits).
func Rerank(hits []Hit, scores []float64) (order []int, final []float64) {
	byID := map[string]float64{} // direct hits' reranked scores
	for i, h := range hits {
		if h.Via == "" {
			byID[h.ID] = min(max(scores[i], 0), 1)
		}
	}
	final = make([]float64, len(hits))
	for i, h := range hits {
		s := min(max(scores[i], 0), 1)
		if h.Via != "" {
			if origin, ok := byID[h.Via]; ok {
				s = min(s, origin*math.Pow(HopDecay, float64(h.Hops)))
			}
		}
		final[i] = s
	}
	order = make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(final[b], final[a]) })
	return order, final
}
