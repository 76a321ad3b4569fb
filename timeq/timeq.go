// Package timeq finds the time a question asks about ("on 13 October, 2023", "in May 2023",
// "im März 2026", "14.03.2026", "in 2023") and scores how well a memory's time matches it, and
// resolves the times a stored text names ("yesterday", "letzten Freitag", "in two weeks")
// against the text's own time (Dates), and the times a question names relative to when it is
// asked ("last week", "gestern") against the time of asking (LocateAt). It is pure: no clock (a
// month without a year matches that month in any year; relative times need the time they were
// said or asked, passed in).
package timeq

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Span is the time a question names: [From, To), or a month in any year (Month set, From and
// To zero).
type Span struct {
	From, To time.Time
	Month    time.Month // only for a month without a year
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
	"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "mai": 5, "juni": 6,
	"juli": 7, "oktober": 10, "dezember": 12,
}

const monthRe = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|januar|jänner|februar|märz|maerz|mai|juni|juli|oktober|dezember)\.?`

var (
	// 13 October, 2023 · 13th October 2023 · 14. März 2026
	dayMonthYear = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th|\.)?\s+` + monthRe + `,?\s+(\d{4})\b`)
	// October 13, 2023 · Oct 13th 2023
	monthDayYear = regexp.MustCompile(`(?i)\b` + monthRe + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b`)
	// 2023-10-13 · 14.03.2026
	isoDate    = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	germanDate = regexp.MustCompile(`\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b`)
	// May 2023 · März 2026
	monthYear = regexp.MustCompile(`(?i)\b` + monthRe + `,?\s+(\d{4})\b`)
	// in May · im März (no year)
	monthOnly = regexp.MustCompile(`(?i)\b(?:in|im|during|since|seit|bis|until)\s+` + monthRe + `\b`)
	year      = regexp.MustCompile(`\b(19\d\d|20\d\d)\b`)
)

// Parse returns the first time the question names, most specific form first.
func Parse(q string) (Span, bool) {
	s, _, _, ok := Locate(q)
	return s, ok
}

// Locate is Parse, and where in q the time is written: q[start:end].
func Locate(q string) (s Span, start, end int, ok bool) {
	if s, start, end, ok := locate(q, exact); ok {
		return s, start, end, true
	}
	return locate(q, vague)
}

// Which written forms locate reads: a day or a month of a year (exact), or a month in any
// year and a bare year (vague). A relative time comes between them (LocateAt).
const (
	exact = iota
	vague
)

// locate finds the first time of the forms asked for, most specific form first.
func locate(q string, forms int) (s Span, start, end int, ok bool) {
	group := func(m []int, i int) string { return q[m[2*i]:m[2*i+1]] }
	num := func(m []int, i int) int {
		n, _ := strconv.Atoi(group(m, i))
		return n
	}
	month := func(m []int, i int) int { return int(months[strings.ToLower(group(m, i))]) }
	if forms == vague {
		if m := monthOnly.FindStringSubmatchIndex(q); m != nil {
			return Span{Month: time.Month(month(m, 1))}, m[0], m[1], true
		}
		if m := year.FindStringSubmatchIndex(q); m != nil {
			from := time.Date(num(m, 1), 1, 1, 0, 0, 0, 0, time.UTC)
			return Span{From: from, To: from.AddDate(1, 0, 0)}, m[0], m[1], true
		}
		return Span{}, 0, 0, false
	}
	if m := dayMonthYear.FindStringSubmatchIndex(q); m != nil {
		if s, ok := daySpan(num(m, 3), month(m, 2), num(m, 1)); ok {
			return s, m[0], m[1], true
		}
	}
	if m := monthDayYear.FindStringSubmatchIndex(q); m != nil {
		if s, ok := daySpan(num(m, 3), month(m, 1), num(m, 2)); ok {
			return s, m[0], m[1], true
		}
	}
	if m := isoDate.FindStringSubmatchIndex(q); m != nil {
		if s, ok := daySpan(num(m, 1), num(m, 2), num(m, 3)); ok {
			return s, m[0], m[1], true
		}
	}
	if m := germanDate.FindStringSubmatchIndex(q); m != nil {
		if s, ok := daySpan(num(m, 3), num(m, 2), num(m, 1)); ok {
			return s, m[0], m[1], true
		}
	}
	if m := monthYear.FindStringSubmatchIndex(q); m != nil {
		from := time.Date(num(m, 2), time.Month(month(m, 1)), 1, 0, 0, 0, 0, time.UTC)
		return Span{From: from, To: from.AddDate(0, 1, 0)}, m[0], m[1], true
	}
	return Span{}, 0, 0, false
}

// Match scores a memory's time t against s: 1 inside the span, falling off outside it with a
// half-life of Slack (a memory stored a few days after the event it tells of still matches
// well), 0 for a zero t.
func (s Span) Match(t time.Time, slack time.Duration) float64 {
	if t.IsZero() {
		return 0
	}
	t = t.UTC()
	if s.Month != 0 {
		if t.Month() == s.Month {
			return 1
		}
		from := time.Date(t.Year(), s.Month, 1, 0, 0, 0, 0, time.UTC)
		// The nearest occurrence of the month, this year or the next/previous.
		best := math.Inf(1)
		for _, f := range []time.Time{from.AddDate(-1, 0, 0), from, from.AddDate(1, 0, 0)} {
			best = min(best, distance(t, f, f.AddDate(0, 1, 0)).Hours())
		}
		return math.Pow(0.5, best/slack.Hours())
	}
	return math.Pow(0.5, distance(t, s.From, s.To).Hours()/slack.Hours())
}

// daySpan is the day y-m-d, when it exists.
func daySpan(y, m, d int) (Span, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return Span{}, false
	}
	from := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if from.Day() != d {
		return Span{}, false
	}
	return Span{From: from, To: from.AddDate(0, 0, 1)}, true
}

func distance(t, from, to time.Time) time.Duration {
	switch {
	case t.Before(from):
		return from.Sub(t)
	case !t.Before(to):
		return t.Sub(to) + time.Nanosecond
	}
	return 0
}
