package bm25

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/knowmind/knowmind/german"
)

// AnalyzeForSearch is the analysis of the service's own text index and of the queries it
// answers: Analyze, and for German text further terms after them — the infinitive of a
// separable verb whose particle ends the clause ("reicht … ein" adds einreich, as does
// "eingereicht"), the umlaut spelling of ae/oe/ue words (Gebuehren adds gebuhr), ß written ss,
// the two halves of a hyphenated word written as one (E-Mail adds email), and in a query (known
// set) the parts of a compound no document holds (package german: Reisekostenabrechnung adds
// reisekost, reis, kost, abrechnung) and the compound two nearby words make that a document
// holds ("Abrechnung der Reisekosten" adds reisekostenabrechnung).
//
// Words are checked against the system's German word list (german.SystemWords) and, when
// known is set, against a vocabulary of analysed terms (a query: the tenant's own index); a
// query's compound that the vocabulary holds as a whole adds no parts. An index must be built
// without known, so that a document's terms do not depend on what was indexed before it.
//
// Its output holds Analyze's tokens, so Dgraph's index holds a subset of it: the terms a query
// sends to Dgraph (Terms) are still Dgraph's.
func AnalyzeForSearch(lang, text string, known func(term string) bool) []string {
	return Analysis{}.Analyze(lang, text, known)
}

// AnalyzeDocForSearch is AnalyzeForSearch for a document (no vocabulary), with its length for
// BM25 (Analysis.AnalyzeDoc).
func AnalyzeDocForSearch(lang, text string) (tokens []string, length int) {
	return Analysis{}.AnalyzeDoc(lang, text, nil)
}

// Analysis turns AnalyzeForSearch's German rules off one by one, for the benchmarks' ablation
// tables; the zero value (what the service uses) keeps them all.
type Analysis struct {
	NoCompounds bool // no compound parts (and no halves of hyphenated words joined)
	NoVerbs     bool // no separable verbs
	NoSpellings bool // no umlauts for ae/oe/ue, no ss for ß
	// NoWordList checks words against the tenant's vocabulary only, as on a machine without a
	// German word list installed.
	NoWordList bool
	// KeepQuestionWords keeps question words (German, English) in a query's terms (search.QueryTerms
	// leaves them out); documents are analysed the same either way.
	KeepQuestionWords bool
}

// Analyze is AnalyzeForSearch with the rules a turns off.
func (a Analysis) Analyze(lang, text string, known func(term string) bool) []string {
	tokens, _ := a.AnalyzeDoc(lang, text, known)
	return tokens
}

// AnalyzeDoc is Analyze, and the document's length for BM25: the count of Analyze's tokens.
// The terms the German rules add stand beside words the text holds, as a search engine puts
// a compound's parts at the compound's position, and do not make the document longer (Lucene
// discounts such overlapping tokens from its length norm the same way).
func (a Analysis) AnalyzeDoc(lang, text string, known func(term string) bool) (tokens []string, length int) {
	tokens = Analyze(lang, text)
	length = len(tokens)
	if AnalysisLang(lang) != "de" || text == "" || (a.NoCompounds && a.NoVerbs && a.NoSpellings) {
		return tokens, length
	}
	if extra := a.germanWords(text, known); len(extra) > 0 {
		tokens = append(tokens, analyzeWords("de", extra)...)
	}
	return tokens, length
}

// maxGermanText bounds the text the German rules look at (a chunk is far shorter; a query
// too): beyond it only Analyze's tokens count.
const maxGermanText = 64 << 10

// maxSplitWords bounds the distinct words of one query split against the vocabulary: each
// split asks the vocabulary about every substring (a few hundred stems for a long word).
const maxSplitWords = 16

// clauseBack is how many words before a clause-final particle may hold its verb.
const clauseBack = 12

// germanWords returns the further words (lowercase, unanalysed) that text's German words stand
// for.
func (a Analysis) germanWords(text string, known func(string) bool) []string {
	if len(text) > maxGermanText {
		return nil
	}
	var lex german.Lexicons
	wordList := !a.NoWordList && german.SystemWords().Len() > 0
	if wordList {
		lex = append(lex, german.SystemWords())
	}
	if known != nil {
		lex = append(lex, knownTerms(known))
	}
	stream := setup().base.Analyze([]byte(text))
	var out []string
	split := map[string]bool{} // the words a query split (each once, at most maxSplitWords)
	for i, tok := range stream {
		w := string(tok.Term)
		if hasDigit(w) {
			continue
		}
		if !a.NoSpellings {
			if u := german.Umlauts(w, lex); u != "" {
				out = append(out, u)
				w = u
			}
			if strings.Contains(w, "ß") {
				out = append(out, strings.ReplaceAll(w, "ß", "ss"))
			}
		}
		verb := ""
		if !a.NoVerbs {
			verb = german.Separable(w, lex)
		}
		if !a.NoCompounds {
			// A query's compound adds its parts when no document holds the compound itself
			// (hochgeladen is hochladen, not hoch + geladen). Documents are not split: a
			// compound and its parts would count as three pieces of evidence where the text
			// holds one, and the co-occurrence models would learn the parts' company from
			// every false split.
			if known != nil && verb == "" && !split[w] && len(split) < maxSplitWords && !knownTerms(known).Has(w) {
				split[w] = true
				out = append(out, german.Split(w, lex)...)
			}
			// E-Mail-Adresse: email, emailadresse (and from Mail on, mailadresse).
			joined := w
			for j := i; j+1 < len(stream) && j < i+4 && between(text, stream[j], stream[j+1]) == "-"; j++ {
				joined += string(stream[j+1].Term)
				out = append(out, joined)
			}
		}
		if a.NoVerbs {
			continue
		}
		if verb != "" {
			out = append(out, verb)
		}
		if german.Particles[w] && clauseEnds(text, stream, i) {
			if v := separatedVerb(text, stream, i, w, lex, wordList); v != "" {
				out = append(out, v)
			}
		}
	}
	if known != nil && !a.NoCompounds {
		out = append(out, joinedCompounds(stream, known)...)
	}
	return out
}

// joinBack is how many words apart two query words may stand and still be joined as a
// compound ("Abrechnung der Reisekosten": two apart).
const joinBack = 3

// maxJoinWords bounds the query words tried as compound parts (the pairs grow with its square).
const maxJoinWords = 32

// joinedCompounds returns the compounds that two nearby words of a query make and a document
// holds (the known vocabulary): "Abrechnung der Reisekosten" → reisekostenabrechnung, "Frist
// der Kündigung" → kündigungsfrist — the direction Split cannot take, as documents are not
// split. Either word may come first, joined directly or by a linking element.
func joinedCompounds(stream analysis.TokenStream, known func(string) bool) []string {
	var words []string
	for _, tok := range stream {
		w := string(tok.Term)
		if utf8.RuneCountInString(w) >= 3 && !hasDigit(w) && !isStop("de", w) && !german.Particles[w] {
			words = append(words, w)
		}
		if len(words) == maxJoinWords {
			break
		}
	}
	vocab := knownTerms(known)
	var out []string
	for i := range words {
		for j := i + 1; j < len(words) && j <= i+joinBack; j++ {
			for _, pair := range [2][2]string{{words[i], words[j]}, {words[j], words[i]}} {
				for _, l := range []string{"", "s", "n", "en", "es"} {
					if c := pair[0] + l + pair[1]; vocab.Has(c) {
						out = append(out, c)
						break
					}
				}
			}
		}
	}
	return out
}

// separatedVerb finds the verb whose particle p is stream[i] at the end of its clause ("ruft
// den Kunden an" → anrufen): the nearest word before it in the clause, written lowercase (so
// no noun) and no stop word, whose guessed infinitive with the particle is a word of lex.
// Without a word list (wordList false) the nearest such word's first guess stands.
func separatedVerb(text string, stream analysis.TokenStream, i int, p string, lex german.Lexicon, wordList bool) string {
	var fallback string
	for j := i - 1; j >= 0 && j >= i-clauseBack; j-- {
		if strings.ContainsAny(between(text, stream[j], stream[j+1]), ".,;:!?") {
			break
		}
		tok := stream[j]
		w := string(tok.Term)
		if german.Particles[w] || utf8.RuneCountInString(w) < 3 || hasDigit(w) || isStop("de", w) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(text[tok.Start:tok.End]); !unicode.IsLower(r) {
			continue
		}
		guesses := german.Infinitives(w)
		for _, g := range guesses {
			if lex.Has(p + g) {
				return p + g
			}
		}
		if fallback == "" && len(guesses) > 0 && finite(w) {
			fallback = p + guesses[0]
		}
	}
	if !wordList {
		return fallback
	}
	return ""
}

// finite tells whether w ends as a finite verb form may (reicht, meldest, rufe, riefen).
func finite(w string) bool {
	for _, e := range []string{"t", "st", "e", "en"} {
		if strings.HasSuffix(w, e) {
			return true
		}
	}
	return false
}

// clauseEnds tells whether stream[i] ends its clause: what follows it is the end of the text,
// punctuation, or a coordinating conjunction (ruft … an und fragt …).
func clauseEnds(text string, stream analysis.TokenStream, i int) bool {
	if i+1 == len(stream) {
		return true
	}
	if strings.ContainsAny(between(text, stream[i], stream[i+1]), ".,;:!?)\"\n") {
		return true
	}
	switch string(stream[i+1].Term) {
	case "und", "oder", "aber", "sondern", "denn", "doch":
		return true
	}
	return false
}

// between is the text between two tokens, spaces trimmed.
func between(text string, a, b *analysis.Token) string {
	if a.End > b.Start || b.Start > len(text) {
		return ""
	}
	return strings.TrimSpace(text[a.End:b.Start])
}

func hasDigit(w string) bool {
	return strings.ContainsAny(w, "0123456789")
}

// knownTerms is a Lexicon of the words whose analysed term is known (a tenant's index holds it).
type knownTerms func(term string) bool

// Has implements german.Lexicon.
func (v knownTerms) Has(w string) bool {
	terms := analyzeWords("de", []string{w})
	return len(terms) == 1 && v(terms[0])
}

// analyzeWords runs lowercase words through lang's stop and stem filters, as Analyze runs a
// text's tokens.
func analyzeWords(lang string, words []string) []string {
	a := setup()
	stream := make(analysis.TokenStream, len(words))
	for i, w := range words {
		stream[i] = &analysis.Token{Term: []byte(w), Position: i + 1, Type: analysis.AlphaNumeric}
	}
	l := AnalysisLang(lang)
	if stop, ok := a.stop[l]; ok {
		stream = stop.Filter(stream)
	}
	if stem, ok := a.stem[l]; ok && len(stream) > 0 {
		stream = stem.Filter(stream)
	}
	out := make([]string, 0, len(stream))
	for _, t := range stream {
		out = append(out, string(t.Term))
	}
	return out
}

// isStop tells whether w is a stop word of lang.
func isStop(lang, w string) bool {
	a := setup()
	stop, ok := a.stop[AnalysisLang(lang)]
	if !ok {
		return false
	}
	return len(stop.Filter(analysis.TokenStream{{Term: []byte(w)}})) == 0
}

// AnalysisVersion numbers the text analysis (tokenizer, stemmer, stop words, the German rules
// and their lists): terms produced under one version are not those of another, so anything
// that keeps analysed terms (graph's index snapshots) is dropped when it changes. Bump it with
// every change to what Analyze or AnalyzeDoc return for some text.
const AnalysisVersion = 1

// ID identifies the analysis a makes: the version, the rules turned off and the size of the
// German word list it splits compounds with (a machine with another list analyses otherwise).
func (a Analysis) ID() string {
	words := 0
	if !a.NoWordList {
		words = german.SystemWords().Len()
	}
	return fmt.Sprintf("bm25/%d compounds=%t verbs=%t spellings=%t words=%d",
		AnalysisVersion, !a.NoCompounds, !a.NoVerbs, !a.NoSpellings, words)
}
