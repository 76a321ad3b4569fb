package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bench/german"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/search"
)

// runBenchGerman stores the German check's memories in one tenant (title, content, source the
// memory's id, time its date) and scores recall's rankings and ablations on its questions, with
// the tools' default floor; the off-topic questions should get no hit.
func runBenchGerman(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench german", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	only := fs.String("only", "", "run only the rankings whose name matches this regular expression")
	sequences := fs.Bool("sequences", true, "store each memory in its sequence (the corpus' seq: a document's sections, one meeting's minutes, one person's notes) at its place in corpus order (the tenant gets the suffix -nosequence without)")
	derive := fs.Bool("derive-sequences", true, "with --sequences=false: store the memories in corpus order as one writer (StoreMemoryInput.Writer), so the service derives their sequences from their times (knowmind.ImplicitSequenceGap); the tenant gets the suffix -derived instead of -nosequence")
	showOffTopic := fs.Bool("show-off-topic", false, "also print the default ranking's hits (with scores, no floor) for each off-topic question, a diagnosis")
	dumpFile := fs.String("dump", "", "also write the default ranking's first 25 hits of every question and off-topic question, without a floor and with the evidence behind each hit, to this file as JSON lines")
	dumpCommon := fs.Bool("dump-common-words", true, "with false, --dump writes the default ranking without the everyday-word rule (Weights.CommonWords)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	onlyRe, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	corpus, err := german.Load()
	if err != nil {
		return err
	}
	b, err := openBenchBackend(ctx, bf)
	if err != nil {
		return err
	}
	defer b.Close()
	tenantName, writer := "german-check", ""
	switch {
	case !*sequences && *derive:
		tenantName, writer = tenantName+"-derived", "german-bench"
	case !*sequences:
		tenantName += "-nosequence"
	}
	ten, err := b.tenant(ctx, tenantName)
	if err != nil {
		return err
	}
	stored, err := storedSources(ctx, ten)
	if err != nil {
		return err
	}
	when := map[string]time.Time{}
	for _, m := range corpus.Memories {
		if when[m.ID], err = m.Time(); err != nil {
			return fmt.Errorf("memory %s: %w", m.ID, err)
		}
	}
	if len(stored) == 0 {
		places := map[string]int{}
		for _, m := range corpus.Memories {
			at := when[m.ID]
			in := knowmind.StoreMemoryInput{Title: m.Title, Content: m.Text, MemoryType: knowmind.MemoryEpisodic, Source: m.ID, OccurredAt: &at, Writer: writer}
			if *sequences && m.Seq != "" {
				in.Sequence, in.Position = m.Seq, new(places[m.Seq])
				places[m.Seq]++
			}
			if _, err := ten.StoreMemory(ctx, in); err != nil {
				return fmt.Errorf("store %s: %w", m.ID, err)
			}
		}
		if err := setValidFrom(ctx, ten, when); err != nil {
			return err
		}
	}
	// A tenant as seen by a client whose text index analyses with the German rules a turns off:
	// each opens the tenant and builds its own index from the store.
	tenantWith := func(a bm25.Analysis) (*graph.Tenant, error) {
		if a == (bm25.Analysis{}) {
			return ten.Tenant, nil
		}
		cfg := b.graphCfg
		cfg.Analysis = a
		c, err := graph.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return c.Tenant(ctx, tenantName, false)
	}
	ranker := func(tn *graph.Tenant, hops int, minScore float64, sig ablation) german.Ranker {
		return func(ctx context.Context, q string, asked time.Time) ([]string, error) {
			res, err := tn.RecallWith(ctx, knowmind.RecallQuery{Query: q, K: 10, Hops: hops, MinScore: minScore, AskedAt: asked}, sig.options())
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(res.Hits))
			for _, h := range res.Hits {
				out = append(out, h.Source) // the memory's id in the corpus
			}
			return out, nil
		}
	}
	textOnly := ablation{NoVector: true, NoRerank: true, NoSemantic: true}
	full := ablation{NoRerank: true}
	noGerman := bm25.Analysis{NoCompounds: true, NoVerbs: true, NoSpellings: true}
	runs := []struct {
		name     string
		analysis bm25.Analysis
		hops     int
		minScore float64
		sig      ablation
	}{
		{"text only (BM25)", bm25.Analysis{}, 0, knowmind.RecallMinScore, textOnly},
		{"text only (BM25) without the German rules", noGerman, 0, knowmind.RecallMinScore, textOnly},
		{"full fusion (the tool's default)", bm25.Analysis{}, 2, knowmind.RecallMinScore, full},
		{"full fusion without the German rules", noGerman, 2, knowmind.RecallMinScore, full},
		{"full fusion without compounds", bm25.Analysis{NoCompounds: true}, 2, knowmind.RecallMinScore, full},
		{"full fusion without separable verbs", bm25.Analysis{NoVerbs: true}, 2, knowmind.RecallMinScore, full},
		{"full fusion without umlaut/ß spellings", bm25.Analysis{NoSpellings: true}, 2, knowmind.RecallMinScore, full},
		{"text only (BM25) without compounds", bm25.Analysis{NoCompounds: true}, 0, knowmind.RecallMinScore, textOnly},
		{"text only (BM25) without separable verbs", bm25.Analysis{NoVerbs: true}, 0, knowmind.RecallMinScore, textOnly},
		{"text only (BM25) without umlaut/ß spellings", bm25.Analysis{NoSpellings: true}, 0, knowmind.RecallMinScore, textOnly},
		{"text only (BM25) without the word list (the tenant's vocabulary only)", bm25.Analysis{NoWordList: true}, 0, knowmind.RecallMinScore, textOnly},
		{"full fusion without the word list (the tenant's vocabulary only)", bm25.Analysis{NoWordList: true}, 2, knowmind.RecallMinScore, full},
		{"full fusion, floor raised by the question's word coverage", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, CoverageFloor: true}},
		{"text only (BM25), floor raised by the question's word coverage", bm25.Analysis{}, 0, knowmind.RecallMinScore, ablation{NoVector: true, NoRerank: true, NoSemantic: true, CoverageFloor: true}},
		{"full fusion keeping hits found by one everyday word of a question whose subject the tenant never wrote", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoCommonWords: true}},
		{"full fusion, min_score 0 (no floor)", bm25.Analysis{}, 2, 0, full},
		{"full fusion without the days the text names", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoTextDates: true, AsksWhen: -1}},
		{"full fusion, semantic signals not scaled by the query's coverage", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoCoverage: true}},
		{"full fusion, the hash embedder's vector signal not scaled by the query's coverage", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoVectorCoverage: true}},
		{"full fusion keeping question words (German, English) in the query", bm25.Analysis{KeepQuestionWords: true}, 2, knowmind.RecallMinScore, full},
		{"full fusion keeping question words, semantic signals not scaled by coverage (neither of the rules that shape the floor's inputs)", bm25.Analysis{KeepQuestionWords: true}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoCoverage: true, NoVectorCoverage: true}},
		{"full fusion without relative times in questions (\"letzte Woche\" not resolved against the time of asking)", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoRelativeDates: true}},
		{"text only (BM25) without relative times in questions", bm25.Analysis{}, 0, knowmind.RecallMinScore, ablation{NoVector: true, NoRerank: true, NoSemantic: true, NoRelativeDates: true}},
		{"full fusion without bare weekdays in questions (other relative times resolved)", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, NoWeekdays: true}},
		{"full fusion with \"kürzlich\" in questions as the month before (off by default)", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, WithRecently: true}},
		{"full fusion without the when-question signal", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, AsksWhen: -1}},
		{"full fusion without the context signal (the memory before in its sequence)", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, ContextWeight: -1}},
		{"full fusion, second stage: IDF coverage 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25}}},
		{"full fusion, second stage: term proximity 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.25}}},
		{"full fusion, second stage: term proximity 0.5", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.5}}},
		{"full fusion, second stage: IDF coverage 0.25, term proximity 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, Proximity: 0.25}}},
		{"full fusion, second stage on word hits: IDF coverage 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, WordHits: true}}},
		{"full fusion, second stage on word hits: term proximity 0.1", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.1, WordHits: true}}},
		{"full fusion, second stage on word hits: IDF coverage 0.25, term proximity 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, Proximity: 0.25, WordHits: true}}},
		{"full fusion, context signal 0.25", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, ContextWeight: 0.25}},
		{"full fusion, context signal 1", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, ContextWeight: 1}},
		{"full fusion, context signal a member of the weighted mean", bm25.Analysis{}, 2, knowmind.RecallMinScore, ablation{NoRerank: true, ContextMember: true}},
		{"text only (BM25) without the context signal", bm25.Analysis{}, 0, knowmind.RecallMinScore, ablation{NoVector: true, NoRerank: true, NoSemantic: true, ContextWeight: -1}},
	}
	w := os.Stdout
	fmt.Fprintf(w, "# German check: %d memories, %d questions, %d off-topic, embedder %s, German word list: %d words, English word levels: %d words\n\n",
		len(corpus.Memories), len(corpus.Questions), len(corpus.OffTopic), b.embedder.ID(), german.SystemWordsLen(), english.SystemLevels().Len())
	var named []german.Named
	for _, r := range runs {
		if !onlyRe.MatchString(r.name) {
			continue
		}
		tn, err := tenantWith(r.analysis)
		if err != nil {
			return err
		}
		rep, err := german.Evaluate(ctx, corpus, ranker(tn, r.hops, r.minScore, r.sig))
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprintf(w, "## %s\n\n", r.name)
		rep.WriteTable(w)
		fmt.Fprintln(w)
		named = append(named, german.Named{Name: r.name, Report: rep})
	}
	if *showOffTopic {
		fmt.Fprintln(w, "## Off-topic questions: the default ranking's best hits without a floor")
		fmt.Fprintln(w)
		for _, q := range corpus.OffTopic {
			res, err := ten.RecallWith(ctx, knowmind.RecallQuery{Query: q, K: 3, Hops: 2}, full.options())
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "- %s:", q)
			for _, h := range res.Hits {
				fmt.Fprintf(w, " %s %.3f", h.Source, h.Score)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	if *dumpFile != "" {
		f, err := os.Create(*dumpFile)
		if err != nil {
			return err
		}
		defer f.Close()
		for _, q := range corpus.Questions {
			asked, err := corpus.AskedAt(q)
			if err != nil {
				return err
			}
			if err := dumpRecall(ctx, f, ten.Tenant, q.Text, asked, 2, ablation{NoRerank: true, NoCommonWords: !*dumpCommon}.options(), dumpQuestion{Set: "german", Cat: q.Kind, Answers: q.IDs}); err != nil {
				return err
			}
		}
		for _, q := range corpus.OffTopic {
			asked, err := corpus.AskedAt(german.Question{})
			if err != nil {
				return err
			}
			if err := dumpRecall(ctx, f, ten.Tenant, q, asked, 2, ablation{NoRerank: true, NoCommonWords: !*dumpCommon}.options(), dumpQuestion{Set: "german", OffTopic: true}); err != nil {
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "## Summary")
	fmt.Fprintln(w)
	german.WriteSummary(w, named)
	return nil
}
