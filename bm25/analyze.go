// Package bm25 ranks full-text candidates with Okapi BM25, because Dgraph's full-text index
// matches but does not rank. It holds the text analysis (a copy of what Dgraph v25.2.0's
// `fulltext` index does, built from the same bleve pieces), the scoring function and an
// in-memory index of corpus statistics per tenant and language.
//
// It must not know about Dgraph, MCP or how memories are stored: callers pass texts and ids in,
// and get tokens, statistics and scores out.
package bm25

import (
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/de" // registers stop_de and stemmer_de_light
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en" // registers stop_en
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	_ "github.com/blevesearch/bleve/v2/analysis/token/porter" // registers stemmer_porter
	"github.com/blevesearch/bleve/v2/analysis/token/unicodenorm"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// The filters Dgraph v25.2.0 applies after its base analyzer (tok/stopwords.go, tok/stemmers.go).
// Note that German uses bleve's *light* stemmer and English the Porter stemmer, not the snowball
// ones: that is what Dgraph's langStemmers table names, and the index holds those stems.
var languageFilters = map[string]struct{ stop, stem string }{
	"de": {stop: "stop_de", stem: "stemmer_de_light"},
	"en": {stop: "stop_en", stem: "stemmer_porter"},
}

type analyzer struct {
	base       analysis.Analyzer // unicode tokenizer, lowercase, NFKC (Dgraph's "fulltext" analyzer)
	stop, stem map[string]analysis.TokenFilter
}

var (
	analyzerOnce sync.Once
	shared       analyzer
)

// setup mirrors Dgraph's tok.setupBleve: a registry cache of its own, an NFKC filter and a
// custom analyzer. Errors here mean the bleve packages changed shape, which a test catches.
func setup() analyzer {
	analyzerOnce.Do(func() {
		cache := registry.NewCache()
		const nfkc = "unicodenorm_nfkc"
		if _, err := cache.DefineTokenFilter(nfkc, map[string]interface{}{
			"type": unicodenorm.Name,
			"form": unicodenorm.NFKC,
		}); err != nil {
			panic("bm25: define NFKC filter: " + err.Error())
		}
		base, err := cache.DefineAnalyzer("fulltext", map[string]interface{}{
			"type":          custom.Name,
			"tokenizer":     unicode.Name,
			"token_filters": []string{lowercase.Name, nfkc},
		})
		if err != nil {
			panic("bm25: define fulltext analyzer: " + err.Error())
		}
		shared = analyzer{base: base, stop: map[string]analysis.TokenFilter{}, stem: map[string]analysis.TokenFilter{}}
		for lang, names := range languageFilters {
			stop, err := cache.TokenFilterNamed(names.stop)
			if err != nil {
				panic("bm25: " + names.stop + ": " + err.Error())
			}
			stem, err := cache.TokenFilterNamed(names.stem)
			if err != nil {
				panic("bm25: " + names.stem + ": " + err.Error())
			}
			shared.stop[lang], shared.stem[lang] = stop, stem
		}
	})
	return shared
}

// AnalysisLang maps a language tag to the analysis Dgraph applies to it: "" (untagged) and
// "en…" get English, "de…" German. Any other tag gets the base analysis only (split,
// lowercase, NFKC) — which differs from Dgraph for the languages it has filters for (fr, es, …);
// knowmind indexes only @de, @en and untagged text.
func AnalysisLang(tag string) string {
	base := strings.ToLower(tag)
	if i := strings.IndexAny(base, "-_"); i >= 0 {
		base = base[:i]
	}
	if base == "" {
		return "en" // Dgraph's tok.LangBase("") is English
	}
	return base
}

// Analyze returns the analysed tokens of text in the order they occur, repeats included (BM25
// needs term frequencies). Its distinct tokens are exactly the tokens Dgraph v25.2.0's fulltext
// index stores for the value text@lang and looks up for anyoftext(pred@lang, text): Terms returns
// that set in Dgraph's form. Safe for concurrent use.
func Analyze(lang, text string) []string {
	if text == "" {
		return nil
	}
	a := setup()
	stream := a.base.Analyze([]byte(text))
	l := AnalysisLang(lang)
	if stop, ok := a.stop[l]; ok && len(stream) > 0 {
		stream = stop.Filter(stream)
	}
	if stem, ok := a.stem[l]; ok && len(stream) > 0 {
		stream = stem.Filter(stream)
	}
	if len(stream) == 0 {
		return nil
	}
	tokens := make([]string, len(stream))
	for i, t := range stream {
		tokens[i] = string(t.Term)
	}
	return tokens
}

// Terms returns the distinct tokens of text, sorted — the list Dgraph's FullTextTokenizer
// returns (it sorts and deduplicates), without the index's identifier byte.
func Terms(lang, text string) []string {
	tokens := Analyze(lang, text)
	sort.Strings(tokens)
	out := tokens[:0]
	for i, t := range tokens {
		if i > 0 && t == tokens[i-1] {
			continue
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
