package timeq

import (
	"regexp"
	"strings"
	"time"
)

// A question names times relative to when it is asked ("What did I do last week?", "Was war
// gestern?", "vor zwei Wochen", "am Wochenende"); LocateAt resolves them against the time of
// asking into the span they cover, so they match the memories' own times and the days their
// texts name (Dates) as a written date does. A day is its day; a named week, month or year the
// whole calendar period (weeks Monday to Sunday); "N weeks ago" a window of the unit's size
// around that point; "in the last N days" the days from then to today; a weekend Saturday and
// Sunday; a bare weekday in a question told in the past ("What did Caroline do on Friday?")
// the last such day, in a stated week ("letzte Woche am Freitag") that week's; "recently",
// "kürzlich", "neulich" the month before.

// ParseAt is Parse with the relative times a question names resolved against now, the time of
// asking (on the calendar of now's own zone). A zero now reads written dates only (Parse).
func ParseAt(q string, now time.Time) (Span, bool) {
	s, _, _, ok := LocateAt(q, now)
	return s, ok
}

// LocateAt is LocateAtWith reading every relative time, the vague ones included.
func LocateAt(q string, now time.Time) (s Span, start, end int, ok bool) {
	return LocateAtWith(q, now, Vague{Weekdays: true, Recently: true})
}

// Vague tells which of the vaguest relative times a question's reading resolves.
type Vague struct {
	// Weekdays: a bare weekday in a question told in the past ("What did Caroline do on
	// Friday?") names the last such day.
	Weekdays bool
	// Recently: "recently", "kürzlich", "neulich" and their kin name the month before.
	Recently bool
}

// LocateAtWith is ParseAt, and where in q the time is written: q[start:end]. A written day, or
// a month of a year, comes first ("last weekend before April 10, 2023" names 10 April); then a
// relative time, the leftmost; then a month without a year and a bare year; then "recently"
// and its kin, the vaguest ("recently in May 2022" names May 2022, "recently in 2024" 2024).
// What v leaves out names no time.
func LocateAtWith(q string, now time.Time, v Vague) (s Span, start, end int, ok bool) {
	if s, start, end, ok := locate(q, exact); ok {
		return s, start, end, true
	}
	if !now.IsZero() {
		if s, start, end, ok := relative(q, now, questionRules, v.Weekdays); ok {
			return s, start, end, true
		}
	}
	if s, start, end, ok := locate(q, vague); ok || now.IsZero() || !v.Recently {
		return s, start, end, ok
	}
	return relative(q, now, recentRules, true)
}

// relative finds the leftmost (then longest) time of q that rules name, resolved against now.
// Rules marked vague are read only with vagueWords.
func relative(q string, now time.Time, rules []questionRule, vagueWords bool) (s Span, start, end int, ok bool) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	start, end = -1, -1
	for _, r := range rules {
		if r.vague && !vagueWords {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(q, -1) {
			if r.skip != nil && r.skip(q, m[0]) {
				continue
			}
			if start >= 0 && (m[0] > start || m[0] == start && m[1] <= end) {
				break // matches come left to right: the rest of this rule's start later
			}
			groups := make([]string, len(m)/2)
			for i := range groups {
				if m[2*i] >= 0 {
					groups[i] = q[m[2*i]:m[2*i+1]]
				}
			}
			if found, valid := r.span(today, groups); valid {
				s, start, end = found, m[0], m[1]
			}
			break
		}
	}
	return s, start, end, start >= 0
}

type questionRule struct {
	re   *regexp.Regexp
	span func(today time.Time, groups []string) (Span, bool)
	skip func(text string, pos int) bool
	// vague: read only when the caller asks for it (LocateAtWith's Vague).
	vague bool
}

// oneDay is the day n days from today.
func oneDay(n int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, _ []string) (Span, bool) { return days1(today.AddDate(0, 0, n)), true }
}

func days1(d time.Time) Span { return Span{From: d, To: d.AddDate(0, 0, 1)} }

// wholePeriod is the calendar week, month or year n of them from today's.
func wholePeriod(n int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, g []string) (Span, bool) {
		from := shift(today, n, g[1], true)
		switch u := strings.ToLower(g[1]); {
		case strings.HasPrefix(u, "w"):
			return Span{From: from, To: from.AddDate(0, 0, 7)}, true
		case strings.HasPrefix(u, "m"):
			return Span{From: from, To: from.AddDate(0, 1, 0)}, true
		}
		return Span{From: from, To: from.AddDate(1, 0, 0)}, true
	}
}

// around is the window of one unit around the point n units from today ("two weeks ago": the
// seven days around the day 14 days back; "a day ago": that day).
func around(sign int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, g []string) (Span, bool) {
		n := count(g[1])
		if n <= 0 {
			return Span{}, false
		}
		at := shift(today, sign*n, g[2], false)
		if at.IsZero() {
			return Span{}, false
		}
		var half int // days either side
		switch u := strings.ToLower(g[2]); {
		case strings.HasPrefix(u, "d"), strings.HasPrefix(u, "tag"):
			return days1(at), true
		case strings.HasPrefix(u, "w"):
			half = 3
		case strings.HasPrefix(u, "m"):
			half = 15
		default:
			half = 182
		}
		return Span{From: at.AddDate(0, 0, -half), To: at.AddDate(0, 0, half+1)}, true
	}
}

// lastN is the days from n units back to today, today included ("in the last two weeks"); a
// unit without a number is one ("in the past week"), or a few (fewUnits) in the plural ("in den
// letzten Tagen").
func lastN(today time.Time, g []string) (Span, bool) {
	n := 1
	switch u := strings.ToLower(g[2]); {
	case g[1] != "":
		n = count(g[1])
	case strings.HasSuffix(u, "s") || strings.HasSuffix(u, "n") || u == "tage" || u == "monate" || u == "jahre":
		n = fewUnits
	}
	if n <= 0 {
		return Span{}, false
	}
	from := shift(today, -n, g[2], false)
	if from.IsZero() {
		return Span{}, false
	}
	return Span{From: from, To: today.AddDate(0, 0, 1)}, true
}

func dayOf(dir int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, g []string) (Span, bool) {
		d := weekday(today, g[1], dir)
		return days1(d), !d.IsZero()
	}
}

// weekend is a Saturday and its Sunday: dir -1 the last one that has ended, 1 the coming one
// (on a Saturday or Sunday the one under way), 0 the nearest one ("am Wochenende": Monday to
// Wednesday the one before, Thursday and Friday the coming one, on a weekend that weekend).
func weekend(dir int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, _ []string) (Span, bool) {
		wd := today.Weekday()
		var sat time.Time
		switch {
		case wd == time.Saturday:
			sat = today
		case wd == time.Sunday:
			sat = today.AddDate(0, 0, -1)
		case dir < 0 || dir == 0 && wd <= time.Wednesday:
			sat = weekday(today, "saturday", -1)
		default:
			sat = weekday(today, "saturday", 1)
		}
		if dir < 0 && (wd == time.Saturday || wd == time.Sunday) {
			sat = sat.AddDate(0, 0, -7) // "last weekend" on a Sunday is the one before
		}
		return Span{From: sat, To: sat.AddDate(0, 0, 2)}, true
	}
}

// inWeek is the day named by a weekday in a stated week ("on Friday last week", "letzte Woche
// am Freitag"): groups wd and week are the weekday and the word for the week (last, this,
// next, in either language).
func inWeek(wd, week int) func(time.Time, []string) (Span, bool) {
	return func(today time.Time, g []string) (Span, bool) {
		day, ok := weekdays[strings.ToLower(g[wd])]
		if !ok {
			return Span{}, false
		}
		monday := shift(today, weekDirection(g[week]), "week", true)
		return days1(monday.AddDate(0, 0, (int(day)+6)%7)), true
	}
}

// weekDirection is -1 for last (letzte, vergangene, vorige, previous, past), 1 for next
// (nächste, kommende, coming), 0 for this (diese).
func weekDirection(word string) int {
	switch w := strings.ToLower(word); {
	case strings.HasPrefix(w, "next"), strings.HasPrefix(w, "coming"), strings.HasPrefix(w, "nächst"),
		strings.HasPrefix(w, "naechst"), strings.HasPrefix(w, "kommend"):
		return 1
	case strings.HasPrefix(w, "this"), strings.HasPrefix(w, "dies"):
		return 0
	}
	return -1
}

// recentWindow is the time "recently", "lately", "kürzlich", "neulich", "vor kurzem" name:
// the month before today, today included. The words name a near past without a unit; past a
// month one says "a few months ago", "letzten Monat", "this year". A shorter window would
// also miss what the stored dates can say of it: a memory's text that names a week or a month
// ("this month", "letzte Woche") keeps the period's first day, up to a month before the day
// it was said.
func recentWindow(today time.Time, _ []string) (Span, bool) {
	return Span{From: today.AddDate(0, -recentMonths, 0), To: today.AddDate(0, 0, 1)}, true
}

// bareWeekday refuses a weekday with no last/next/this where the question is not in the past
// tense, or the weekday recurs ("every Friday", "jeden Montag"): "Wer hat am Montag Teamtag?"
// asks about a habit, "Was steht am Freitag an?" about a plan; only an event told of is on the
// most recent such day.
func bareWeekday(q string, pos int) bool {
	before := strings.ToLower(strings.TrimSpace(q[:pos+1]))
	for _, w := range []string{"every", "each", "jeden", "jedem", "immer"} {
		if strings.HasSuffix(before, " "+w) || before == w {
			return true
		}
	}
	return !pastTense(q)
}

const (
	// recentMonths is how far back "recently" reaches (recentWindow).
	recentMonths = 1
	// fewUnits is how many units "the last days" ("die letzten Wochen") reach back.
	fewUnits = 3
	// unitsRe: a unit of "in the last N units" (days, weeks, months, years; German too).
	unitsRe = `(days?|weeks?|months?|years?|tage[n]?|tag|wochen|woche|monaten?|monat|jahren?|jahr)`
	// weekendDE: das Wochenende in any case, with or without its article.
	weekendDE = `(?:wochenende[ns]?)`
	// dayPartRe: a German weekday's part of the day written as one word (Freitagabend).
	dayPartRe = `(?:morgen|vormittag|mittag|nachmittag|abend|nacht)?`
)

var questionRules = []questionRule{
	// Days.
	{re: b(`the day before yesterday`), span: oneDay(-2)},
	{re: b(`the day after tomorrow`), span: oneDay(2)},
	{re: b(`(?:yesterday|last night)`), span: oneDay(-1)},
	{re: b(`tomorrow`), span: oneDay(1)},
	{re: b(`(?:today|tonight|this morning|this afternoon|this evening)`), span: oneDay(0)},
	{re: b(`vorgestern`), span: oneDay(-2)},
	{re: b(`(?:übermorgen|uebermorgen)`), span: oneDay(2)},
	{re: b(`gestern`), span: oneDay(-1)},
	{re: regexp.MustCompile(`(?:^|[^\pL\d])(morgen)(?:[^\pL\d]|$)`), span: oneDay(1), skip: germanMorning},
	{re: b(`heute`), span: oneDay(0)},
	// N units ago, in N units.
	{re: b(countRe + `\s+` + unitRe + `\s+ago`), span: around(-1)},
	{re: b(`vor\s+` + countRe + `\s+` + unitRe), span: around(-1)},
	{re: b(`in\s+` + countRe + `\s+` + unitRe), span: around(1)},
	// In the last N units, these past units.
	{re: b(`(?:in|during|over|within)\s+the\s+(?:last|past)\s+` + countRe + `?\s*` + unitsRe), span: lastN},
	{re: b(`(?:in\s+den|während\s+der|waehrend\s+der)\s+` + lastDE + `\s+` + countRe + `?\s*` + unitsRe), span: lastN},
	// Last, next, this week, month, year.
	{re: b(`(?:last|previous|past)\s+(week|month|year)`), span: wholePeriod(-1)},
	{re: b(`next\s+(week|month|year)`), span: wholePeriod(1)},
	{re: b(`this\s+(week|month|year)`), span: wholePeriod(0)},
	{re: b(lastDE + `\s+(woche|monat|jahr)`), span: wholePeriod(-1)},
	{re: b(nextDE + `\s+(woche|monat|jahr)`), span: wholePeriod(1)},
	{re: b(thisDE + `\s+(woche|monat|jahr)`), span: wholePeriod(0)},
	// A weekday in a stated week: the day in that week.
	{re: b(`(?:on\s+)?(?:the\s+)?` + weekdayRe + dayPartRe + `\s+(?:of\s+)?(?:the\s+)?(last|previous|past|this|next|coming)\s+week`), span: inWeek(1, 2)},
	{re: b(`(last|previous|past|this|next|coming)\s+week,?\s+(?:on\s+)?(?:the\s+)?` + weekdayRe), span: inWeek(2, 1)},
	{re: b(`(?:am\s+)?` + weekdayRe + dayPartRe + `\s+(?:der\s+)?(` + lastDE + `|` + nextDE + `|` + thisDE + `)\s+woche`), span: inWeek(1, 2)},
	{re: b(`(` + lastDE + `|` + nextDE + `|` + thisDE + `)\s+woche,?\s+(?:am\s+)?` + weekdayRe), span: inWeek(2, 1)},
	// Last, next, this weekday.
	{re: b(`(?:last|past|this past)\s+` + weekdayRe), span: dayOf(-1)},
	{re: b(`(?:next|this coming|coming)\s+` + weekdayRe), span: dayOf(1)},
	{re: b(`this\s+` + weekdayRe), span: dayOf(0)},
	{re: b(lastDE + `\s+` + weekdayRe), span: dayOf(-1)},
	{re: b(nextDE + `\s+` + weekdayRe), span: dayOf(1)},
	{re: b(thisDE + `\s+` + weekdayRe), span: dayOf(0)},
	// Weekends.
	{re: b(`(?:last|past|previous)\s+weekend`), span: weekend(-1)},
	{re: b(`(?:next|this coming|coming)\s+weekend`), span: weekend(1)},
	{re: b(`(?:this|the)\s+weekend`), span: weekend(0)},
	{re: b(lastDE + `\s+` + weekendDE), span: weekend(-1)},
	{re: b(nextDE + `\s+` + weekendDE), span: weekend(1)},
	{re: b(`(?:` + thisDE + `|am|übers|uebers|über\s+das|ueber\s+das|an\s+dem|dem|das)\s+` + weekendDE), span: weekend(0)},
	// A bare weekday in a question in the past tense: the last one before today ("What did
	// Caroline do on Friday?", "Was hat Herr Yilmaz am Montag gesagt?").
	{re: b(`(?:on\s+|am\s+)?` + weekdayRe + dayPartRe), span: dayOf(-1), skip: bareWeekday, vague: true},
}

// recentRules name the near past without a unit (recentWindow); LocateAt reads them last.
var recentRules = []questionRule{
	{re: b(`(?:recently|lately|of late|recent|the other day|not long ago|kürzlich|kuerzlich|neulich|letztens|unlängst|unlaengst|jüngst|juengst|vor\s+kurzem|in\s+letzter\s+zeit|in\s+jüngster\s+zeit|in\s+juengster\s+zeit)`), span: recentWindow, vague: true},
}

// pastTense tells whether a question is told in the past tense: English "did", "was", a
// regular or common irregular past form; German Präteritum ("war", "hatte", "wurde", "sagte")
// or Perfekt (a form of haben or sein with a participle: "hat … gesagt", "ist … passiert").
// Words that read as past forms but name a plan or a state ("planned", "geplant",
// "vorgesehen") and a verb after "zu" do not count.
func pastTense(q string) bool {
	if !germanWords.MatchString(q) { // English: "Was" is also German for "what"
		if pastEN.MatchString(q) {
			return true
		}
		for _, m := range regularPastEN.FindAllStringSubmatch(q, -1) {
			if !notPast[strings.ToLower(m[1])] {
				return true
			}
		}
		return false
	}
	if pastDE.MatchString(q) {
		return true
	}
	if !auxiliaryDE.MatchString(q) {
		return false
	}
	for _, m := range participleDE.FindAllStringSubmatchIndex(q, -1) {
		word := q[m[2]:m[3]]
		if notPast[word] || strings.HasSuffix(strings.TrimSpace(q[:m[2]]), " zu") {
			continue
		}
		return true
	}
	return false
}

var (
	// germanWords: function words of a German question that English does not write.
	germanWords = regexp.MustCompile(`(?i)(?:^|[^\pL])(wer|wie|wann|warum|welche[mnrs]?|ist|sind|hat|haben|hast|der|die|das|den|dem|des|im|und|nicht|mit|von|für|fuer|auf|ich|wir|gibt|gab|war|waren|steht|gestern|heute)(?:[^\pL]|$)`)
	pastEN      = regexp.MustCompile(`(?i)(?:^|[^\pL])(did|didn't|was|wasn't|were|weren't|had|hadn't|went|came|saw|said|told|made|bought|got|gave|took|met|left|wrote|sent|spent|found|thought|brought|ate|drank|drove|ran|began|felt|heard|kept|lost|paid|sold|won|forgot|chose|built|taught|caught|threw|flew|swam|sang|spoke|broke|fell|wore|rode|stole|hid|shook)(?:[^\pL]|$)`)
	// regularPastEN: a word ending in -ed ("happened", "called", "painted").
	regularPastEN = regexp.MustCompile(`(?i)(?:^|[^\pL])(\pL{2,}ed)(?:[^\pL]|$)`)
	pastDE        = regexp.MustCompile(`(?i)(?:^|[^\pL])(war|waren|warst|wart|hatte|hatten|hattest|wurde|wurden|gab|kam|kamen|ging|gingen|sagte|sagten|wollte|wollten|sollte|sollten|musste|mussten|konnte|konnten|durfte|meinte|fragte|fragten|rief|schrieb|schickte|erzählte|erzaehlte|machte|machten|passierte|geschah|lief|traf|trafen|fand|bekam|nahm|brachte)(?:[^\pL]|$)`)
	auxiliaryDE   = regexp.MustCompile(`(?i)(?:^|[^\pL])(hat|haben|hast|habe|habt|ist|sind|bin|bist|seid)(?:[^\pL]|$)`)
	// participleDE: a lowercase German participle: ge- inside (gesagt, angerufen, abgesagt),
	// -iert (notiert), or an inseparable prefix (bestellt, entschieden, verschickt, erzählt).
	participleDE = regexp.MustCompile(`(?:^|[^\pL])([a-zäöüß]*ge[a-zäöüß]{2,}(?:t|en)|[a-zäöüß]{3,}iert|(?:be|emp|ent|er|ver|zer|miss)[a-zäöüß]{2,}(?:t|en))(?:[^\pL]|$)`)
	// notPast: words of those shapes that are no past form, or name a plan or a state.
	notPast = map[string]bool{
		"need": true, "feed": true, "seed": true, "speed": true, "indeed": true, "proceed": true,
		"succeed": true, "exceed": true, "breed": true, "bleed": true, "shed": true, "red": true, "bed": true,
		"planned": true, "scheduled": true, "supposed": true, "expected": true, "booked": true, "interested": true,
		"gegen": true, "geplant": true, "vorgesehen": true, "angesetzt": true, "terminiert": true, "gelten": true,
		"gehören": true, "gefallen": true, "genießen": true, "geschlossen": true, "geöffnet": true, "geeignet": true,
		"erlaubt": true, "verboten": true, "vertreten": true, "besetzt": true, "bekannt": true, "beliebt": true,
		"ersten": true, "besten": true, "beiden": true, "verschiedenen": true, "bestimmten": true, "folgenden": true,
	}
)
