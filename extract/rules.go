// Package extract holds knowmind_capture's extractors: Rules, the offline
// heuristic default, and LLM, a client of any OpenAI-compatible chat
// completions server. Both turn text into knowmind.Candidate facts with a
// confidence; routing, storage and review are graph's.
//
// It knows nothing of Dgraph or MCP.
package extract

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/conflict"
	"github.com/knowmind/knowmind/names"
)

// Rules is the offline extractor. It is a heuristic and says so: it splits
// German and English text into sentences, drops greetings, questions,
// requests and filler, and keeps declaratives that carry an entity, a
// number, a date or a decision, scored by these features:
//
//	base 0.35, entity +0.20 (a tenant's known entity +0.10 more), number +0.15,
//	date +0.15, decision or commitment +0.25, a claim the conflict grammar reads
//	(where something is, who holds a role, whether it is required, its status) +0.15
//	when no number, date or decision is there,
//	hedge ("vielleicht", "maybe") −0.25, more than 40 words −0.10; at most 0.95.
//
// So a fact needs three signals to reach the default store threshold 0.85.
type Rules struct{}

// Confidence features of the rules extractor (see Rules).
const (
	rulesBase      = 0.35
	rulesEntity    = 0.20
	rulesKnown     = 0.10
	rulesNumber    = 0.15
	rulesDate      = 0.15
	rulesDecision  = 0.25
	rulesClaim     = 0.15
	rulesHedge     = -0.25
	rulesLong      = -0.10
	rulesMax       = 0.95
	rulesLongWords = 40
)

// Name is "rules".
func (Rules) Name() string { return "rules" }

// Extract returns the candidates of req.Text with their spans; never an error.
func (r Rules) Extract(ctx context.Context, req knowmind.ExtractRequest) ([]knowmind.Candidate, error) {
	var out []knowmind.Candidate
	for _, s := range Sentences(req.Text) {
		c, ok := r.candidate(s, req)
		if ok {
			out = append(out, c)
		}
		if len(out) >= knowmind.MaxCaptureFacts {
			break
		}
	}
	return out, nil
}

// Sentence is one sentence of a text with its span in characters.
type Sentence struct {
	Text string
	Span knowmind.Span
}

// abbreviations end in a dot that does not end a sentence (lower case, without the dot).
var abbreviations = map[string]bool{
	"z.b": true, "d.h": true, "bzw": true, "ca": true, "dr": true, "hr": true, "fr": true, "nr": true,
	"u.a": true, "usw": true, "etc": true, "e.g": true, "i.e": true, "mr": true, "mrs": true, "ms": true,
	"inc": true, "vs": true, "prof": true, "st": true, "evtl": true, "ggf": true, "inkl": true, "zzgl": true,
	"abs": true, "co": true, "str": true, "tel": true, "vgl": true, "jan": true, "feb": true, "mär": true,
	"apr": true, "jun": true, "jul": true, "aug": true, "sep": true, "sept": true, "okt": true, "oct": true,
	"nov": true, "dez": true, "dec": true, "mio": true, "mrd": true, "tsd": true, "fa": true,
}

// Sentences splits text at line breaks and at ., ! or ? followed by a blank,
// except after abbreviations and after a number of one or two digits (German
// ordinals and dates: "am 15. März"). List markers (-, *, •, "1.") and Markdown
// heading marks are not part of a sentence.
func Sentences(text string) []Sentence {
	runes := []rune(text)
	var out []Sentence
	emit := func(start, end int) {
		for start < end && unicode.IsSpace(runes[start]) {
			start++
		}
		for end > start && unicode.IsSpace(runes[end-1]) {
			end--
		}
		start = skipMarker(runes, start, end)
		if start < end {
			out = append(out, Sentence{Text: string(runes[start:end]), Span: knowmind.Span{Start: start, End: end}})
		}
	}
	start := 0
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == '\n' {
			emit(start, i)
			start = i + 1
			continue
		}
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		// Runs like "?!" or "..." end together.
		end := i + 1
		for end < len(runes) && (runes[end] == '.' || runes[end] == '!' || runes[end] == '?' || runes[end] == '"' || runes[end] == ')') {
			end++
		}
		if end < len(runes) && !unicode.IsSpace(runes[end]) {
			i = end - 1
			continue
		}
		if r == '.' && !sentenceDot(runes, start, i) {
			i = end - 1
			continue
		}
		emit(start, end)
		start = end
		i = end - 1
	}
	emit(start, len(runes))
	return out
}

// sentenceDot reports whether the dot at i ends a sentence.
func sentenceDot(runes []rune, start, i int) bool {
	w := i
	for w > start && !unicode.IsSpace(runes[w-1]) {
		w--
	}
	word := strings.ToLower(strings.TrimLeft(string(runes[w:i]), "(\"'"))
	if abbreviations[word] {
		return false
	}
	digits := 0
	for _, r := range word {
		if !unicode.IsDigit(r) {
			digits = -1
			break
		}
		digits++
	}
	if digits >= 1 && digits <= 2 {
		return false
	}
	// A single letter ("A. Schmidt") is an initial.
	return utf8.RuneCountInString(word) != 1 || !unicode.IsLetter([]rune(word)[0])
}

// skipMarker skips a list marker or heading mark at the start of a sentence.
func skipMarker(runes []rune, start, end int) int {
	s := start
	for s < end && (runes[s] == '#' || runes[s] == '>') {
		s++
	}
	if s < end && (runes[s] == '-' || runes[s] == '*' || runes[s] == '•' || runes[s] == '–') && s+1 < end && runes[s+1] == ' ' {
		s++
	} else {
		d := s
		for d < end && unicode.IsDigit(runes[d]) {
			d++
		}
		if d > s && d-s <= 2 && d+1 < end && (runes[d] == '.' || runes[d] == ')') && runes[d+1] == ' ' {
			s = d + 1
		}
	}
	for s < end && unicode.IsSpace(runes[s]) {
		s++
	}
	if s == start {
		return start
	}
	return s
}

var (
	greetingPrefixes = []string{
		"hallo", "hi", "hey", "moin", "servus", "guten morgen", "guten tag", "guten abend", "liebe ", "lieber ",
		"hello", "dear ", "good morning", "good afternoon", "thanks", "thank you", "danke", "vielen dank",
		"viele grüße", "viele gruesse", "beste grüße", "mit freundlichen grüßen", "mfg", "lg", "best regards",
		"kind regards", "cheers", "bis bald", "bis später", "tschüss", "see you", "schönes wochenende",
	}
	requestPrefixes = []string{
		"bitte ", "please ", "kannst du", "könntest du", "können sie", "könnten sie", "could you", "can you",
		"would you", "lass uns", "let's", "lasst uns",
	}
	fillers = map[string]bool{
		"ok": true, "okay": true, "ja": true, "nein": true, "genau": true, "super": true, "prima": true,
		"alles klar": true, "gut": true, "sounds good": true, "sure": true, "yes": true, "no": true, "cool": true,
		"perfekt": true, "passt": true, "stimmt": true, "richtig": true, "great": true, "top": true,
		"klingt gut": true, "verstanden": true, "got it": true, "noted": true, "agenda": true, "protokoll": true,
		"notizen": true, "notes": true, "next steps": true, "nächste schritte": true,
	}
	decisionWords = []string{
		"beschlossen", "beschließen", "beschliessen", "entschieden", "entscheiden", "vereinbart", "festgelegt",
		"abgestimmt", "genehmigt", "freigegeben", "zugesagt", "übernimmt", "übernehmen", "verantwortlich",
		"zuständig", "verschoben", "abgesagt", "gestrichen", "unterschrieben", "gekündigt", "beauftragt",
		"decided", "agreed", "approved", "owns", "responsible", "postponed", "cancelled", "canceled", "signed",
		"will deliver", "will own", "takes over", "is in charge", "wird liefern", "liefert",
	}
	hedgeWords = []string{
		"vielleicht", "eventuell", "evtl.", "wahrscheinlich", "möglicherweise", "vermutlich", "glaube", "denke",
		"könnte", "ich meine", "maybe", "perhaps", "probably", "might", "i think", "i guess", "possibly",
		"not sure", "nicht sicher",
	}
)

var (
	emailRE   = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
	companyRE = regexp.MustCompile(`(?:\p{Lu}[\p{L}\d&.\-]*\s+){0,3}\p{Lu}[\p{L}\d&.\-]*\s+(?:GmbH(?:\s*&\s*Co\.?\s*KG)?|AG|SE|KG|UG|OHG|e\.\s?V\.|Inc\.?|Ltd\.?|LLC|Corp\.?|PLC)(?:\s|$|[,.;:)])`)
	// projectRE: "Projekt Apollo", "project Titan", "the Phoenix project", "das Relaunch-Projekt".
	projectRE = regexp.MustCompile(`(?:\b[Pp]ro(?:jekt|ject)\s+(\p{Lu}[\p{L}\d\-]+)|(\p{Lu}[\p{L}\d]+)(?:\s+project\b|-[Pp]rojekt\b))`)
	// institutionRE: organisations named by their kind, without a legal form.
	institutionRE = regexp.MustCompile(`\b((?:Sparkasse|Volksbank|Raiffeisenbank|Stadtwerke|Deutsche|Universität|Hochschule|University of|Firma|Fa\.)\s+\p{Lu}[\p{L}\-]+)`)
	numberRE      = regexp.MustCompile(`\d`)
	dateREs       = []*regexp.Regexp{
		regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`),
		regexp.MustCompile(`\b\d{1,2}\.\d{1,2}\.(?:\d{2,4})?`),
		regexp.MustCompile(`(?i)\b\d{1,2}\.?\s*(?:januar|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember|january|february|march|may|june|july|october|december)\b`),
		regexp.MustCompile(`(?i)\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\s+\d{1,2}\b`),
		regexp.MustCompile(`(?i)\b(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|monday|tuesday|wednesday|thursday|friday|saturday|sunday|morgen|übermorgen|tomorrow|nächste woche|next week|kw\s?\d{1,2}|q[1-4](?:\s?\d{4})?|ende (?:januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember))\b`),
	}
	// nameStop are capitalised words that start a multiword match but are not
	// names: articles, pronouns, weekdays and months.
	nameStop = map[string]bool{
		"der": true, "die": true, "das": true, "den": true, "dem": true, "des": true, "ein": true, "eine": true,
		"am": true, "im": true, "wir": true, "ich": true, "sie": true, "er": true, "es": true, "the": true,
		"a": true, "an": true, "we": true, "our": true, "unser": true, "unsere": true, "bis": true, "ab": true,
		"montag": true, "dienstag": true, "mittwoch": true, "donnerstag": true, "freitag": true, "samstag": true,
		"sonntag": true, "monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
		"januar": true, "februar": true, "märz": true, "april": true, "mai": true, "juni": true, "juli": true,
		"august": true, "september": true, "oktober": true, "november": true, "dezember": true, "team": true,
		"herr": true, "frau": true, "mr": true, "mrs": true, "ms": true, "dr": true, "laut": true, "mit": true,
		"für": true, "von": true, "und": true, "auch": true, "bei": true, "nach": true, "heute": true,
		"protokoll": true, "agenda": true, "meeting": true, "thema": true, "notizen": true, "update": true,
	}
)

func (Rules) candidate(s Sentence, req knowmind.ExtractRequest) (knowmind.Candidate, bool) {
	text := s.Text
	lower := strings.ToLower(text)
	words := strings.Fields(lower)
	if strings.HasSuffix(strings.TrimRight(text, `"')`), "?") {
		return knowmind.Candidate{}, false // a question states nothing
	}
	if strings.HasSuffix(text, ":") {
		return knowmind.Candidate{}, false // a heading or a label
	}
	bare := strings.Trim(lower, " .!,;:-–")
	if fillers[bare] {
		return knowmind.Candidate{}, false
	}
	if len(words) <= 6 && hasPrefixAny(lower, greetingPrefixes) {
		return knowmind.Candidate{}, false
	}
	if hasPrefixAny(lower, requestPrefixes) {
		return knowmind.Candidate{}, false
	}

	c := knowmind.Candidate{Text: text, Span: s.Span}
	ents, known := Entities(text, req.Known, req.EntityTypes)
	c.Entities = ents
	dateless := text
	hasDate := false
	for _, re := range dateREs {
		if re.MatchString(dateless) {
			hasDate = true
			dateless = re.ReplaceAllString(dateless, " ")
		}
	}
	// Digits inside entity names (Q3-Relaunch, e-mail addresses) are no numbers.
	for _, e := range ents {
		dateless = strings.ReplaceAll(dateless, e.Name, " ")
	}
	hasNumber := numberRE.MatchString(dateless)
	hasDecision := containsWord(lower, decisionWords)
	hedged := containsWord(lower, hedgeWords)
	// A claim of a kind that numbers and dates do not already signal.
	hasClaim := false
	for _, k := range conflict.Kinds(text) {
		if k != conflict.KindDate && k != conflict.KindAmount {
			hasClaim = true
		}
	}
	if len(ents) == 0 && !hasNumber && !hasDate && !hasDecision && !hasClaim {
		return knowmind.Candidate{}, false // a declarative with nothing to hold on to
	}
	if len(words) < 3 {
		return knowmind.Candidate{}, false
	}
	conf := rulesBase
	add := func(ok bool, v float64, feature string) {
		if ok {
			conf += v
			c.Features = append(c.Features, feature)
		}
	}
	add(len(ents) > 0, rulesEntity, "entity")
	add(known, rulesKnown, "known_entity")
	add(hasNumber, rulesNumber, "number")
	add(hasDate, rulesDate, "date")
	add(hasDecision, rulesDecision, "decision")
	add(hasClaim && !hasNumber && !hasDate && !hasDecision, rulesClaim, "claim") // a signal where no other is
	add(hedged, rulesHedge, "hedge")
	add(len(words) > rulesLongWords, rulesLong, "long")
	c.Confidence = min(rulesMax, max(0, float64(int(conf*100+0.5))/100))
	if utf8.RuneCountInString(c.Text) > knowmind.MaxFactChars {
		c.Text = string([]rune(c.Text)[:knowmind.MaxFactChars])
		c.Span.End = c.Span.Start + knowmind.MaxFactChars
	}
	return c, true
}

// Entities recognises entities in text: the tenant's known entities by name
// or alias (whole words, any case), then patterns — company names with a
// legal suffix (organisation), e-mail addresses and capitalised multiword
// names (person) — when the domain declares those types. known reports
// whether a known entity matched.
func Entities(text string, knownEntities []knowmind.Entity, types []string) (out []knowmind.CandidateEntity, known bool) {
	lower := strings.ToLower(text)
	seen := map[string]bool{}
	covered := []string{}
	addEnt := func(typ, id, name string) {
		if id == "" {
			id = knowmind.EntitySlug(name)
		}
		key := typ + "/" + id
		if id == "" || seen[key] || len(out) >= knowmind.MaxEntitiesPerFact {
			return
		}
		seen[key] = true
		out = append(out, knowmind.CandidateEntity{Type: typ, ID: id, Name: name})
		covered = append(covered, strings.ToLower(name))
	}
	bySlug := map[string]knowmind.Entity{}
	for _, e := range knownEntities {
		bySlug[e.ID] = e
		for _, n := range append([]string{e.Name}, e.Aliases...) {
			if n != "" && containsWord(lower, []string{strings.ToLower(n)}) {
				addEnt(e.Type, e.ID, n)
				known = true
				break
			}
		}
	}
	allowed := func(t string) bool { return len(types) == 0 || slices.Contains(types, t) }
	isCovered := func(name string) bool {
		l := strings.ToLower(name)
		for _, c := range covered {
			if strings.Contains(c, l) || strings.Contains(l, c) {
				return true
			}
		}
		return false
	}
	pattern := func(typ, name string) {
		name = strings.TrimRight(strings.TrimSpace(name), ",;:)")
		if isCovered(name) {
			return
		}
		if e, ok := bySlug[knowmind.EntitySlug(name)]; ok {
			addEnt(e.Type, e.ID, name)
			known = true
			return
		}
		if allowed(typ) {
			addEnt(typ, "", name)
		}
	}
	for _, m := range companyRE.FindAllString(text, -1) {
		words := strings.Fields(m)
		for len(words) > 1 && nameStop[strings.ToLower(words[0])] {
			words = words[1:]
		}
		pattern("organisation", strings.Join(words, " "))
	}
	for _, m := range institutionRE.FindAllStringSubmatch(text, -1) {
		pattern("organisation", m[1])
	}
	for _, m := range emailRE.FindAllString(text, -1) {
		pattern("person", m)
	}
	for _, m := range projectRE.FindAllStringSubmatch(text, -1) {
		name := m[1] + m[2]
		if !nameStop[strings.ToLower(name)] {
			pattern("project", name)
		}
	}
	toks := capitalised(text)
	for i := 0; i < len(toks); i++ {
		w := toks[i]
		next := ""
		if i+1 < len(toks) && toks[i+1].adjacent {
			next = toks[i+1].word
		}
		switch {
		case names.Honorific(w.word) && next != "":
			pattern("person", next)
			i++
		case names.Given(w.word):
			if next != "" && !names.LegalForm(next) && !names.Place(next) && !names.Given(next) && !nameStop[strings.ToLower(next)] {
				pattern("person", w.word+" "+next)
				i++
				continue
			}
			pattern("person", w.word)
		case names.Place(w.word):
			pattern("place", w.word)
		}
	}
	return out, known
}

// capWord is a capitalised word of a text; adjacent says only a blank separates it from the one before.
type capWord struct {
	word     string
	adjacent bool
}

// capitalised lists the capitalised words of text in order (a trailing dot
// of "Dr." or "Mr." dropped).
func capitalised(text string) []capWord {
	var out []capWord
	prevEnd := -2
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
		w := strings.TrimRight(f, ".,;:!?)\"'")
		w = strings.TrimLeft(w, "(\"'")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		r, _ := utf8.DecodeRuneInString(w)
		if w == "" || !unicode.IsUpper(r) {
			prevEnd = -2
			continue
		}
		out = append(out, capWord{word: w, adjacent: prevEnd == len(out)-1 && prevEnd >= 0})
		prevEnd = len(out) - 1
		if w != strings.TrimRight(f, "\"')") && !names.Honorific(w) { // "Müller," ends a name
			prevEnd = -2
		}
	}
	return out
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			rest := s[len(p):]
			if rest == "" || strings.HasSuffix(p, " ") {
				return true
			}
			r, _ := utf8.DecodeRuneInString(rest)
			if !unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// containsWord reports whether s holds one of words (or phrases) as whole words.
func containsWord(s string, words []string) bool {
	for _, w := range words {
		for from := 0; ; {
			i := strings.Index(s[from:], w)
			if i < 0 {
				break
			}
			i += from
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[i+len(w):])
			if (i == 0 || !isWordRune(before)) && (i+len(w) == len(s) || !isWordRune(after)) {
				return true
			}
			from = i + len(w)
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
