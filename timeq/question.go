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
// Sunday.

// ParseAt is Parse with the relative times a question names resolved against now, the time of
// asking (on the calendar of now's own zone). A zero now reads written dates only (Parse).
func ParseAt(q string, now time.Time) (Span, bool) {
	s, _, _, ok := LocateAt(q, now)
	return s, ok
}

// LocateAt is ParseAt, and where in q the time is written: q[start:end]. A written day, or a
// month of a year, comes first ("last weekend before April 10, 2023" names 10 April); then a
// relative time, the leftmost; then a month without a year and a bare year.
func LocateAt(q string, now time.Time) (s Span, start, end int, ok bool) {
	if s, start, end, ok := locate(q, exact); ok {
		return s, start, end, true
	}
	if !now.IsZero() {
		if s, start, end, ok := relative(q, now); ok {
			return s, start, end, true
		}
	}
	return locate(q, vague)
}

// relative finds the leftmost (then longest) relative time of q, resolved against now.
func relative(q string, now time.Time) (s Span, start, end int, ok bool) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	start, end = -1, -1
	for _, r := range questionRules {
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

const (
	// fewUnits is how many units "the last days" ("die letzten Wochen") reach back.
	fewUnits = 3
	// unitsRe: a unit of "in the last N units" (days, weeks, months, years; German too).
	unitsRe = `(days?|weeks?|months?|years?|tage[n]?|tag|wochen|woche|monaten?|monat|jahren?|jahr)`
	// weekendDE: das Wochenende in any case, with or without its article.
	weekendDE = `(?:wochenende[ns]?)`
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
}
