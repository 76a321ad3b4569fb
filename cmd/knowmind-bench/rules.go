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
	"strings"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
	"github.com/knowmind/knowmind/timeq"
)

// A rule re-scores one dumped question's hits (a score below 0 drops a hit); the floor then
// applies as recall applies it.
type rule struct {
	name  string
	score func(q *dumpQuestion, h dumpHit) float64
	// dropsVia: a direct hit the rule drops takes the graph neighbours reached from it along
	// (the rule acts before the graph expansion, as search.CommonMatches does in rank.Fuse). A
	// neighbour that another hit reaches too is dropped all the same: the dump names only the
	// path that scored it best.
	dropsVia bool
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
	cats := []string{"1", "2", "3", "4"}
	kinds := []string{"compound", "date", "inflection", "loanword", "plain", "relative", "spelling", "verb"}
	fmt.Fprint(w, "| rule | dev R@10 multi-hop | temporal | open-domain | single-hop |")
	for _, k := range kinds {
		fmt.Fprintf(w, " German %s |", k)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "|---|"+strings.Repeat("--:|", len(cats)+len(kinds)))
	for i, r := range simulatedRules() {
		if i > 0 && !r.dropsVia {
			continue // the default, then the rules over word levels
		}
		fmt.Fprintf(w, "| %s |", r.name)
		for _, c := range cats {
			fmt.Fprintf(w, " %.3f |", simulate(inCategory(lq, c), r).recall)
		}
		for _, k := range kinds {
			fmt.Fprintf(w, " %.3f |", simulate(inCategory(gq, k), r).recall)
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
		{"floor 0.1 (default)", keep, false},
		{"floor 0.1 / word coverage, every hit (Weights.CoverageFloor)", floorBy(coverageFloor), false},
		{"floor 0.1 / word coverage, word hits only", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if !search.WordHit(fusedHit(h)) {
				return knowmind.RecallMinScore
			}
			return coverageFloor(q, h)
		}), false},
		{"no word hit holding one query term when the question's word coverage ≤ 0.5", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if oneWordShape(q, h, 0.5) {
				return math.Inf(1)
			}
			return 0
		}), false},
		{"the same, word coverage ≤ 1/3", floorBy(func(q *dumpQuestion, h dumpHit) float64 {
			if oneWordShape(q, h, 1.0/3) {
				return math.Inf(1)
			}
			return 0
		}), false},
	}
	for _, w := range []search.StageWeights{
		{Coverage: 0.25, WordHits: true}, {Proximity: 0.1, WordHits: true}, {Coverage: 0.25, Proximity: 0.25, WordHits: true},
		{Coverage: 0.5, WordHits: true}, {Coverage: 1, WordHits: true}, {Coverage: 0.25}, {Proximity: 0.25},
	} {
		on := "word hits"
		if !w.WordHits {
			on = "every hit"
		}
		rules = append(rules, rule{fmt.Sprintf("second stage on %s, IDF coverage %g, term proximity %g", on, w.Coverage, w.Proximity), stage(w), false})
	}
	rules = append(rules, commonWordRules()...)
	for _, f := range []float64{0.15, 0.2, 0.25, 0.3} {
		rules = append(rules, rule{fmt.Sprintf("floor %g", f), floorBy(func(*dumpQuestion, dumpHit) float64 { return f }), false})
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
		dropped := map[string]bool{}
		for _, h := range q.Hits {
			s := r.score(q, h)
			if s < 0 && !h.Via && h.ID != "" {
				dropped[h.ID] = true
			}
			ranked = append(ranked, scored{h.Src, s})
		}
		if r.dropsVia {
			for j, h := range q.Hits {
				if h.Via && dropped[h.ViaID] {
					ranked[j].score = -1
				}
			}
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

// absentRarest gives a word the levels do not hold the rarest level of all (a German word, a
// name, a term of art counting as rarer than any English word).
type absentRarest struct{ l search.WordLevels }

func (a absentRarest) Level(w string) (int, bool) {
	if n, ok := a.l.Level(w); ok {
		return n, true
	}
	return 1000, true
}

func (a absentRarest) Name(w string) bool { return a.l.Name(w) }

// questionSides are a dumped question's text sides, as CommonMatches reads them.
func questionSides(q *dumpQuestion) [2]search.TextSide {
	var sides [2]search.TextSide
	for _, s := range q.Sides {
		i := 1
		if s.Lang == "de" {
			i = 0
		}
		st := bm25.Stats{Docs: s.Docs, DF: map[string]int64{}}
		for j, t := range s.Terms {
			st.DF[t] = s.DF[j]
		}
		sides[i] = search.TextSide{Lang: s.Lang, Terms: s.Terms, Stats: st}
	}
	return sides
}

// withoutNamedTime is the question without the time it names (as WordCoverage reads it).
func withoutNamedTime(q string) string {
	if _, start, end, named := timeq.Locate(q); named {
		return q[:start] + " " + q[end:]
	}
	return q
}

// commonWordRules simulate rules over general-language word levels (Debian's scowl; none when it
// is not installed): a word hit holding one query term is dropped when that term is an everyday
// word beside a rarer word of the question the tenant never wrote (search.CommonMatches), or
// when the term is common (level ≤ n) in a question holding a word the tenant never wrote.
func commonWordRules() []rule {
	levels := english.SystemLevels()
	if levels.Len() == 0 {
		fmt.Fprintln(os.Stderr, "bench rules: no word levels at", english.SystemDir, "(apt-get install scowl): the common-word rules are left out")
		return nil
	}
	type memo struct {
		common map[string]bool
	}
	cached := func(wl search.WordLevels, maxCoverage float64, rewrite func(string) string) func(q *dumpQuestion, h dumpHit) float64 {
		seen := map[*dumpQuestion]memo{}
		return func(q *dumpQuestion, h dumpHit) float64 {
			m, ok := seen[q]
			if !ok {
				text := withoutNamedTime(q.Q)
				if rewrite != nil {
					text = rewrite(text)
				}
				m = memo{search.CommonMatches(text, questionSides(q), wl)}
				seen[q] = m
			}
			if search.WordHit(fusedHit(h)) && len(h.Holds) == 1 && m.common[h.Holds[0]] && wordCoverage(q) <= maxCoverage {
				return -1
			}
			return h.Score
		}
	}
	// unknownAndCommon: the question holds a word the tenant never wrote, and the hit's one term
	// stands for words at level n or below.
	unknownAndCommon := func(levels search.WordLevels, n int) func(q *dumpQuestion, h dumpHit) float64 {
		return func(q *dumpQuestion, h dumpHit) float64 {
			if !search.WordHit(fusedHit(h)) || len(h.Holds) != 1 {
				return h.Score
			}
			words := search.LeveledWords(withoutNamedTime(q.Q), questionSides(q), levels)
			unknown, common := false, false
			for _, w := range words {
				unknown = unknown || !w.Known
				if slices.Contains(w.Terms, h.Holds[0]) {
					common = w.Level <= n && !w.Name
				}
			}
			if unknown && common {
				return -1
			}
			return h.Score
		}
	}
	lower := func(q string) string { return strings.ToLower(q) } // no word a name
	every, err := english.ReadDir(english.SystemDir, 255)
	if err != nil {
		every = levels
	}
	return []rule{
		{"one held term, more common English than an unknown word of the question (every level, names too)", cached(every, 1, lower), true},
		{"the same, levels ≤ 70", cached(levels, 1, lower), true},
		{"the same, levels ≤ 70, a word capitalised mid-sentence (a name) never the common word (Weights.CommonWords)", cached(levels, 1, nil), true},
		{"the same, every level", cached(every, 1, nil), true},
		{"Weights.CommonWords, only when the question's word coverage ≤ 0.5", cached(levels, 0.5, nil), true},
		{"Weights.CommonWords, a word without a level counting as the rarest", cached(absentRarest{levels}, 1, nil), true},
		{"one held term at level ≤ 10 (not a name), the question holding an unknown word", unknownAndCommon(levels, 10), true},
		{"one held term at level ≤ 20 (not a name), the question holding an unknown word", unknownAndCommon(levels, 20), true},
		{"one held term at level ≤ 35 (not a name), the question holding an unknown word", unknownAndCommon(levels, 35), true},
	}
}

// inCategory are the questions of category cat (a German question of two kinds, "compound+verb",
// counts in both).
func inCategory(qs []dumpQuestion, cat string) []dumpQuestion {
	var out []dumpQuestion
	for _, q := range qs {
		if !q.OffTopic && slices.Contains(strings.Split(q.Cat, "+"), cat) {
			out = append(out, q)
		}
	}
	return out
}
