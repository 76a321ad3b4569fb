package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
)

// A rule re-scores one dumped question's hits (a score below 0 drops a hit); the floor then
// applies as recall applies it.
type rule struct {
	name  string
	score func(q *dumpQuestion, h dumpHit) float64
}

// runRules simulates rules over the scores on the per-question dumps of the LoCoMo and German
// benches (--dump), without Dgraph: R@10, MRR@10 and off-topic asks with hits for conversations
// 1–2, 3–5 and the German check, and how many answers have the shape of the off-topic hits.
func runRules(args []string) error {
	fs := flag.NewFlagSet("bench rules", flag.ContinueOnError)
	locomoDump := fs.String("locomo", "", "the LoCoMo bench's --dump file (all 5 dev conversations)")
	germanDump := fs.String("german", "", "the German bench's --dump file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *locomoDump == "" || *germanDump == "" {
		return fmt.Errorf("--locomo and --german are required")
	}
	lq, err := readDump(*locomoDump)
	if err != nil {
		return err
	}
	gq, err := readDump(*germanDump)
	if err != nil {
		return err
	}
	var first, second []dumpQuestion
	convs := map[string]int{}
	for _, q := range lq {
		if _, ok := convs[q.Conv]; !ok {
			convs[q.Conv] = len(convs)
		}
		if convs[q.Conv] < 2 {
			first = append(first, q)
		} else {
			second = append(second, q)
		}
	}
	w := os.Stdout
	fmt.Fprintln(w, "| rule | conv 1–2 R@10 | MRR@10 | off | conv 3–5 R@10 | MRR@10 | off | German R@10 | MRR | off |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range simulatedRules() {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, set := range [][]dumpQuestion{first, second, gq} {
			m := simulate(set, r)
			fmt.Fprintf(w, " %.3f | %.3f | %d/%d |", m.recall, m.mrr, m.offHits, m.off)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, set := range []struct {
		name string
		qs   []dumpQuestion
	}{{"LoCoMo dev", lq}, {"German check", gq}} {
		shaped, answered, noise, offHits := noiseShape(set.qs)
		fmt.Fprintf(w, "- %s: %d of %d answers in the top 10 and %d of %d off-topic best hits have the off-topic shape (a word hit holding one query term, word coverage ≤ 0.5)\n",
			set.name, shaped, answered, noise, offHits)
	}
	return nil
}

func readDump(path string) ([]dumpQuestion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []dumpQuestion
	r := bufio.NewReader(f)
	dec := json.NewDecoder(r)
	for {
		var q dumpQuestion
		if err := dec.Decode(&q); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, q)
	}
}

// fusedHit is a dumped hit as the fusion handed it on (for search.WordHit).
func fusedHit(h dumpHit) rank.Hit {
	f := rank.Hit{Score: h.Score, Text: h.Text, Context: h.Context}
	if h.Via {
		f.Via, f.Hops = "via", h.Hops
	}
	return f
}

// wordCoverage is the question's word coverage (search.Known), 1 when it had no terms to
// measure (the floor then stands).
func wordCoverage(q *dumpQuestion) float64 {
	if !q.KnownOK {
		return 1
	}
	return q.Known
}

// oneWordShape: a word hit holding one query term in a question whose words the tenant knows at
// most max of — every English off-topic hit left at the default floor.
func oneWordShape(q *dumpQuestion, h dumpHit, max float64) bool {
	return search.WordHit(fusedHit(h)) && len(h.Holds) <= 1 && wordCoverage(q) <= max
}

func simulatedRules() []rule {
	keep := func(q *dumpQuestion, h dumpHit) float64 { return h.Score }
	floorBy := func(f func(q *dumpQuestion, h dumpHit) float64) func(q *dumpQuestion, h dumpHit) float64 {
		return func(q *dumpQuestion, h dumpHit) float64 {
			if h.Score < f(q, h) {
				return -1
			}
			return h.Score
		}
	}
	coverageFloor := func(q *dumpQuestion, h dumpHit) float64 {
		return search.Floor(knowmind.RecallMinScore, wordCoverage(q), q.KnownOK)
	}
	stage := func(w search.StageWeights) func(q *dumpQuestion, h dumpHit) float64 {
		return func(q *dumpQuestion, h dumpHit) float64 {
			if w.WordHits && !search.WordHit(fusedHit(h)) {
				return h.Score
			}
			s := h.Score * (1 - w.Coverage*(1-h.Cov))
			return min(s+w.Proximity*h.Near*(1-s), 1)
		}
	}
	rules := []rule{
		{"floor 0.1 (default)", keep},
		{"floor 0.1 / word coverage, every hit (Weights.CoverageFloor)", floorBy(coverageFloor)},
		{"floor 0.1 / word coverage, word hits only", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if !search.WordHit(fusedHit(h)) {
				return knowmind.RecallMinScore
			}
			return coverageFloor(q, h)
		})},
		{"no word hit holding one query term when the question's word coverage ≤ 0.5", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if oneWordShape(q, h, 0.5) {
				return math.Inf(1)
			}
			return 0
		})},
		{"the same, word coverage ≤ 1/3", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if oneWordShape(q, h, 1.0/3) {
				return math.Inf(1)
			}
			return 0
		})},
	}
	for _, w := range []search.StageWeights{
		{Coverage: 0.25, WordHits: true}, {Proximity: 0.1, WordHits: true}, {Coverage: 0.25, Proximity: 0.25, WordHits: true},
		{Coverage: 0.5, WordHits: true}, {Coverage: 1, WordHits: true}, {Coverage: 0.25}, {Proximity: 0.25},
	} {
		on := "word hits"
		if !w.WordHits {
			on = "every hit"
		}
		rules = append(rules, rule{fmt.Sprintf("second stage on %s, IDF coverage %g, term proximity %g", on, w.Coverage, w.Proximity), stage(w)})
	}
	for _, f := range []float64{0.15, 0.2, 0.25, 0.3} {
		rules = append(rules, rule{fmt.Sprintf("floor %g", f), floorBy(func(*dumpQuestion, dumpHit) float64 { return f })})
	}
	return rules
}

type simulated struct {
	recall, mrr  float64
	offHits, off int
}

// simulate applies r to each question's dumped hits, orders them again, applies the default floor
// and scores the first 10 as the benches do.
func simulate(qs []dumpQuestion, r rule) simulated {
	var m simulated
	var n int
	for i := range qs {
		q := &qs[i]
		type scored struct {
			src   string
			score float64
		}
		var ranked []scored
		for _, h := range q.Hits {
			ranked = append(ranked, scored{h.Src, r.score(q, h)})
		}
		slices.SortStableFunc(ranked, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
		var top []string
		for _, s := range ranked {
			if len(top) < 10 && search.RoundScore(s.score) >= knowmind.RecallMinScore {
				top = append(top, s.src)
			}
		}
		if q.OffTopic {
			m.off++
			if len(top) > 0 {
				m.offHits++
			}
			continue
		}
		n++
		if at := slices.IndexFunc(top, func(s string) bool { return slices.Contains(q.Answers, s) }); at >= 0 {
			m.recall++
			m.mrr += 1 / float64(at+1)
		}
	}
	if n > 0 {
		m.recall, m.mrr = m.recall/float64(n), m.mrr/float64(n)
	}
	return m
}

// noiseShape counts the answers (the first in the top 10 at the default floor) and the off-topic
// best hits that have the one-word shape.
func noiseShape(qs []dumpQuestion) (shaped, answered, noise, offHits int) {
	for i := range qs {
		q := &qs[i]
		var top []dumpHit
		for _, h := range q.Hits {
			if len(top) < 10 && search.RoundScore(h.Score) >= knowmind.RecallMinScore {
				top = append(top, h)
			}
		}
		if q.OffTopic {
			if len(top) > 0 {
				offHits++
				if oneWordShape(q, top[0], 0.5) {
					noise++
				}
			}
			continue
		}
		if at := slices.IndexFunc(top, func(h dumpHit) bool { return slices.Contains(q.Answers, h.Src) }); at >= 0 {
			answered++
			if oneWordShape(q, top[at], 0.5) {
				shaped++
			}
		}
	}
	return shaped, answered, noise, offHits
}
