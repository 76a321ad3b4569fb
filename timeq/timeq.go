// Package timeq finds the time a question asks about ("on 13 October, 2023", "in May 2023",
// "im März 2026", "14.03.2026", "in 2023") and scores how well a memory's time matches it, and
// resolves the times a stored text names ("yesterday", "letzten Freitag", "in two weeks")
// against the text's own time (Dates). It is pure: no clock (a month without a year matches
// that month in any year; relative times need the time they were said).
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
	day := daySpan
	if m := dayMonthYear.FindStringSubmatch(q); m != nil {
		d, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[3])
		if s, ok := day(y, int(months[strings.ToLower(m[2])]), d); ok {
			return s, true
		}
	}
	if m := monthDayYear.FindStringSubmatch(q); m != nil {
		d, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		if s, ok := day(y, int(months[strings.ToLower(m[1])]), d); ok {
			return s, true
		}
	}
	if m := isoDate.FindStringSubmatch(q); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if s, ok := day(y, mo, d); ok {
			return s, true
		}
	}
	if m := germanDate.FindStringSubmatch(q); m != nil {
		d, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		if s, ok := day(y, mo, d); ok {
			return s, true
		}
	}
	if m := monthYear.FindStringSubmatch(q); m != nil {
		y, _ := strconv.Atoi(m[2])
		from := time.Date(y, months[strings.ToLower(m[1])], 1, 0, 0, 0, 0, time.UTC)
		return Span{From: from, To: from.AddDate(0, 1, 0)}, true
	}
	if m := monthOnly.FindStringSubmatch(q); m != nil {
		return Span{Month: months[strings.ToLower(m[1])]}, true
	}
	if m := year.FindStringSubmatch(q); m != nil {
		y, _ := strconv.Atoi(m[1])
		from := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return Span{From: from, To: from.AddDate(1, 0, 0)}, true
	}
	return Span{}, false
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
