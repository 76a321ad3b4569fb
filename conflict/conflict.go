// Package conflict decides, offline and heuristically, whether two facts
// about the same entity contradict each other. graph asks it for every new
// fact against the current memories that name one of the fact's entities;
// a finding is reported and linked as a CONTRADICTS candidate, never acted
// on. It knows nothing of Dgraph or MCP.
//
// Rules, in order (German and English):
//   - a different number or date in otherwise the same statement;
//   - the same statement with a negation on one side only (nicht, kein, not, no, never, ...);
//   - the same attribute with another value: the words before the verb
//     (ist, sind, beträgt, heißt, leitet, is, are, ...) agree, the words after it do not.
//
// "The same statement" means that the words left after removing numbers,
// dates, negations and stop words overlap by at least minOverlap (overlap
// coefficient: shared words over the smaller side's words).
package conflict

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Fact is an existing fact to compare against.
type Fact struct {
	ID   string
	Text string
}

// Finding is an existing fact the new one contradicts.
type Finding struct {
	ExistingID   string
	ExistingText string
	Reason       string
}

const (
	minSubjectOverlap  = 0.5  // shared subject words over the smaller subject's words
	minOverlap         = 0.75 // sentences without a subject: shared words
	minNegationOverlap = 0.7
	maxValueOverlap    = 0.34 // attribute values this similar are the same value
)

// Detect compares text with each existing fact, sentence by sentence: the
// first maxSentences sentences of each, each cut at maxSentenceBytes, so a
// long memory costs a bounded number of comparisons.
func Detect(text string, existing []Fact) []Finding {
	var out []Finding
	news := sentences(text)
	for _, f := range existing {
		olds := sentences(f.Text)
	compare:
		for _, n := range news {
			for _, o := range olds {
				if ok, reason := Contradicts(n, o); ok {
					out = append(out, Finding{ExistingID: f.ID, ExistingText: f.Text, Reason: reason})
					break compare
				}
			}
		}
	}
	return out
}

// Kinds lists the kinds of claims the grammar reads in a sentence (place,
// role, date, amount, obligation, status): the rules extractor keeps a
// sentence that states one.
func Kinds(sentence string) []string {
	if len(sentence) > maxSentenceBytes {
		sentence = strings.ToValidUTF8(sentence[:maxSentenceBytes], "")
	}
	var out []string
	for _, c := range parse(sentence).claims {
		out = append(out, c.kind)
	}
	return out
}

// Bounds of Detect's work per fact.
const (
	maxSentences     = 8
	maxSentenceBytes = 600
)

// sentences splits text at line breaks and at ". ", "! ", "? " after a word
// of more than two letters (not after "z.B." or "15."), bounded.
func sentences(text string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) > maxSentenceBytes {
			s = strings.ToValidUTF8(s[:maxSentenceBytes], "")
		}
		if s != "" && len(out) < maxSentences {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i+1 < len(line) && len(out) < maxSentences; i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && line[i+1] == ' ' && wordBefore(line[start:i]) > 2 && !abbreviation(line[start:i]) {
				add(line[start : i+1])
				start = i + 1
			}
		}
		add(line[start:])
	}
	return out
}

// abbreviation reports whether s ends in an abbreviation that takes a dot ("Mio.", "bzw.", "Inc.").
func abbreviation(s string) bool {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	switch strings.ToLower(s[i+1:]) {
	case "mio", "mrd", "tsd", "bzw", "ggf", "inkl", "zzgl", "evtl", "usw", "etc", "inc", "ltd", "corp", "mrs", "str", "tel", "vgl", "prof", "dez", "okt", "nov", "sept", "jan", "feb", "apr", "aug":
		return true
	}
	return false
}

// wordBefore is the length in letters of the word s ends with (0 if it ends in a digit).
func wordBefore(s string) int {
	n := 0
	for _, r := range slices.Backward([]rune(s)) {
		if !unicode.IsLetter(r) {
			break
		}
		n++
	}
	return n
}

// Contradicts reports whether a and b contradict each other, and why.
func Contradicts(a, b string) (bool, string) {
	ta, tb := analyse(a), analyse(b)
	if slices.Equal(ta.words, tb.words) && slices.Equal(ta.numbers, tb.numbers) && slices.Equal(ta.dates, tb.dates) && ta.negated == tb.negated {
		return false, "" // the same statement
	}
	pa, pb := parse(a), parse(b)
	sa, sb := pa.subject(), pb.subject()
	switch {
	case len(sa) == 0 && len(sb) == 0:
		// All cue and value ("Das Budget beträgt 50.000 Euro"): the same cues, the same subject.
		if overlapOf(ta.words, tb.words) < minOverlap {
			return false, ""
		}
	case !sameSubject(sa, sb):
		return false, ""
	}
	negA, negB := pa.negs%2 == 1, pb.negs%2 == 1
	for _, kind := range []string{KindObligation, KindStatus, KindRole, KindPlace, KindDate, KindAmount} {
		ca, okA := pa.claim(kind)
		cb, okB := pb.claim(kind)
		if !okA || !okB {
			continue
		}
		if kind != KindObligation && (negA || negB) {
			continue // "not in Leeds" and "in Manchester" agree; a negation is compared below
		}
		if clash(kind, ca, cb, pa.also || pb.also, pa.delta || pb.delta) {
			return true, reason(kind, ca, cb)
		}
	}
	if negA != negB && overlapOf(ta.words, tb.words) >= minNegationOverlap {
		return true, "negation of the same statement"
	}
	qualified := !slices.Equal(ta.numbers, tb.numbers) || !slices.Equal(ta.dates, tb.dates) // "seit 2020" qualifies, not contradicts
	if len(pa.claims) == 0 && len(pb.claims) == 0 && ta.attr != "" && ta.attr == tb.attr && ta.verb == tb.verb && len(ta.value) > 0 && len(tb.value) > 0 &&
		ta.negated == tb.negated && !qualified && overlapOf(ta.value, tb.value) <= maxValueOverlap {
		return true, fmt.Sprintf("same attribute (%s %s) with another value", ta.attr, ta.verb)
	}
	return false, ""
}

// reason says what differs, in the words the reports have always used
// ("different number", "different date") and the kind's values.
func reason(kind string, a, b claim) string {
	values := func(c claim) string {
		vs := make([]string, len(c.values))
		for i, v := range c.values {
			switch kind {
			case KindDate:
				vs[i] = readableDate(v)
			case KindRole:
				vs[i] = strings.Trim(strings.ReplaceAll(v, "+", " "), " ")
			default:
				vs[i] = v
			}
		}
		return strings.Join(vs, ", ")
	}
	var what string
	switch kind {
	case KindDate:
		what = "different date (" + a.attr + ")"
	case KindAmount:
		unit, _, _ := strings.Cut(a.attr, "/")
		what = "different number (" + unit + ")"
	case KindPlace:
		what = "another place"
	case KindRole:
		what = "another holder of the role (" + a.attr + ")"
	case KindObligation:
		what = "required or not"
	case KindStatus:
		what = "another status"
	}
	return fmt.Sprintf("%s: %s vs %s", what, values(a), values(b))
}

// readableDate writes a date value as YYYY-MM-DD, MM-DD, "day DD" or YYYY.
func readableDate(v string) string {
	md, y, _ := strings.Cut(v, "@")
	switch {
	case strings.HasPrefix(md, "d"):
		md = "day " + md[1:]
	case md == "":
		return y
	}
	if y != "" {
		return y + "-" + md
	}
	return md
}

// clash compares two claims of one kind with the kind's comparator. also
// (a value added: "auch", "also") and delta (a change: "um 5.000 erhöht")
// say a sentence does not replace the value.
func clash(kind string, a, b claim, also, delta bool) bool {
	switch kind {
	case KindObligation:
		return a.values[0] != b.values[0]
	case KindStatus:
		return statusClash(a.values[0], b.values[0])
	case KindRole:
		return !also && a.attr == b.attr && disjoint(a.values, b.values, samePerson)
	case KindPlace:
		return !also && disjoint(a.values, b.values, samePlace)
	case KindDate:
		if also {
			return false
		}
		comparable := a.attr == b.attr || (a.attr == "moved" || b.attr == "moved") && a.attr != "since" && b.attr != "since"
		return comparable && disjoint(a.values, b.values, sameDate)
	case KindAmount:
		return !delta && a.attr == b.attr && disjoint(a.values, b.values, equal)
	}
	return false
}

type analysis struct {
	words   []string // content words, sorted, unique
	numbers []string // normalised, sorted
	dates   []string // normalised, sorted
	negated bool     // an odd number of negations
	attr    string   // content words before the first attribute verb
	verb    string
	value   []string // content words after it
}

var (
	isoDateRE = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	deDateRE  = regexp.MustCompile(`\b(\d{1,2})\.(\d{1,2})\.(\d{2,4})?`)
	monthRE   = regexp.MustCompile(`(?i)\b(\d{1,2})\.?\s*(januar|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember|january|february|march|may|june|july|october|december)\b`)
	numberRE  = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	months    = map[string]int{"januar": 1, "january": 1, "februar": 2, "february": 2, "märz": 3, "maerz": 3, "march": 3,
		"april": 4, "mai": 5, "may": 5, "juni": 6, "june": 6, "juli": 7, "july": 7, "august": 8, "september": 9,
		"oktober": 10, "october": 10, "november": 11, "dezember": 12, "december": 12}
	negations = map[string]bool{"nicht": true, "kein": true, "keine": true, "keinen": true, "keiner": true, "keinem": true,
		"nie": true, "niemals": true, "not": true, "no": true, "never": true, "isn't": true, "doesn't": true,
		"don't": true, "won't": true, "aren't": true, "wasn't": true, "didn't": true, "cannot": true, "can't": true}
	attributeVerbs = []string{"ist", "sind", "war", "waren", "beträgt", "betraegt", "heißt", "heisst", "leitet", "liegt",
		"wohnt", "arbeitet", "gehört", "is", "are", "was", "were", "equals", "leads", "lives", "works", "belongs"}
	stopwords = map[string]bool{"der": true, "die": true, "das": true, "den": true, "dem": true, "des": true, "ein": true,
		"eine": true, "einen": true, "einem": true, "einer": true, "und": true, "oder": true, "am": true, "im": true,
		"in": true, "an": true, "auf": true, "zu": true, "zum": true, "zur": true, "bei": true, "mit": true, "von": true,
		"für": true, "bis": true, "ab": true, "the": true, "a": true, "of": true, "to": true, "on": true, "at": true,
		"for": true, "by": true, "and": true, "or": true, "with": true, "from": true, "jetzt": true, "now": true,
		"noch": true, "still": true, "also": true, "auch": true, "wird": true, "will": true, "be": true, "werden": true,
		"euro": true, "eur": true, "€": true, "mio": true, "tsd": true, "prozent": true, "percent": true, "%": true}
)

func analyse(s string) analysis {
	var a analysis
	lower := strings.ToLower(s)
	for _, m := range isoDateRE.FindAllStringSubmatch(lower, -1) {
		a.dates = append(a.dates, m[2]+"-"+m[3]+"@"+m[1])
	}
	lower = isoDateRE.ReplaceAllString(lower, " ")
	for _, m := range deDateRE.FindAllStringSubmatch(lower, -1) {
		d := fmt.Sprintf("%02s-%02s", m[2], m[1])
		if m[3] != "" {
			d += "@" + m[3]
		}
		a.dates = append(a.dates, d)
	}
	lower = deDateRE.ReplaceAllString(lower, " ")
	for _, m := range monthRE.FindAllStringSubmatch(lower, -1) {
		a.dates = append(a.dates, fmt.Sprintf("%02d-%02s", months[m[2]], m[1]))
	}
	lower = monthRE.ReplaceAllString(lower, " ")
	for _, m := range numberRE.FindAllString(lower, -1) {
		a.numbers = append(a.numbers, normaliseNumber(m))
	}
	lower = numberRE.ReplaceAllString(lower, " ")
	neg := 0
	fields := strings.FieldsFunc(lower, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '%' && r != '€'
	})
	var before, after []string
	for _, w := range fields {
		w = strings.Trim(w, "'")
		switch {
		case negations[w]:
			neg++
			continue
		case w == "":
			continue
		case a.verb == "" && slices.Contains(attributeVerbs, w):
			a.verb = w
			continue
		case stopwords[w] || (len([]rune(w)) == 1):
			continue
		}
		w = stem(w)
		a.words = append(a.words, w)
		if a.verb == "" {
			before = append(before, w)
		} else {
			after = append(after, w)
		}
	}
	a.negated = neg%2 == 1
	if a.verb != "" && len(before) > 0 {
		slices.Sort(before)
		a.attr = strings.Join(before, " ")
		a.value = uniq(after)
	}
	a.words, a.numbers, a.dates = uniq(a.words), uniq(a.numbers), uniq(a.dates)
	return a
}

// normaliseNumber drops thousands separators: 50.000, 50,000 and 50000 are one number;
// a single separator followed by one or two digits is a decimal (1,5 = 1.5).
func normaliseNumber(n string) string {
	parts := strings.FieldsFunc(n, func(r rune) bool { return r == '.' || r == ',' })
	if len(parts) == 2 && len(parts[1]) <= 2 {
		return strings.TrimLeft(parts[0], "0") + "." + parts[1]
	}
	out := strings.TrimLeft(strings.Join(parts, ""), "0")
	if out == "" {
		return "0"
	}
	return out
}

// stem cuts common German and English inflections, enough to match
// "Projektleiterin"/"Projektleiter" or "deadlines"/"deadline".
func stem(w string) string {
	for _, suf := range []string{"innen", "in", "en", "er", "es", "e", "s", "n"} {
		if len([]rune(w)) > len([]rune(suf))+3 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func overlapOf(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	shared := 0
	for _, w := range a {
		if _, ok := slices.BinarySearch(b, w); ok {
			shared++
		}
	}
	return float64(shared) / float64(min(len(a), len(b)))
}
