// Package rank fuses the signals of a recall into one ranking: it folds chunk hits into the
// memory they belong to, combines the text and vector scores by relative score fusion, scores
// graph neighbours below the hits that reached them, reorders by a cross-encoder's scores, and
// finds the exact top vectors of a flat set (TopN).
//
// It is pure computation on ids and numbers: it knows nothing of Dgraph, BM25 internals,
// embedders or MCP. package graph feeds it what one recall query returned.
//
// Scores it produces lie in 0..1 and are monotone with the final rank (a higher rank never
// has a lower score), so a client may threshold them.
package rank

import (
	"cmp"
	"slices"
)

// HopDecay is the factor applied per graph hop: a neighbour reached from a hit scored s is
// scored s·HopDecay, two hops away s·HopDecay², … — always strictly below the hit that reached
// it.
const HopDecay = 0.5

// Hit is one scored candidate; its ranking is the order of a []Hit.
type Hit struct {
	ID    string
	Score float64
	// Via is the id of the direct hit this one was reached from through the graph, "" for a
	// direct hit; Hops is the distance from it (0 for a direct hit).
	Via  string
	Hops int
	// Chunk is the chunk that represents a direct hit (its best chunk in the signal that
	// ranks it higher; see Fuse), "" for a memory reached through the graph.
	Chunk string
	// Text and Context are a direct hit's text and context signal scores as Fuse received
	// them (0: the signal did not find it; 0 for a memory reached through the graph): what
	// tells a hit found by the question's words from one found by other evidence.
	Text, Context float64
}

// Fold turns a ranking of chunks (best first) into a ranking of the memories they belong to:
// a memory takes the rank of its best chunk, and best[memory] names that chunk. memoryOf maps a
// chunk to its memory ("" = the chunk has no eligible memory and is dropped).
func Fold(chunks []string, memoryOf func(chunk string) string) (memories []string, best map[string]string) {
	best = map[string]string{}
	for _, c := range chunks {
		m := memoryOf(c)
		if m == "" {
			continue
		}
		if _, seen := best[m]; seen {
			continue
		}
		best[m] = c
		memories = append(memories, m)
	}
	return memories, best
}

// Expand adds graph neighbours to direct hits. adjacent lists each node's neighbours (both edge
// directions, as the caller traversed them). A node reached from a hit scored s over h edges
// scores s·HopDecay^h; a node reachable several ways keeps its best score, and a direct hit
// keeps its own score when that is higher. Paths longer than hops are not followed. The result
// is sorted best first; among equal scores direct hits come first, then the input order.
func Expand(direct []Hit, adjacent map[string][]string, hops int) []Hit {
	// out holds every node reached, in the order first reached; idx a node's index there. The
	// sort at the end is stable, so ties keep that order.
	idx := make(map[string]int, len(direct)+len(adjacent))
	out := make([]Hit, 0, len(direct)+len(adjacent))
	for _, h := range direct {
		if _, dup := idx[h.ID]; dup {
			continue
		}
		h.Via, h.Hops = "", 0
		idx[h.ID] = len(out)
		out = append(out, h)
	}
	// Breadth-first relaxation, one hop per round: the frontier holds the nodes whose score
	// changed in the previous round, so each round extends paths by exactly one edge.
	frontier := make([]int, len(out))
	for i := range frontier {
		frontier[i] = i
	}
	round := make([]int, len(out)) // round[j] == hop: node j is in this round's next frontier
	for hop := 1; hop <= hops && len(frontier) > 0; hop++ {
		// Parents are read as they stood when the round began, so that a node improved in this
		// round does not pass its new score on before the next one.
		parents := make([]Hit, len(frontier))
		for i, j := range frontier {
			parents[i] = out[j]
		}
		var next []int
		for _, parent := range parents {
			from := parent.ID
			s := parent.Score * HopDecay
			if s <= 0 {
				continue
			}
			origin := parent.Via
			if origin == "" {
				origin = parent.ID
			}
			for _, to := range adjacent[from] {
				j, ok := idx[to]
				if ok && out[j].Score >= s {
					continue
				}
				if !ok {
					j = len(out)
					idx[to] = j
					out = append(out, Hit{ID: to})
					round = append(round, 0)
				}
				out[j].Score, out[j].Via, out[j].Hops, out[j].Chunk = s, origin, parent.Hops+1, ""
				if round[j] != hop {
					round[j] = hop
					next = append(next, j)
				}
			}
		}
		frontier = next
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Hops, b.Hops)
	})
	return out
}

// Scored is one signal's candidates, best first, with their raw scores (BM25, cosine), for
// Relative. Floor is the score that maps to 0 (0 for BM25: no match; for cosine what an
// unrelated text scores, which is not 0 under most models), Top the score that maps to 1 (0:
// the best candidate's, a relative scale); scores outside map to 0 and 1.
type Scored struct {
	Weight float64
	IDs    []string
	Scores []float64
	Floor  float64
	Top    float64
	// Added: the signal adds its weighted score to the mean of the others instead of joining
	// it, so the memories it does not hold keep their score (the sum is capped at 1).
	Added bool
}

// Relative fuses signals by their scores rather than their ranks ("relative score fusion"):
// each signal's scores are scaled to 0..1 between its Floor and its Top (the best candidate's
// score when Top is 0), and a memory scores the weighted mean over all signals (a signal that
// does not hold it adds 0). Unlike RRF it keeps score gaps: a clear winner stands out, and weak
// candidates of one signal score near 0 instead of near half.
func Relative(lists ...Scored) []Hit {
	var total float64
	score := map[string]float64{}
	firstSeen := map[string][2]int{}
	for li, l := range lists {
		if l.Weight <= 0 || len(l.IDs) == 0 {
			continue
		}
		if !l.Added {
			total += l.Weight
		}
		top := l.Top
		if top == 0 {
			top = l.Scores[0]
			for _, s := range l.Scores {
				top = max(top, s)
			}
		}
		span := top - l.Floor
		for r, id := range l.IDs {
			v := 1.0
			if span > 0 {
				v = min(max((l.Scores[r]-l.Floor)/span, 0), 1)
			}
			score[id] += l.Weight * v
			if _, ok := firstSeen[id]; !ok {
				firstSeen[id] = [2]int{li, r}
			}
		}
	}
	if total == 0 {
		total = 1 // only added signals: each adds its weighted score
	}
	out := make([]Hit, 0, len(score))
	for id, s := range score {
		out = append(out, Hit{ID: id, Score: min(s/total, 1)})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		fa, fb := firstSeen[a.ID], firstSeen[b.ID]
		if c := cmp.Compare(fa[1], fb[1]); c != 0 {
			return c
		}
		if c := cmp.Compare(fa[0], fb[0]); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
