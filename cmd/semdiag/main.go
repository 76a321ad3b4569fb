// Command semdiag is an offline diagnosis of recall's semantic models on a LoCoMo file, without
// Dgraph: per conversation it analyses the turns as the service does (speaker line included),
// builds the PPMI+SVD model (package semvec; -ctx: the neighbouring turns as context) and the
// random-indexing word vectors (package wordvec), and prints the share of evidence turns each
// ranker puts in its top 10 (and 30, 100), alone and fused with BM25 (docs/recall.md, fifth
// quality session). Flags: -from/-to conversations, -cat a category, -dims, -vocab, -mindf,
// -w the fusion weight, -beta/-fb feedback in the model's space.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/knowmind/knowmind/bench/locomo"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/wordvec"
	"sort"
)

func main() {
	data := flag.String("data", "/work/shared/data/locomo/locomo-dev.json", "")
	from := flag.Int("from", 1, "")
	to := flag.Int("to", 2, "")
	dims := flag.Int("dims", 64, "")
	vocab := flag.Int("vocab", 2048, "")
	mindf := flag.Int("mindf", 2, "")
	wt := flag.Float64("w", 0.5, "")
	cat := flag.Int("cat", 0, "")
	ctxw := flag.Float64("ctx", 0, "")
	beta := flag.Float64("beta", 0, "")
	fbn := flag.Int("fb", 5, "")
	flag.Parse()
	convs, err := locomo.Load(*data)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var b10, w10, w30, fw10, fs10, fsa10, nq, aw, as int
	defer func() {
		fmt.Printf("all@10 fused: wordvec %.3f, svd over all %.3f (%d questions)\n", float64(aw)/float64(max(nq, 1)), float64(as)/float64(max(nq, 1)), nq)
	}()
	var n, in10, in30, in100, noword, nw30, nw100, nwTotal int
	defer func() {
		fmt.Printf("fused with bm25 (w %.2f) top10: wordvec %.3f, svd %.3f, svd over all turns %.3f\n", *wt, float64(fw10)/float64(max(n, 1)), float64(fs10)/float64(max(n, 1)), float64(fsa10)/float64(max(n, 1)))
	}()
	for ci, c := range convs {
		if ci+1 < *from || ci+1 > *to {
			continue
		}
		var docs []semvec.Doc
		var ix bm25.Index
		idx := map[string]uint64{}
		terms := map[uint64][]string{}
		for i, t := range c.Turns {
			tok := bm25.Analyze("", t.Speaker+"\n"+t.Text)
			ref := uint64(i + 1)
			docs = append(docs, semvec.Doc{Ref: ref, Terms: tok})
			ix.AddRef(c.SampleID, t.DiaID, "", ref, tok)
			idx[t.DiaID] = ref
			terms[ref] = tok
		}
		wv := wordvec.New(0)
		for _, d := range docs {
			wv.Add(d.Terms)
		}
		if *ctxw > 0 {
			for i := range docs {
				for _, j := range []int{i - 1, i + 1} {
					if j >= 0 && j < len(docs) && c.Turns[j].Session == c.Turns[i].Session {
						docs[i].Near = append(docs[i].Near, j)
					}
				}
			}
		}
		m := semvec.Build(docs, semvec.Options{Dims: *dims, Vocab: *vocab, MinDF: *mindf, ContextWeight: float32(*ctxw)})
		for _, q := range c.Questions {
			if q.Category < 1 || q.Category > 4 || (*cat > 0 && q.Category != *cat) {
				continue
			}
			qt := bm25.Analyze("", q.Text)
			qs := map[string]bool{}
			for _, t := range qt {
				qs[t] = true
			}
			qv := m.Query(qt)
			rank := map[uint64]int{}
			if qv != nil {
				for r, h := range m.TopN(qv, 100, nil) {
					rank[h.Ref] = r + 1
				}
			}
			// BM25 and wordvec ranks
			st := ix.Stats(c.SampleID, "", qt...)
			var bd []bm25.Doc
			var texts [][]string
			for i := range c.Turns {
				bd = append(bd, bm25.Doc{ID: c.Turns[i].DiaID, Tokens: terms[uint64(i+1)]})
				texts = append(texts, terms[uint64(i+1)])
			}
			brank := map[string]int{}
			for r, s := range bm25.Score(qt, bd, st, bm25.Params{}) {
				if s.Score > 0 {
					brank[s.ID] = r + 1
				}
			}
			ws := wv.Similarity(qt, texts)
			order := make([]int, len(ws))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return ws[order[a]] > ws[order[b]] })
			wrank := map[string]int{}
			for r, i := range order {
				wrank[c.Turns[i].DiaID] = r + 1
			}
			// fusion: bm25/ideal (cap 1) + w·sim, over all turns (text candidates = bm25>0 only, plus pool)
			ideal := bm25.Ideal(qt, st)
			bs := map[string]float64{}
			for _, s := range bm25.Score(qt, bd, st, bm25.Params{}) {
				if s.Score > 0 && ideal > 0 {
					bs[s.ID] = min(s.Score/ideal, 1)
				}
			}
			if *beta > 0 && qv != nil {
				type is struct {
					ref uint64
					s   float64
				}
				var l []is
				for i, t := range c.Turns {
					if b, ok := bs[t.DiaID]; ok {
						l = append(l, is{uint64(i + 1), b})
					}
				}
				sort.SliceStable(l, func(a, b int) bool { return l[a].s > l[b].s })
				var fb []uint64
				for _, x := range l[:min(len(l), *fbn)] {
					fb = append(fb, x.ref)
				}
				qv = m.Expand(qv, fb, float32(*beta))
				rank = map[uint64]int{}
				for r, h := range m.TopN(qv, 100, nil) {
					rank[h.Ref] = r + 1
				}
			}
			var svs []float32
			if qv != nil {
				refs := make([]uint64, len(c.Turns))
				for i := range refs {
					refs[i] = uint64(i + 1)
				}
				sc := m.Scores(qv, refs)
				svs = make([]float32, len(c.Turns))
				for i := range svs {
					svs[i] = sc[uint64(i+1)]
				}
			}
			fuseRank := func(sim func(i int) float64, poolOnlyText bool) map[string]int {
				type is struct {
					id string
					s  float64
				}
				var l []is
				for i, t := range c.Turns {
					b, ok := bs[t.DiaID]
					if !ok && poolOnlyText {
						continue
					}
					l = append(l, is{t.DiaID, (b + *wt*max(sim(i), 0)) / (1 + *wt)})
				}
				sort.SliceStable(l, func(a, b int) bool { return l[a].s > l[b].s })
				out := map[string]int{}
				for r, x := range l {
					out[x.id] = r + 1
				}
				return out
			}
			fw := fuseRank(func(i int) float64 { return ws[i] }, true)
			fs := fuseRank(func(i int) float64 {
				if svs == nil {
					return 0
				}
				return float64(svs[i])
			}, true)
			fsAll := fuseRank(func(i int) float64 {
				if svs == nil {
					return 0
				}
				return float64(svs[i])
			}, false)
			allW, allS := true, true
			for _, e := range q.Evidence {
				if r := fw[e]; !(r > 0 && r <= 10) {
					allW = false
				}
				if r := fsAll[e]; !(r > 0 && r <= 10) {
					allS = false
				}
			}
			nq++
			if allW {
				aw++
			}
			if allS {
				as++
			}
			for _, e := range q.Evidence {
				if r := fw[e]; r > 0 && r <= 10 {
					fw10++
				}
				if r := fs[e]; r > 0 && r <= 10 {
					fs10++
				}
				if r := fsAll[e]; r > 0 && r <= 10 {
					fsa10++
				}
				if r, ok := brank[e]; ok && r <= 10 {
					b10++
				}
				if r := wrank[e]; r > 0 && r <= 10 {
					w10++
				}
				if r := wrank[e]; r > 0 && r <= 30 {
					w30++
				}
			}
			for _, e := range q.Evidence {
				ref, ok := idx[e]
				if !ok {
					continue
				}
				n++
				r, ok := rank[ref]
				if ok && r <= 10 {
					in10++
				}
				if ok && r <= 30 {
					in30++
				}
				if ok {
					in100++
				}
				shared := false
				for _, t := range terms[ref] {
					if qs[t] {
						shared = true
					}
				}
				if !shared {
					nwTotal++
					if ok && r <= 30 {
						nw30++
					}
					if ok {
						nw100++
					}
					noword++
				}
			}
		}
		fmt.Printf("conv %d: %d turns, vocab %d\n", ci+1, len(c.Turns), m.Vocab())
	}
	fmt.Printf("bm25 top10 %.3f, wordvec top10 %.3f top30 %.3f\n", float64(b10)/float64(n), float64(w10)/float64(n), float64(w30)/float64(n))
	fmt.Printf("evidence %d: semantic top10 %.3f top30 %.3f top100 %.3f; sharing no word %d: top30 %.3f top100 %.3f\n",
		n, float64(in10)/float64(n), float64(in30)/float64(n), float64(in100)/float64(n), nwTotal, float64(nw30)/float64(max(nwTotal, 1)), float64(nw100)/float64(max(nwTotal, 1)))
}
