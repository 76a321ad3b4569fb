package conflict

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind/names"
)

// The grammar reads a sentence as a subject and claims about it. A claim has
// a kind (where something is, who holds a role, when something starts or
// ends, what something amounts to, whether it is required, what state it is
// in), an attribute within the kind and typed values. Every word the grammar
// reads as a cue or a value is taken out of the subject, so "Die Nordlicht
// GmbH hat ihren Sitz in Bielefeld" and "Nordlicht sitzt in Detmold" share
// the subject {nordlicht} and two place claims with the values bielefeld and
// detmold.

// Kinds of claims.
const (
	KindPlace      = "place"
	KindRole       = "role"
	KindDate       = "date"
	KindAmount     = "amount"
	KindObligation = "obligation"
	KindStatus     = "status"
)

// claim is one attribute of the subject with its values.
type claim struct {
	kind   string
	attr   string   // within the kind: the role, the date's meaning, the amount's unit and period
	values []string // normalised; compared with the kind's comparator
}

// token is a word of a sentence.
type token struct {
	raw, low, stem string
	cap            bool // written with a capital letter
	start, end     int  // byte offsets
}

// sentence is a parsed fact.
type sentence struct {
	text     string
	low      string // lower case, same byte offsets as text
	toks     []token
	used     []bool // the token is a cue or a value, not part of the subject
	negs     int    // negations not taken up by a claim
	claims   []claim
	also     bool // "auch", "also", "zusätzlich": adds to what is known
	delta    bool // "um 10.000 erhöht", "increased by": a change, not a value
	dateSpan [][2]int
}

// parse reads s.
func parse(s string) *sentence {
	p := &sentence{text: s, low: lowerSameLen(s)}
	p.tokenize()
	p.dates()
	p.amounts()
	p.obligation()
	p.status()
	p.place()
	p.role()
	for i, t := range p.toks {
		switch {
		case negationWords[t.low]:
			p.negs++
			p.used[i] = true
		case alsoWords[t.low]:
			p.also = true
		}
	}
	return p
}

func (p *sentence) indexOf(low string) int {
	for i, t := range p.toks {
		if t.low == low {
			return i
		}
	}
	return len(p.toks) // used has a spare slot for "not found"
}

// lowerSameLen lower-cases s rune by rune, keeping a rune whose lower case has
// another length, so byte offsets in the result are offsets in s.
func lowerSameLen(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		l := unicode.ToLower(r)
		if utf8.RuneLen(l) != utf8.RuneLen(r) {
			l = r
		}
		b.WriteRune(l)
	}
	return b.String()
}

func (p *sentence) tokenize() {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	s := p.text
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWord(r) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if isWord(r) {
				j += n
				continue
			}
			// A hyphen or apostrophe inside a word belongs to it ("Kick-off", "don't").
			if (r == '-' || r == '\'' || r == '’') && j+n < len(s) {
				if r2, _ := utf8.DecodeRuneInString(s[j+n:]); isWord(r2) {
					j += n
					continue
				}
			}
			break
		}
		raw := s[i:j]
		low := p.low[i:j]
		low = strings.TrimSuffix(strings.TrimSuffix(low, "'s"), "’s")
		first, _ := utf8.DecodeRuneInString(raw)
		p.toks = append(p.toks, token{raw: raw, low: low, stem: stem(low), cap: unicode.IsUpper(first), start: i, end: j})
		i = j
	}
	p.used = make([]bool, len(p.toks)+1)
}

// useSpan marks the tokens inside [start, end) as used.
func (p *sentence) useSpan(start, end int) {
	for i, t := range p.toks {
		if t.start >= start && t.end <= end {
			p.used[i] = true
		}
	}
}

func (p *sentence) add(c claim) {
	if len(c.values) > 0 {
		c.values = uniq(c.values)
		p.claims = append(p.claims, c)
	}
}

func (p *sentence) claim(kind string) (claim, bool) {
	for _, c := range p.claims {
		if c.kind == kind {
			return c, true
		}
	}
	return claim{}, false
}

// has reports whether a token's lower case is one of words (prefix* matches a prefix).
func hasWord(t token, words []string) bool {
	for _, w := range words {
		if p, ok := strings.CutSuffix(w, "*"); ok {
			if strings.HasPrefix(t.low, p) {
				return true
			}
		} else if t.low == w {
			return true
		}
	}
	return false
}

// ---- dates ----

var (
	monthNames = map[string]int{"januar": 1, "january": 1, "jan": 1, "februar": 2, "february": 2, "feb": 2,
		"märz": 3, "maerz": 3, "march": 3, "mär": 3, "mar": 3, "april": 4, "apr": 4, "mai": 5, "may": 5,
		"juni": 6, "june": 6, "jun": 6, "juli": 7, "july": 7, "jul": 7, "august": 8, "aug": 8,
		"september": 9, "sept": 9, "sep": 9, "oktober": 10, "october": 10, "okt": 10, "oct": 10,
		"november": 11, "nov": 11, "dezember": 12, "december": 12, "dez": 12, "dec": 12}
	monthAlt = `januar|january|februar|february|märz|maerz|march|april|mai|may|juni|june|juli|july|august|september|oktober|october|november|dezember|december|jan|feb|mär|mar|apr|jun|jul|aug|sept|sep|okt|oct|nov|dez|dec`
	dateREs  = []*regexp.Regexp{
		regexp.MustCompile(`\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b`),
		regexp.MustCompile(`\b(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4}|\d{2})?`),
		regexp.MustCompile(`\b(?P<d>\d{1,2})(?:\.|st|nd|rd|th)?\s+(?:of\s+)?(?P<mn>` + monthAlt + `)\.?(?:,?\s+(?P<y>\d{4}))?`),
		regexp.MustCompile(`\b(?P<mn>` + monthAlt + `)\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{4}))?`),
		regexp.MustCompile(`\b(?P<mn>` + monthAlt + `)\s+(?P<y>\d{4})\b`),
		regexp.MustCompile(`\b(?:the\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)\b`),
		regexp.MustCompile(`\b(?:ende|anfang|mitte|end of|beginning of|mid)\s+(?P<mn>` + monthAlt + `)\b`),
		regexp.MustCompile(`\b(?P<y>(?:19|20)\d{2})\b`),
	}
	dateStart = []string{"start*", "beginn*", "begin*", "kick*", "commenc*", "ab", "projektstart*", "launch*"}
	dateEnd   = []string{"end*", "bis", "until", "till", "expir*", "ablauf*", "läuft", "runs", "frist*", "abgabefrist*", "deadline*", "due", "fällig*", "spätestens", "latest", "abgabe*", "einreich*", "submit*"}
	dateSince = []string{"seit", "since", "gegründet", "founded", "unterschrieben", "unterzeichnet", "signed", "eingestellt", "hired", "joined", "gebucht", "booked"}
	dateMoved = []string{"verschoben", "verschiebt", "verschiebung*", "verlegt", "vorverlegt", "vorgezogen", "moved", "postponed",
		"postponement", "rescheduled", "delayed", "brought", "pushed", "slipped", "slips"}
)

// dates reads the dates of the sentence as month-day@year values ("03-15@2026",
// "03-15", "@2026", "03@2026") and their meaning: start, end, since or at
// (an event's date); a moved date ("verschoben auf") is compared with any.
func (p *sentence) dates() {
	var values []string
	taken := make([]bool, len(p.low))
	for _, re := range dateREs {
		for _, m := range re.FindAllStringSubmatchIndex(p.low, -1) {
			if slices.Contains(taken[m[0]:m[1]], true) {
				continue
			}
			var d, mo, y string
			for i, name := range re.SubexpNames() {
				if m[2*i] < 0 {
					continue
				}
				v := p.low[m[2*i]:m[2*i+1]]
				switch name {
				case "d":
					d = v
				case "m":
					mo = v
				case "mn":
					mo = itoa2(monthNames[v])
				case "y":
					y = v
				}
			}
			if len(y) == 2 {
				y = "20" + y
			}
			if mo != "" && (atoi(mo) < 1 || atoi(mo) > 12) || d != "" && (atoi(d) < 1 || atoi(d) > 31) {
				continue
			}
			v := ""
			switch {
			case mo != "" && d != "":
				v = itoa2(atoi(mo)) + "-" + itoa2(atoi(d))
			case mo != "":
				v = itoa2(atoi(mo))
			case d != "":
				v = "d" + itoa2(atoi(d))
			}
			values = append(values, v+"@"+y)
			for i := m[0]; i < m[1]; i++ {
				taken[i] = true
			}
			p.useSpan(m[0], m[1])
			p.dateSpan = append(p.dateSpan, [2]int{m[0], m[1]})
		}
	}
	if len(values) == 0 {
		return
	}
	attr := "at"
	for _, cue := range []struct {
		attr  string
		words []string
	}{{"since", dateSince}, {"moved", dateMoved}, {"start", dateStart}, {"end", dateEnd}} {
		for i, t := range p.toks {
			if hasWord(t, cue.words) {
				p.used[i] = true
				if attr == "at" {
					attr = cue.attr
				}
			}
		}
	}
	for i, t := range p.toks {
		if monthNames[t.low] > 0 || hasWord(t, []string{"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "statt", "scheduled", "geplant", "planned", "termin", "datum", "date", "each", "jeden", "month", "monats", "monat"}) {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindDate, attr: attr, values: values})
}

// sameDate compares two date values, fields unknown on one side agreeing.
func sameDate(a, b string) bool {
	ma, ya, _ := strings.Cut(a, "@")
	mb, yb, _ := strings.Cut(b, "@")
	if ya != "" && yb != "" && ya != yb {
		return false
	}
	if ma == "" || mb == "" {
		return true
	}
	da, db := strings.HasPrefix(ma, "d"), strings.HasPrefix(mb, "d")
	switch {
	case da && db, !da && !db && len(ma) == len(mb):
		return ma == mb
	case da:
		return len(mb) == 5 && "d"+mb[3:] == ma
	case db:
		return len(ma) == 5 && "d"+ma[3:] == mb
	default: // a month and a month-day
		return ma[:2] == mb[:2]
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return -1
		}
		n = n*10 + int(r-'0')
	}
	return n
}

func itoa2(n int) string { return fmt.Sprintf("%02d", n) }

// ---- amounts ----

var (
	amountRE  = regexp.MustCompile(`(?P<pre>€|\$|£|eur\b|usd\b)?\s?(?P<n>\d+(?:[.,]\d+)*)\s?(?P<scale>k\b|tsd\.?|mio\.?|millionen|million|mrd\.?|milliarden|billion)?\s?(?P<unit>€|\$|£|euros?\b|eur\b|dollars?\b|usd\b|pfund\b|pounds?\b|%|prozent\b|percent\b|mitarbeite\p{L}*|employees\b|people\b|staff\b|personen\b|leute\b|beschäftigte\p{L}*|stunden\b|hours\b|tage\b|days\b|wochen\b|weeks\b|monate\b|months\b|nutzer\b|users\b|kunden\b|customers\b)?`)
	unitClass = map[string]string{"€": "money", "$": "money", "£": "money", "euro": "money", "euros": "money", "eur": "money",
		"dollar": "money", "dollars": "money", "usd": "money", "pfund": "money", "pound": "money", "pounds": "money",
		"%": "percent", "prozent": "percent", "percent": "percent", "employees": "people", "people": "people",
		"staff": "people", "personen": "people", "leute": "people", "stunden": "hours", "hours": "hours", "tage": "days",
		"days": "days", "wochen": "weeks", "weeks": "weeks", "monate": "months", "months": "months", "nutzer": "users",
		"users": "users", "kunden": "customers", "customers": "customers"}
	scales = map[string]float64{"k": 1e3, "tsd": 1e3, "tsd.": 1e3, "mio": 1e6, "mio.": 1e6, "millionen": 1e6, "million": 1e6,
		"mrd": 1e9, "mrd.": 1e9, "milliarden": 1e9, "billion": 1e9}
	perMonth   = []string{"monat", "monatlich*", "monthly", "month", "mtl", "monats*"}
	perYear    = []string{"jahr", "jährlich*", "yearly", "annually", "annual", "year", "jahres*", "pa"}
	perHour    = []string{"stunde", "hour", "hourly", "stundensatz*", "stundenlohn*"}
	amountCues = []string{"budget*", "projektbudget*", "preis*", "price*", "kost*", "cost*", "gehalt*", "salary", "stundensatz*",
		"rate", "wert", "worth", "valued", "value", "umsatz*", "revenue", "rabatt*", "discount*", "gebühr*", "fee*", "beträgt",
		"betraegt", "berechnet", "charges", "charge", "employs", "beschäftigt", "arbeiten", "zahlt", "pays", "gets", "erhält", "bekommt",
		"stehen", "verfügung", "liegt", "bei", "auf", "festgelegt", "set", "hat", "has", "have"}
	deltaWords = []string{"um", "by"}
)

// amounts reads numbers with their unit class (money, percent, people, ...)
// and period (per month, year, hour) as the attribute, the value parsed
// ("50.000" = "50,000" = "50k" = 50000).
func (p *sentence) amounts() {
	var values []string
	class := ""
	for _, m := range amountRE.FindAllStringSubmatchIndex(p.low, -1) {
		nStart, nEnd := m[4], m[5]
		if p.inDate(nStart) || p.inWord(nStart, nEnd) {
			continue
		}
		v, ok := parseNumber(p.low[nStart:nEnd])
		if !ok {
			continue
		}
		if m[6] >= 0 {
			v *= scales[p.low[m[6]:m[7]]]
		}
		unit := ""
		if m[2] >= 0 {
			unit = strings.TrimSpace(p.low[m[2]:m[3]])
		}
		if m[8] >= 0 {
			unit = p.low[m[8]:m[9]]
		}
		c := unitClass[unit]
		if c == "" && (strings.HasPrefix(unit, "mitarbeite") || strings.HasPrefix(unit, "beschäftigte")) {
			c = "people"
		}
		if class == "" || class == "bare" {
			class = c
			if class == "" {
				class = "bare"
			}
		}
		if c != "" && c != class {
			continue // only the first unit class is the claim's
		}
		// "um 10.000 erhöht", "increased by 5%": a change, not a value.
		if i := p.tokenAt(m[0]); i > 0 && hasWord(p.toks[i-1], deltaWords) {
			p.delta = true
			continue
		}
		values = append(values, formatAmount(v))
		p.useSpan(m[0], m[1])
	}
	if len(values) == 0 {
		return
	}
	period := ""
	for i, t := range p.toks {
		for _, per := range []struct {
			name  string
			words []string
		}{{"month", perMonth}, {"year", perYear}, {"hour", perHour}} {
			if hasWord(t, per.words) {
				p.used[i] = true
				if period == "" {
					period = per.name
				}
			}
		}
		if hasWord(t, amountCues) || hasWord(t, []string{"pro", "per", "im", "a", "each"}) {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindAmount, attr: class + "/" + period, values: values})
}

func (p *sentence) inDate(at int) bool {
	for _, s := range p.dateSpan {
		if at >= s[0] && at < s[1] {
			return true
		}
	}
	return false
}

// inWord reports whether the number at [start, end) is part of a word ("ISO-9001", "Q3").
func (p *sentence) inWord(start, end int) bool {
	for _, t := range p.toks {
		if t.start <= start && t.end >= end && (t.start < start || t.end > end) {
			// "55k", "3mio" carry a scale; "Q3", "ISO-9001" are names.
			return t.start < start || scales[strings.TrimLeft(t.low, "0123456789.,")] == 0
		}
	}
	return false
}

// tokenAt is the index of the token starting at or after byte offset at.
func (p *sentence) tokenAt(at int) int {
	for i, t := range p.toks {
		if t.end > at {
			return i
		}
	}
	return len(p.toks)
}

// parseNumber reads a number in German or English notation: a separator
// followed by exactly three digits groups thousands, any other is the decimal point.
func parseNumber(s string) (float64, bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == ',' })
	if len(parts) == 0 {
		return 0, false
	}
	var intPart, frac string
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) != 3 {
		intPart, frac = strings.Join(parts[:len(parts)-1], ""), last
	} else {
		intPart = strings.Join(parts, "")
	}
	v := 0.0
	for _, r := range intPart {
		v = v*10 + float64(r-'0')
	}
	scale := 0.1
	for _, r := range frac {
		v += float64(r-'0') * scale
		scale /= 10
	}
	return v, true
}

func formatAmount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ---- obligation ----

var (
	requiredWords = []string{"muss", "müssen", "musst", "pflicht*", "verpflicht*", "erforderlich*", "notwendig*", "nötig*",
		"vorgeschrieben*", "obligatorisch*", "zwingend*", "brauch*", "benötig*", "must", "required", "requires", "require",
		"mandatory", "compulsory", "obligatory", "need", "needs", "needed", "has", "have"}
	optionalWords = []string{"freiwillig*", "optional*", "voluntary", "fakultativ*", "entfällt", "entfallen", "waived", "abgeschafft",
		"aufgehoben"}
)

// obligation reads whether something is required: "muss", "Pflicht",
// "required", "has to" against "freiwillig", "optional", "muss nicht",
// "no longer required". The negation is the claim's value, not a negation
// of the sentence.
func (p *sentence) obligation() {
	value := ""
	for i, t := range p.toks {
		switch {
		case hasWord(t, optionalWords):
			value = "optional"
			p.used[i] = true
		case hasWord(t, requiredWords):
			if (t.low == "has" || t.low == "have") && (i+1 >= len(p.toks) || p.toks[i+1].low != "to") {
				continue // "has 80 employees" is not "has to"
			}
			if value == "" {
				value = "required"
			}
			p.used[i] = true
			if i+1 < len(p.toks) && p.toks[i+1].low == "to" {
				p.used[i+1] = true
			}
		}
	}
	if value == "" {
		return
	}
	if value == "required" {
		for i, t := range p.toks {
			if negationWords[t.low] {
				value = "optional"
				p.used[i] = true
				p.toks[i].low = "" // taken up: not a negation of the sentence
			}
		}
	}
	for i, t := range p.toks {
		if t.low == "mehr" || t.low == "longer" {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindObligation, values: []string{value}})
}

// ---- status ----

// statusPhrases name a state, matched as whole words in the lower-cased sentence.
var statusPhrases = []struct {
	status  string
	phrases []string
}{
	{"cancelled", []string{"abgesagt", "absage", "entfällt", "stornierung", "kündigung", "cancellation", "termination", "gestrichen", "storniert", "fällt aus", "fällt weg", "gestoppt", "abgebrochen", "eingestellt", "gekündigt", "aufgelöst", "beendet worden", "cancelled", "canceled", "called off", "scrapped", "stopped", "terminated", "discontinued", "dropped", "axed"}},
	{"paused", []string{"pausiert", "auf eis", "ausgesetzt", "on hold", "paused", "suspended", "frozen"}},
	{"rejected", []string{"abgelehnt", "ablehnung", "rejection", "verworfen", "rejected", "declined", "denied", "turned down"}},
	{"done", []string{"abgeschlossen", "fertig", "erledigt", "fertiggestellt", "ausgeliefert", "complete", "completed", "finished", "done", "delivered", "went live", "is live", "ist live"}},
	{"ongoing", []string{"läuft noch", "läuft weiter", "läuft planmäßig", "in arbeit", "in bearbeitung", "in umsetzung", "in progress", "ongoing", "underway", "under way", "still running", "on track", "im plan", "im zeitplan"}},
	{"planned", []string{"geplant", "in planung", "planned", "vorgesehen"}},
	{"confirmed", []string{"bestätigt", "findet statt", "finden statt", "findet wie geplant statt", "confirmed", "takes place", "will take place", "going ahead"}},
	{"open", []string{"noch offen", "ist offen", "offen", "pending", "ausstehend", "not yet signed", "noch nicht unterschrieben", "outstanding"}},
	{"signed", []string{"unterschrieben", "unterzeichnet", "signed"}},
	{"accepted", []string{"angenommen", "akzeptiert", "genehmigt", "approved", "accepted", "freigegeben", "zugesagt"}},
	{"active", []string{"aktiv", "active", "in betrieb", "live"}},
}

// statusClash says which different states exclude each other: a negative
// state (cancelled, paused, rejected) every positive one; done excludes
// ongoing, planned and open; open excludes signed, accepted and done.
func statusClash(a, b string) bool {
	if a == b {
		return false
	}
	neg := func(s string) bool { return s == "cancelled" || s == "paused" || s == "rejected" }
	if neg(a) != neg(b) {
		return true
	}
	pair := func(x, y string) bool { return (a == x && b == y) || (a == y && b == x) }
	for _, other := range []string{"ongoing", "planned", "open"} {
		if pair("done", other) {
			return true
		}
	}
	return pair("open", "signed") || pair("open", "accepted")
}

func (p *sentence) status() {
	var values []string
	for _, sp := range statusPhrases {
		for _, ph := range sp.phrases {
			if at, ok := wordIndex(p.low, ph); ok {
				values = append(values, sp.status)
				p.useSpan(at, at+len(ph))
				break
			}
		}
	}
	// German separable verbs: "findet ... statt".
	if i := p.indexOf("statt"); i < len(p.toks) && (p.indexOf("findet") < len(p.toks) || p.indexOf("finden") < len(p.toks)) {
		values = append(values, "confirmed")
		p.used[i], p.used[p.indexOf("findet")], p.used[p.indexOf("finden")] = true, true, true
	}
	if len(values) == 0 {
		return
	}
	for i, t := range p.toks {
		if hasWord(t, []string{"put", "wurde", "worden", "been", "has", "have", "hat", "still", "noch", "now", "jetzt"}) {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindStatus, values: values[:1]})
}

// wordIndex finds phrase in s as whole words.
func wordIndex(s, phrase string) (int, bool) {
	for from := 0; ; {
		i := strings.Index(s[from:], phrase)
		if i < 0 {
			return 0, false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(phrase):])
		if (i == 0 || !isWordRune(before)) && (i+len(phrase) == len(s) || !isWordRune(after)) {
			return i, true
		}
		from = i + len(phrase)
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// ---- place ----

const adv = `(?:(?:jetzt|nun|mittlerweile|inzwischen|weiterhin|noch|now|currently|still|also|auch) )?`

// placeRE finds the phrasings of where something is; the value follows.
var placeRE = regexp.MustCompile(`(?:` + strings.Join([]string{
	`(?:haupt|firmen|unternehmens|geschäfts)?sitz ` + adv + `(?:ist |liegt |befindet sich )?` + adv + `in`,
	`hat (?:seinen|ihren|den|einen|sein|ihr) ` + adv + `(?:haupt|firmen|unternehmens|geschäfts)?sitz ` + adv + `in`,
	`(?:sitzt|sitzen|liegt|liegen|wohnt|wohnen|lebt|leben|arbeitet|arbeiten) ` + adv + `in`,
	`(?:befindet|befinden) sich ` + adv + `in`, `ansässig in`, `beheimatet in`,
	`(?:zieht|ziehen|zog|umgezogen|umzug|verlegt|verlagert|wechselt|wechsel) (?:\S+ ){0,3}nach`, `standort (?:ist |liegt )?` + adv + `in`,
	`(?:findet|finden|fand) ` + adv + `in`, `(?:ist|sind|war) ` + adv + `in`,
	`(?:is|are|was) ` + adv + `(?:based|located|headquartered|situated) in`, `based in`, `headquartered in`,
	`headquarters (?:is|are) ` + adv + `in`, `(?:works|work) out of`, `operates (?:out of|from)`,
	`(?:lives|live|living|works|work|working) ` + adv + `in`, `(?:moved|relocated|moving|relocating|relocation|move) (?:\S+ ){0,2}to`,
	`(?:head office|headquarters|hq|main office) (?:is |are )?` + adv + `in`,
	`(?:takes|take|took) place in`, `(?:will be|is|are|was) held in`, `(?:is|are) ` + adv + `in`,
}, "|") + `) (?:(?:der|dem|den|die|das|the|our|unserem|unserer|unser|unseren|its|their|ihrem|ihrer|seinem|seiner) )?`)

// placeCueNoun reports a capitalised word of a place phrasing (Sitz, Hauptsitz, Umzug, Standort).
func placeCueNoun(w string) bool {
	for _, c := range []string{"sitz", "umzug", "standort", "wechsel", "head", "hq", "main", "our", "the", "unser"} {
		if strings.Contains(w, c) {
			return true
		}
	}
	return subjectStop[w]
}

// notPlaces follow "ist in" and are states, not places.
var notPlaces = map[string]bool{"planung": true, "arbeit": true, "betrieb": true, "vorbereitung": true, "bearbeitung": true,
	"prüfung": true, "umsetzung": true, "kraft": true, "urlaub": true, "elternzeit": true, "rente": true, "progress": true,
	"charge": true, "touch": true, "favor": true, "favour": true, "place": true, "time": true, "kontakt": true, "ordnung": true}

func (p *sentence) place() {
	var values []string
	for _, m := range placeRE.FindAllStringIndex(p.low, -1) {
		i := p.tokenAt(m[1])
		if i >= len(p.toks) || p.toks[i].start != m[1] {
			continue
		}
		t := p.toks[i]
		if !t.cap && !names.Place(t.low) || notPlaces[t.low] || p.used[i] {
			continue
		}
		values = append(values, t.low)
		// The phrasing's words are cues; a name inside it ("Umzug der Firma Kranich nach") stays the subject.
		for j, u := range p.toks {
			if u.start >= m[0] && u.end <= t.end && (!u.cap || j == i || placeCueNoun(u.low)) {
				p.used[j] = true
			}
		}
	}
	if len(values) == 0 {
		return
	}
	// Further places in the sentence ("und eine Niederlassung in Hamburg") are values too.
	for i, t := range p.toks {
		if i > 0 && !p.used[i] && names.Place(t.low) && hasWord(p.toks[i-1], []string{"in", "nach", "to", "aus", "from"}) {
			values = append(values, t.low)
			p.used[i] = true
		}
	}
	for i, t := range p.toks {
		if hasWord(t, []string{"büro", "office", "standort", "location", "headquarters", "hq", "statt", "offices", "zentrale"}) {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindPlace, values: values})
}

// ---- role ----

// roleCues name a role; the first matching group is the role's attribute.
var roleCues = []struct {
	role  string
	words []string
}{
	{"contact", []string{"ansprechpart*", "kontaktperson*", "contact", "betreu*", "key"}},
	{"cfo", []string{"cfo", "finanzvorstand*", "finanzchef*"}},
	{"cto", []string{"cto", "technikvorstand*"}},
	{"lead", []string{"leit*", "projektleit*", "geleitet", "führt", "geführt", "geschäftsführ*", "ceo", "chef*", "vorsitz*", "vorstand*",
		"lead", "leads", "led", "leader", "head", "heads", "headed", "manag*", "owns", "owned", "owner", "responsible",
		"charge", "zuständig*", "verantwort*", "übernimmt", "übernehmen", "übernommen", "takes", "took", "chair*", "director", "direktor*", "inhaber*"}},
}

func (p *sentence) role() {
	role := ""
	var cues, compounds []int
	for i, t := range p.toks {
		for _, rc := range roleCues {
			if hasWord(t, rc.words) {
				if role == "" || (role == "lead" && rc.role != "lead") {
					role = rc.role
				}
				cues = append(cues, i)
				break
			}
		}
		// "Vertriebsleiterin", "Marketingchef": the role of the compound's first part.
		if at := compoundRole(t.low); at > 0 && !slices.Contains(cues, i) {
			if role == "" {
				role = "lead"
			}
			compounds = append(compounds, i)
		}
	}
	if role == "" {
		return
	}
	persons, at := p.persons()
	// "ersetzt Frank Heller", "Nachfolgerin von Frank Heller", "instead of Henry": the person
	// named right after a replacing word is the former holder, not a holder.
	var holders []string
	for k, v := range persons {
		replaced := false
		for j := max(0, at[k]-3); j < at[k]; j++ {
			if hasWord(p.toks[j], replacingWords) {
				replaced = true
			}
		}
		if !replaced {
			holders = append(holders, v)
		}
	}
	if len(holders) == 0 {
		return
	}
	for _, i := range cues {
		p.used[i] = true
	}
	for _, i := range compounds {
		p.toks[i].stem = stem(p.toks[i].low[:compoundRole(p.toks[i].low)])
	}
	for i, t := range p.toks {
		if hasWord(t, []string{"account", "neue", "neuer", "neuen", "new", "project", "projekt", "by", "von", "of", "over", "in", "als", "as"}) ||
			hasWord(t, replacingWords) {
			p.used[i] = true
		}
	}
	p.add(claim{kind: KindRole, attr: role, values: holders})
}

// replacingWords come before the former holder of a role.
var replacingWords = []string{"ersetzt", "ablöst", "löst", "nachfolger*", "statt", "anstelle", "anstatt", "replaces", "replacing",
	"replaced", "succeeds", "succeeding", "successor", "instead", "from"}

// compoundRole is the byte offset of a role word ending a compound
// ("vertriebsleiterin" 8, "marketingchef" 9), or 0.
func compoundRole(w string) int {
	for _, r := range []string{"leiterin", "leiter", "leitung", "chefin", "chef", "manager", "verantwortliche"} {
		if i := strings.LastIndex(w, r); i >= 3 {
			return i
		}
	}
	return 0
}

// persons finds people: a form of address and a name (Herr Vogel), or a
// common given name and, if written next to it, a surname (Lisa Müller,
// Priya). A person is written given+surname or +surname; the comparator
// matches them by surname or, without one, by given name.
func (p *sentence) persons() (values []string, at []int) {
	for i := 0; i < len(p.toks); i++ {
		t := p.toks[i]
		switch {
		case names.Honorific(t.raw) && i+1 < len(p.toks) && p.toks[i+1].cap:
			values, at = append(values, "+"+p.toks[i+1].low), append(at, i)
			p.used[i], p.used[i+1] = true, true
			i++
		case t.cap && names.Given(t.raw):
			at = append(at, i)
			if i+1 < len(p.toks) && p.toks[i+1].cap && !names.LegalForm(p.toks[i+1].raw) && !names.Given(p.toks[i+1].raw) && !commonCaps[p.toks[i+1].low] {
				values = append(values, t.low+"+"+p.toks[i+1].low)
				p.used[i], p.used[i+1] = true, true
				i++
				continue
			}
			values = append(values, t.low+"+")
			p.used[i] = true
		}
	}
	return values, at
}

// commonCaps are capitalised words that follow a given name without being a surname.
var commonCaps = map[string]bool{"und": true, "and": true, "ist": true, "is": true, "hat": true, "has": true,
	"leitet": true, "leads": true, "übernimmt": true, "wird": true, "will": true}

// samePerson compares "given+surname" values.
func samePerson(a, b string) bool {
	ga, sa, _ := strings.Cut(a, "+")
	gb, sb, _ := strings.Cut(b, "+")
	if sa != "" && sb != "" {
		return sa == sb && (ga == "" || gb == "" || ga == gb)
	}
	if ga != "" && gb != "" {
		return ga == gb
	}
	return false
}

// samePlace compares places: one name may extend the other ("Frankfurt", "Frankfurt-Höchst").
func samePlace(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"-") || strings.HasPrefix(b, a+"-")
}

// ---- words ----

var (
	negationWords = map[string]bool{"nicht": true, "kein": true, "keine": true, "keinen": true, "keiner": true, "keinem": true,
		"keines": true, "nie": true, "niemals": true, "not": true, "no": true, "never": true, "isn't": true, "doesn't": true,
		"don't": true, "won't": true, "aren't": true, "wasn't": true, "didn't": true, "cannot": true, "can't": true,
		"weren't": true, "hasn't": true, "haven't": true, "shouldn't": true, "wouldn't": true, "isn’t": true, "doesn’t": true,
		"don’t": true, "won’t": true}
	alsoWords = map[string]bool{"auch": true, "also": true, "zusätzlich": true, "additionally": true, "außerdem": true,
		"ebenfalls": true, "too": true, "weitere": true, "weiteren": true, "another": true, "second": true, "zweite": true,
		"zweiten": true, "gemeinsam": true, "together": true, "jointly": true, "stellvertretend": true, "deputy": true,
		"vertretung": true, "vertritt": true, "co": true}
	// genericNouns say what kind of thing a subject is, not which one.
	genericNouns = map[string]bool{"projekt": true, "project": true, "firma": true, "fa": true, "company": true,
		"unternehmen": true, "kunde": true, "kunden": true, "customer": true, "client": true, "team": true, "neue": true,
		"neuen": true, "neuer": true, "new": true}
	subjectStop = map[string]bool{"der": true, "die": true, "das": true, "den": true, "dem": true, "des": true, "ein": true,
		"eine": true, "einen": true, "einem": true, "einer": true, "eines": true, "und": true, "oder": true, "am": true,
		"im": true, "in": true, "ins": true, "an": true, "auf": true, "zu": true, "zum": true, "zur": true, "bei": true,
		"beim": true, "mit": true, "von": true, "vom": true, "für": true, "bis": true, "ab": true, "aus": true, "nach": true,
		"über": true, "unter": true, "um": true, "the": true, "a": true, "an ": true, "of": true, "to": true, "on": true,
		"at": true, "for": true, "by": true, "and": true, "or": true, "with": true, "from": true, "into": true, "as": true,
		"jetzt": true, "now": true, "noch": true, "still": true, "also": true, "auch": true, "wird": true, "will": true,
		"be": true, "werden": true, "wurde": true, "wurden": true, "worden": true, "ist": true, "sind": true, "war": true,
		"waren": true, "hat": true, "haben": true, "hatte": true, "is": true, "are": true, "was": true, "were": true,
		"has": true, "have": true, "had": true, "been": true, "it": true, "its": true, "es": true, "er": true, "sie": true,
		"wir": true, "we": true, "our": true, "unser": true, "unsere": true, "unserem": true, "unseren": true, "unserer": true,
		"ihr": true, "ihre": true, "ihren": true, "ihrem": true, "sein": true, "seine": true, "seinen": true, "their": true,
		"his": true, "her": true, "they": true, "alle": true, "allen": true, "all": true, "every": true, "each": true,
		"jeden": true, "jede": true, "jeder": true, "mehr": true, "longer": true, "damit": true, "dann": true, "then": true,
		"that": true, "this": true, "dass": true, "sich": true, "uns": true, "us": true, "so": true, "very": true, "sehr": true,
		"herr": true, "herrn": true, "frau": true, "mr": true, "mrs": true, "ms": true, "dr": true, "does": true, "do": true,
		"did": true, "can": true, "kann": true, "können": true, "soll": true, "sollen": true, "should": true, "would": true,
		"euro": true, "eur": true, "prozent": true, "percent": true, "gets": true, "get": true}
)

var weekdays = map[string]bool{"montag": true, "dienstag": true, "mittwoch": true, "donnerstag": true, "freitag": true,
	"samstag": true, "sonntag": true, "monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
	"saturday": true, "sunday": true, "heute": true, "morgen": true, "today": true, "tomorrow": true}

// subjectWord is a content word of a subject.
type subjectWord struct {
	stem string
	cap  bool
}

// subject is what the sentence is about: its tokens that are neither cue,
// value, negation, stop word, legal form nor generic noun.
func (p *sentence) subject() []subjectWord {
	var out []subjectWord
	for i, t := range p.toks {
		if p.used[i] || t.low == "" || subjectStop[t.low] || genericNouns[t.low] || names.LegalForm(t.raw) ||
			negationWords[t.low] || alsoWords[t.low] || utf8.RuneCountInString(t.low) < 2 || isNumber(t.low) ||
			monthNames[t.low] > 0 || weekdays[t.low] {
			continue
		}
		// The first word of an English sentence is capitalised by position.
		capital := t.cap && !(i == 0 && !names.Given(t.raw) && strings.ToLower(t.raw[:1]) != t.raw[:1] && englishStart(t.low))
		out = append(out, subjectWord{stem: t.stem, cap: capital})
	}
	return out
}

// englishStart reports a word that starts English sentences without naming anything.
func englishStart(w string) bool {
	return strings.HasSuffix(w, "s") || w == "attendance" || w == "visitors" || w == "invoices"
}

func isNumber(s string) bool { return atoi(strings.NewReplacer(".", "", ",", "").Replace(s)) >= 0 }

// sameWord matches stems, and a compound with its head or modifier
// ("projektbudget" and "budget", "leeds" and "leeds").
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) < 4 || len(b) < 4 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) || strings.HasSuffix(a, b) || strings.HasSuffix(b, a)
}

// sameSubject decides whether two sentences are about the same thing: they
// share words, at least half of the smaller subject, and not both of them
// name something (a capitalised word) the other does not.
func sameSubject(a, b []subjectWord) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	shared := 0
	otherA, otherB := false, false
	for _, x := range a {
		found := false
		for _, y := range b {
			if sameWord(x.stem, y.stem) {
				found = true
				break
			}
		}
		if found {
			shared++
		} else if x.cap {
			otherA = true
		}
	}
	for _, y := range b {
		found := false
		for _, x := range a {
			if sameWord(x.stem, y.stem) {
				found = true
				break
			}
		}
		if !found && y.cap {
			otherB = true
		}
	}
	if shared == 0 || otherA && otherB {
		return false
	}
	// One shared word with other words on both sides ("billing migration",
	// "Migration der Datenbank") is two things of one kind.
	if shared == 1 && len(a) > 1 && len(b) > 1 {
		return false
	}
	return float64(shared)/float64(min(len(a), len(b))) >= minSubjectOverlap
}

// disjoint reports whether no value of a equals one of b.
func disjoint(a, b []string, same func(x, y string) bool) bool {
	for _, x := range a {
		for _, y := range b {
			if same(x, y) {
				return false
			}
		}
	}
	return true
}

func equal(a, b string) bool { return a == b }
