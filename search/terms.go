package search

import (
	"slices"
	"strings"
	"sync"

	"github.com/knowmind/knowmind/bm25"
)

// TextSide is the full-text part of a recall for one stored language.
type TextSide struct {
	Lang  string   // "de" or "" (untagged, English analysis)
	Match string   // the query words sent to Dgraph's anyoftext ("" = no full-text step there)
	Seed  string   // the rarest of them, whose chunks seed the graph expansion
	Pool  string   // the words whose chunks join the vector re-score (a wider budget)
	Terms []string // the query's analysed terms, all of them, for BM25
	Stats bm25.Stats
	// Served: the service searched its text index. Scores holds the BM25 score of the chunks it
	// proposes (the best TextCandidates, and every vector candidate holding a query term), by
	// chunk uid; Seeds up to GraphSeeds chunks holding the query's rarest words. Match and Seed
	// are then empty.
	Served bool
	Scores map[uint64]float64
	Seeds  []uint64
}

// On tells whether the side has candidates to ask the store about.
func (s TextSide) On() bool { return s.Match != "" || len(s.Scores) > 0 }

// QueryTerms analyses a query for one language as the tenant's text index analysed its
// documents (a: bm25.Analysis, the zero value in the service), splitting German compounds
// against the index's own terms too.
//
// A question's own words are left out: question words and the inflected forms of stop words
// (questionTerms) that Dgraph's stop lists do not hold (the German one stops "viel" and "wie",
// not "viele" and "wer"; the English one stops "how", not "many"), so "Wie viele Beine hat eine
// Spinne?" does not find every memory that says "viele", nor "How many moons …" every turn
// that says "many".
func QueryTerms(ix *bm25.Index, tenant, lang, query string, a bm25.Analysis) []string {
	terms := a.Analyze(lang, query, func(term string) bool { return ix.Has(tenant, lang, term) })
	if a.KeepQuestionWords {
		return terms
	}
	stop := questionTerms(lang)
	return slices.DeleteFunc(terms, func(t string) bool { return stop[t] })
}

// germanQuestionWords are German words that ask rather than tell, and inflections of stop
// words, that the German stop list leaves in.
var germanQuestionWords = []string{
	"wer", "wen", "wem", "wessen", "wann", "warum", "wieso", "weshalb", "weswegen", "wozu", "woher",
	"wohin", "womit", "wodurch", "worüber", "wofür", "woran", "worauf", "wovon", "worum",
	"welcher", "welches", "welchem", "welchen", "viele", "vielen", "vieler", "vieles", "wenige",
	"wenigen", "weniger",
}

// englishQuestionWords are the English words that ask rather than tell which the English stop
// list leaves in ("how many", "how much").
var englishQuestionWords = []string{"many", "much"}

// questionTerms are the analysed question words of a language side (nil for a language
// without a list).
func questionTerms(lang string) map[string]bool {
	switch bm25.AnalysisLang(lang) {
	case "de":
		return germanQuestionTerms()
	case "en":
		return englishQuestionTerms()
	}
	return nil
}

var (
	germanQuestionTerms  = sync.OnceValue(func() map[string]bool { return analysedSet("de", germanQuestionWords) })
	englishQuestionTerms = sync.OnceValue(func() map[string]bool { return analysedSet("en", englishQuestionWords) })
)

// analysedSet is the set of the terms words analyse to in lang.
func analysedSet(lang string, words []string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		for _, t := range bm25.Analyze(lang, w) {
			m[t] = true
		}
	}
	return m
}

// NewTextSide analyses the query for one language of a tenant's text index (QueryTerms) and
// finds its text candidates: with served, the best TextCandidates of the index and as seeds up
// to GraphSeeds chunks holding the rarest query words (AddVectorScores adds the vector
// candidates' scores); otherwise the words Dgraph's anyoftext should match.
func NewTextSide(ix *bm25.Index, tenant, lang, query string, a bm25.Analysis, served bool) TextSide {
	side := TextSide{Lang: lang, Terms: QueryTerms(ix, tenant, lang, query, a)}
	if len(side.Terms) == 0 {
		return side
	}
	st := ix.Stats(tenant, lang, side.Terms...)
	side.Stats = st
	if st.Docs == 0 {
		return side // no text stored in this language: nothing to match
	}
	if served {
		side.Served, side.Scores = true, map[uint64]float64{}
		for _, h := range ix.Search(tenant, lang, side.Terms, TextCandidates, bm25.Params{}) {
			if h.Ref != 0 { // 0: a chunk held without its uid; not askable
				side.Scores[h.Ref] = h.Score
			}
		}
		// The graph seeds are the chunks holding the query's most specific words, as Dgraph's
		// full-text step chose them (MatchTerms within GraphSeeds): on LoCoMo they seeded better
		// than the BM25 top (docs/recall.md).
		side.Seeds = ix.Holding(tenant, lang, RarestTerms(lang, query, st, GraphSeeds), GraphSeeds)
		side.Pool = MatchTerms(lang, query, st, VectorPoolBudget)
		return side
	}
	side.Match = MatchTerms(lang, query, st, TextBudget)
	side.Seed = MatchTerms(lang, query, st, GraphSeeds)
	side.Pool = MatchTerms(lang, query, st, VectorPoolBudget)
	return side
}

// AddVectorScores gives the vector candidates (chunk uids) outside a served side's text top
// their own BM25 score, as when Dgraph's text step returned them, instead of counting as
// holding none of the words.
func (s TextSide) AddVectorScores(ix *bm25.Index, tenant string, vector []uint64) {
	if s.Served {
		for u, sc := range ix.ScoreRefs(tenant, s.Lang, s.Terms, vector, bm25.Params{}) {
			s.Scores[u] = sc
		}
	}
}

// MatchTerms chooses which query words the full-text step matches. Dgraph returns matches
// unranked and cuts them at the lowest uids, so a query with a common word ("Kunde" in a CRM)
// would fill the candidate list with arbitrary chunks. Instead the terms are taken rarest
// first while their summed document frequency stays within budget (the rarest always), which
// bounds the candidates by the statistics and keeps the chunks that hold the query's most
// specific words. Dropped terms still count in BM25 for the chunks that are fetched; a chunk
// that holds only dropped (common, low-IDF) terms is what the budget gives up — the usual
// max-score trade-off. Returns the original words whose terms were chosen, for Dgraph to
// analyse exactly as it analysed the stored text (a stem analysed again may change).
func MatchTerms(lang, query string, st bm25.Stats, budget int64) string {
	chosen := map[string]bool{}
	for _, term := range RarestTerms(lang, query, st, budget) {
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

// RarestTerms are the query's terms taken rarest first while their summed document frequency
// stays within budget (the rarest always): MatchTerms' choice, as analysed terms.
func RarestTerms(lang, query string, st bm25.Stats, budget int64) []string {
	stop := questionTerms(lang)
	terms := slices.DeleteFunc(bm25.Terms(lang, query), func(t string) bool { return stop[t] })
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
