package timeq

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A stored text names times relative to when it was said ("yesterday", "last Friday", "in two
// weeks", "letzten Freitag", "nächsten Monat", "übermorgen"); Dates resolves them against the
// text's own time (a memory's occurred_at), so a question about the date finds the text that
// only said "yesterday". Absolute dates the text names are kept too. A period (a week, a month,
// a year) is represented by its first day; a span of a question matches a date inside it fully
// (Span.Match).

// Dates returns the days the text names, resolved against at (the text's own time) on the
// calendar of at's own zone — "gestern" said at 21:30 -07:00 on 8 May is 7 May, though it was
// 9 May in UTC —, each day at midnight UTC, in the order the text names them, without repeats,
// at most limit of them.
func Dates(text string, at time.Time, limit int) []time.Time {
	if limit <= 0 || at.IsZero() {
		return nil
	}
	today := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	var all []found
	add := func(pos int, d time.Time) {
		if !d.IsZero() && d.Year() >= 1 && d.Year() <= 9999 {
			all = append(all, found{pos, d})
		}
	}
	for _, r := range relativeRules {
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			groups := make([]string, len(m)/2)
			for i := range groups {
				if m[2*i] >= 0 {
					groups[i] = text[m[2*i]:m[2*i+1]]
				}
			}
			if r.skip != nil && r.skip(text, m[0]) {
				continue
			}
			add(m[0], r.resolve(today, groups))
		}
	}
	for _, f := range absoluteDates(text, today) {
		add(f.pos, f.day)
	}
	slices.SortStableFunc(all, func(a, b found) int { return a.pos - b.pos })
	out := make([]time.Time, 0, min(len(all), limit))
	for _, f := range all {
		if len(out) == limit {
			break
		}
		if !slices.ContainsFunc(out, f.day.Equal) {
			out = append(out, f.day)
		}
	}
	return out
}

// AsksWhen tells whether a question asks for a time ("When did …", "What date …", "How long
// ago …", "Wann …", "Seit wann …", "An welchem Tag …"): the answer is then likely in a text
// that states one.
func AsksWhen(q string) bool { return asksWhen.MatchString(q) }

var asksWhen = regexp.MustCompile(`(?i)(^|[^\pL])(when|what date|which date|what day|which day|what year|which year|what month|which month|how long ago|wann|welche[mns]? (datum|tag|jahr|monat|woche)|an welchem|wie lange ist es her)([^\pL]|$)`)

// found is a day the text names, at byte pos.
type found struct {
	pos int
	day time.Time
}

type relativeRule struct {
	re      *regexp.Regexp
	resolve func(today time.Time, groups []string) time.Time
	// skip refuses a match at pos (a word that reads as a time only in some contexts).
	skip func(text string, pos int) bool
}

var weekdays = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday,
	"friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
	"montag": time.Monday, "dienstag": time.Tuesday, "mittwoch": time.Wednesday, "donnerstag": time.Thursday,
	"freitag": time.Friday, "samstag": time.Saturday, "sonnabend": time.Saturday, "sonntag": time.Sunday,
}

var numbers = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
	"ein": 1, "eine": 1, "einem": 1, "einer": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5,
	"fuenf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
	"zwoelf": 12,
}

const (
	weekdayRe = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag)`
	countRe   = `(\d{1,3}|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|einem|einer|eine|ein|zwei|drei|vier|fünf|fuenf|sechs|sieben|acht|neun|zehn|elf|zwölf|zwoelf)`
	// unitRe: English and German units, singular and plural (German dative plural too).
	unitRe = `(days?|weeks?|months?|years?|tag|tage|tagen|woche|wochen|monat|monate|monaten|jahr|jahre|jahren)`
	// The German words for last, next and this in any inflection.
	lastDE = `(?:letzte[nrs]?|vergangene[nrs]?|vorige[nrs]?)`
	nextDE = `(?:nächste[nrs]?|naechste[nrs]?|kommende[nrs]?)`
	thisDE = `(?:diese[nrs]?)`
)

// b wraps a pattern in word boundaries that know umlauts (Go's \b is ASCII only).
func b(p string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^\pL\d])` + p + `(?:[^\pL\d]|$)`)
}

func count(s string) int {
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return numbers[s]
}

// shift moves today by n units of unit (a week counts 7 days) and returns the first day of
// the period the unit names when whole is set (the Monday, the 1st, 1 January).
func shift(today time.Time, n int, unit string, whole bool) time.Time {
	switch u := strings.ToLower(unit); {
	case strings.HasPrefix(u, "d"), strings.HasPrefix(u, "tag"):
		return today.AddDate(0, 0, n)
	case strings.HasPrefix(u, "w"):
		d := today.AddDate(0, 0, 7*n)
		if whole {
			d = d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		}
		return d
	case strings.HasPrefix(u, "m"):
		if whole {
			return time.Date(today.Year(), today.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
		}
		return today.AddDate(0, n, 0)
	case strings.HasPrefix(u, "y"), strings.HasPrefix(u, "j"):
		if whole {
			return time.Date(today.Year()+n, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return today.AddDate(n, 0, 0)
	}
	return time.Time{}
}

// weekday returns the day named wd relative to today: dir -1 the last one before today, +1 the
// next one after today, 0 the one in today's week (Monday to Sunday).
func weekday(today time.Time, name string, dir int) time.Time {
	wd, ok := weekdays[strings.ToLower(name)]
	if !ok {
		return time.Time{}
	}
	switch dir {
	case -1:
		back := (int(today.Weekday()) - int(wd) + 7) % 7
		if back == 0 {
			back = 7
		}
		return today.AddDate(0, 0, -back)
	case 1:
		ahead := (int(wd) - int(today.Weekday()) + 7) % 7
		if ahead == 0 {
			ahead = 7
		}
		return today.AddDate(0, 0, ahead)
	}
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, (int(wd)+6)%7)
}

func days(n int) func(time.Time, []string) time.Time {
	return func(today time.Time, _ []string) time.Time { return today.AddDate(0, 0, n) }
}

func period(n int) func(time.Time, []string) time.Time {
	return func(today time.Time, g []string) time.Time { return shift(today, n, g[1], true) }
}

func weekdayDir(dir int) func(time.Time, []string) time.Time {
	return func(today time.Time, g []string) time.Time { return weekday(today, g[1], dir) }
}

// germanMorning: "morgen" is tomorrow only as a lowercase adverb not after "heute", "gestern",
// "am", "guten", "jeden" ("heute Morgen" is this morning; "Morgen" a noun).
func germanMorning(text string, pos int) bool {
	i := strings.Index(text[pos:], "morgen")
	if i < 0 {
		return true // capitalised: the noun
	}
	before := strings.ToLower(strings.TrimSpace(text[:pos+i]))
	for _, w := range []string{"heute", "gestern", "am", "guten", "jeden", "vor", "über", "ueber"} {
		if strings.HasSuffix(before, " "+w) || before == w {
			return true
		}
	}
	return false
}

var relativeRules = []relativeRule{
	// English days.
	{re: b(`(the day before yesterday)`), resolve: days(-2)},
	{re: b(`(the day after tomorrow)`), resolve: days(2)},
	{re: b(`(yesterday|last night)`), resolve: days(-1), skip: func(text string, pos int) bool {
		return strings.HasSuffix(strings.ToLower(strings.TrimSpace(text[:pos+1])), "the day before")
	}},
	{re: b(`(tomorrow)`), resolve: days(1), skip: func(text string, pos int) bool {
		return strings.HasSuffix(strings.ToLower(strings.TrimSpace(text[:pos+1])), "the day after")
	}},
	{re: b(`(today|tonight|this morning|this afternoon|this evening)`), resolve: days(0)},
	// German days.
	{re: b(`(vorgestern)`), resolve: days(-2)},
	{re: b(`(übermorgen|uebermorgen)`), resolve: days(2)},
	{re: b(`(gestern)`), resolve: days(-1)},
	{re: regexp.MustCompile(`(?:^|[^\pL\d])(morgen)(?:[^\pL\d]|$)`), resolve: days(1), skip: germanMorning},
	{re: b(`(heute)`), resolve: days(0)},
	// N units ago / in N units.
	{re: b(countRe + `\s+` + unitRe + `\s+ago`), resolve: func(today time.Time, g []string) time.Time {
		return shift(today, -count(g[1]), g[2], false)
	}},
	{re: b(`vor\s+` + countRe + `\s+` + unitRe), resolve: func(today time.Time, g []string) time.Time {
		return shift(today, -count(g[1]), g[2], false)
	}},
	{re: b(`in\s+` + countRe + `\s+` + unitRe), resolve: func(today time.Time, g []string) time.Time {
		return shift(today, count(g[1]), g[2], false)
	}},
	// Last / next / this week, month, year.
	{re: b(`(?:last|previous|past)\s+(week|month|year)`), resolve: period(-1)},
	{re: b(`next\s+(week|month|year)`), resolve: period(1)},
	{re: b(`this\s+(week|month|year)`), resolve: period(0)},
	{re: b(lastDE + `\s+(woche|monat|jahr)`), resolve: period(-1)},
	{re: b(nextDE + `\s+(woche|monat|jahr)`), resolve: period(1)},
	{re: b(thisDE + `\s+(woche|monat|jahr)`), resolve: period(0)},
	// Last / next / this weekday, weekend.
	{re: b(`(?:last|past|this past)\s+` + weekdayRe), resolve: weekdayDir(-1)},
	{re: b(`(?:next|this coming|coming)\s+` + weekdayRe), resolve: weekdayDir(1)},
	{re: b(`this\s+` + weekdayRe), resolve: weekdayDir(0)},
	{re: b(lastDE + `\s+` + weekdayRe), resolve: weekdayDir(-1)},
	{re: b(nextDE + `\s+` + weekdayRe), resolve: weekdayDir(1)},
	{re: b(thisDE + `\s+` + weekdayRe), resolve: weekdayDir(0)},
	{re: b(`(?:last|past)\s+(weekend)`), resolve: func(today time.Time, _ []string) time.Time { return weekday(today, "saturday", -1) }},
	{re: b(`(?:next|this)\s+(weekend)`), resolve: func(today time.Time, _ []string) time.Time { return weekday(today, "saturday", 1) }},
	{re: b(lastDE + `\s+(wochenende)`), resolve: func(today time.Time, _ []string) time.Time { return weekday(today, "saturday", -1) }},
	{re: b(`(?:` + nextDE + `|` + thisDE + `)\s+(wochenende)`), resolve: func(today time.Time, _ []string) time.Time { return weekday(today, "saturday", 1) }},
}

// absoluteDates returns the dates the text writes out (the forms Parse reads; a month or a
// year as its first day). A day or a month without a year ("am 31. März", "on May 7", "im
// Oktober", "by the end of June") is its nearest occurrence to today, the text's own day; a
// weekday after "am"/"on" ("am Montag") the next one after it.
func absoluteDates(text string, today time.Time) []found {
	var out []found
	pos := 0 // where the match being read starts
	taken := make([]bool, len(text)+1)
	take := func(loc []int) bool {
		for i := loc[0]; i < loc[1]; i++ {
			if taken[i] {
				return false
			}
		}
		for i := loc[0]; i < loc[1]; i++ {
			taken[i] = true
		}
		return true
	}
	day := func(y, m, d int) {
		if s, ok := daySpan(y, m, d); ok {
			out = append(out, found{pos, s.From})
		}
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	each := func(re *regexp.Regexp, fn func(g []string)) {
		for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
			if !take(loc[:2]) {
				continue
			}
			pos = loc[0]
			g := make([]string, len(loc)/2)
			for i := range g {
				if loc[2*i] >= 0 {
					g[i] = text[loc[2*i]:loc[2*i+1]]
				}
			}
			fn(g)
		}
	}
	each(dayMonthYear, func(g []string) { day(atoi(g[3]), int(months[strings.ToLower(g[2])]), atoi(g[1])) })
	each(monthDayYear, func(g []string) { day(atoi(g[3]), int(months[strings.ToLower(g[1])]), atoi(g[2])) })
	each(isoDate, func(g []string) { day(atoi(g[1]), atoi(g[2]), atoi(g[3])) })
	each(germanDate, func(g []string) { day(atoi(g[3]), atoi(g[2]), atoi(g[1])) })
	each(monthYear, func(g []string) { day(atoi(g[2]), int(months[strings.ToLower(g[1])]), 1) })
	near := func(m, d int) {
		if t := nearest(today, m, d); !t.IsZero() {
			out = append(out, found{pos, t})
		}
	}
	each(dayMonth, func(g []string) { near(int(months[strings.ToLower(g[2])]), atoi(g[1])) })
	each(monthDay, func(g []string) { near(int(months[strings.ToLower(g[1])]), atoi(g[2])) })
	each(numericDayMonth, func(g []string) { near(atoi(g[2]), atoi(g[1])) })
	each(inMonth, func(g []string) { near(int(months[strings.ToLower(g[1])]), 1) })
	each(onWeekday, func(g []string) { out = append(out, found{pos, weekday(today, g[1], 1)}) })
	each(year, func(g []string) { day(atoi(g[1]), 1, 1) })
	return out
}

var (
	// 31. März · 7 May · 7th of May (no year follows: the forms with a year are read first)
	dayMonth = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th|\.)?\s+(?:of\s+)?` + monthRe + `\b`)
	// May 7 · May 7th
	monthDay = regexp.MustCompile(`(?i)\b` + monthRe + `\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	// 30.06. (a German day and month without a year)
	numericDayMonth = regexp.MustCompile(`\b(\d{1,2})\.(\d{1,2})\.(?:\s|$|[,;)])`)
	// im Mai · in October · Ende Juni · für Oktober · bis Juli · end of June
	inMonth = regexp.MustCompile(`(?i)\b(?:in|im|ende|anfang|mitte|für|fuer|bis|ab|seit|end of|early|late|until|since|by)\s+` + monthRe + `\b`)
	// am Montag · on Monday
	onWeekday = regexp.MustCompile(`(?i)\b(?:am|on)\s+` + weekdayRe + `\b`)
)

// nearest returns the day d of month m nearest to today (this year's, last year's or next
// year's); zero when there is no such day.
func nearest(today time.Time, m, d int) time.Time {
	var best time.Time
	for _, y := range []int{today.Year() - 1, today.Year(), today.Year() + 1} {
		s, ok := daySpan(y, m, d)
		if !ok {
			continue
		}
		if best.IsZero() || absDuration(s.From.Sub(today)) < absDuration(best.Sub(today)) {
			best = s.From
		}
	}
	return best
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
