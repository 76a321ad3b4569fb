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
	minOverlap         = 0.75 // numbers and dates
	minNegationOverlap = 0.7
	maxValueOverlap    = 0.34 // attribute values this similar are the same value
)

// Detect compares text with each existing fact.
func Detect(text string, existing []Fact) []Finding {
	var out []Finding
	for _, f := range existing {
		if ok, reason := Contradicts(text, f.Text); ok {
			out = append(out, Finding{ExistingID: f.ID, ExistingText: f.Text, Reason: reason})
		}
	}
	return out
}

// Contradicts reports whether a and b contradict each other, and why.
func Contradicts(a, b string) (bool, string) {
	ta, tb := analyse(a), analyse(b)
	if slices.Equal(ta.words, tb.words) && slices.Equal(ta.numbers, tb.numbers) && slices.Equal(ta.dates, tb.dates) && ta.negated == tb.negated {
		return false, "" // the same statement
	}
	overlap := overlapOf(ta.words, tb.words)
	if len(ta.numbers) > 0 && len(tb.numbers) > 0 && !slices.Equal(ta.numbers, tb.numbers) && overlap >= minOverlap {
		return true, fmt.Sprintf("different number for the same statement: %s vs %s",
			strings.Join(ta.numbers, ", "), strings.Join(tb.numbers, ", "))
	}
	if len(ta.dates) > 0 && len(tb.dates) > 0 && !slices.Equal(ta.dates, tb.dates) && overlap >= minOverlap {
		return true, fmt.Sprintf("different date for the same statement: %s vs %s",
			strings.Join(ta.dates, ", "), strings.Join(tb.dates, ", "))
	}
	if ta.negated != tb.negated && overlap >= minNegationOverlap {
		return true, "negation of the same statement"
	}
	qualified := !slices.Equal(ta.numbers, tb.numbers) || !slices.Equal(ta.dates, tb.dates) // "seit 2020" qualifies, not contradicts
	if ta.attr != "" && ta.attr == tb.attr && ta.verb == tb.verb && len(ta.value) > 0 && len(tb.value) > 0 &&
		ta.negated == tb.negated && !qualified && overlapOf(ta.value, tb.value) <= maxValueOverlap {
		return true, fmt.Sprintf("same attribute (%s %s) with another value", ta.attr, ta.verb)
	}
	// One holder per role: "X leitet Apollo" and "Y leitet Apollo".
	if slices.Contains(roleVerbs, ta.verb) && ta.verb == tb.verb && len(ta.value) > 0 && slices.Equal(ta.value, tb.value) &&
		ta.attr != "" && tb.attr != "" && ta.negated == tb.negated && !qualified &&
		overlapOf(strings.Fields(ta.attr), strings.Fields(tb.attr)) <= maxValueOverlap {
		return true, fmt.Sprintf("another holder of the same role (%s %s)", ta.verb, strings.Join(ta.value, " "))
	}
	return false, ""
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
	// roleVerbs name a role one holder fills at a time.
	roleVerbs = []string{"leitet", "leads", "gehört", "belongs"}
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
