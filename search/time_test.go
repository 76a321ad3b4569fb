package search

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind/rank"
)

func TestTimeSignals(t *testing.T) {
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // "yesterday" then is the 7th
	mems := []MemoryTime{
		{Memory: "told", ValidFrom: &said, Dates: []time.Time{time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC)}},
		{Memory: "plain", ValidFrom: &said},
	}
	w := Default().Weights
	var sig rank.Signals
	TimeSignals("What did Caroline do on 7 May 2023?", time.Time{}, mems, w, &sig)
	if sig.Time["told"] != 1 || sig.Time["plain"] >= 1 || sig.Time["plain"] <= 0 || sig.TimeWeight != w.Time || sig.Dated != nil {
		t.Fatalf("a named day: %+v", sig)
	}
	w.TextDates = false
	sig = rank.Signals{}
	TimeSignals("What did Caroline do on 7 May 2023?", time.Time{}, mems, w, &sig)
	if sig.Time["told"] != sig.Time["plain"] {
		t.Fatalf("without the text's days both match by their own time only: %+v", sig.Time)
	}
	sig = rank.Signals{}
	TimeSignals("When did Caroline go to the support group?", time.Time{}, mems, Default().Weights, &sig)
	if sig.Dated["told"] != 1 || sig.Dated["plain"] != 0 || sig.DatedWeight != Default().Weights.AsksWhen || sig.Time != nil {
		t.Fatalf("a when-question: %+v", sig)
	}
	sig = rank.Signals{}
	TimeSignals("What did Caroline research?", time.Time{}, mems, Default().Weights, &sig)
	if sig.Time != nil || sig.Dated != nil {
		t.Fatalf("a question without time: %+v", sig)
	}
}

// A relative time in the question is resolved against the time of asking and matched as a
// written one: "yesterday" asked on 8 May 2023 is 7 May, the day the turn said "yesterday" about.
func TestTimeSignalsRelativeToTheTimeOfAsking(t *testing.T) {
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	weekBefore, later := said.AddDate(0, 0, -7), said.AddDate(0, 0, 5)
	mems := []MemoryTime{
		{Memory: "told", ValidFrom: &said, Dates: []time.Time{time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC)}},
		{Memory: "older", ValidFrom: &weekBefore},
		{Memory: "later", ValidFrom: &later},
	}
	asked := said.Add(2 * time.Hour)
	w := Default().Weights
	var sig rank.Signals
	TimeSignals("What did Caroline do yesterday?", asked, mems, w, &sig)
	if sig.Time["told"] != 1 || sig.Time["older"] >= 0.5 || sig.TimeWeight != w.Time || sig.Dated != nil {
		t.Fatalf("yesterday: %+v", sig)
	}
	sig = rank.Signals{}
	TimeSignals("Was hat Caroline letzte Woche gemacht?", asked, mems, w, &sig)
	if sig.Time["older"] != 1 || sig.Time["told"] != 1 || sig.Time["later"] >= 0.5 {
		t.Fatalf("letzte Woche (1 to 7 May; 8 May 2023 is a Monday): %+v", sig.Time)
	}
	w.RelativeDates = false
	sig = rank.Signals{}
	TimeSignals("What did Caroline do yesterday?", asked, mems, w, &sig)
	if sig.Time != nil {
		t.Fatalf("without RelativeDates the question names no time: %+v", sig)
	}
	// Without a time of asking nothing relative is resolved.
	sig = rank.Signals{}
	TimeSignals("What did Caroline do yesterday?", time.Time{}, mems, Default().Weights, &sig)
	if sig.Time != nil {
		t.Fatalf("without a time of asking: %+v", sig)
	}
}

// Recall reads of the candidate memories only what TimeReads names: TimeSignals must come out
// the same without the rest.
func TestTimeReadsCoverTimeSignals(t *testing.T) {
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	full := []MemoryTime{
		{Memory: "told", ValidFrom: &said, Dates: []time.Time{time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC)}},
		{Memory: "plain", ValidFrom: &said},
	}
	noText := Default().Weights
	noText.TextDates = false
	cases := []struct {
		query           string
		w               Weights
		validFrom, days bool
	}{
		{"What did Caroline do on 7 May 2023?", Default().Weights, true, true},
		{"What did Caroline do on 7 May 2023?", noText, true, false},
		{"When did Caroline go to the support group?", Default().Weights, false, true},
		{"Wann war Caroline in der Selbsthilfegruppe?", Default().Weights, false, true},
		{"What did Caroline research?", Default().Weights, false, false},
		{"What did Caroline do yesterday?", Default().Weights, true, true},
		{"Was hat Caroline letzte Woche gemacht?", noText, true, false},
	}
	asked := said.Add(time.Hour)
	for _, c := range cases {
		validFrom, days := TimeReads(c.query, asked, c.w)
		if validFrom != c.validFrom || days != c.days {
			t.Errorf("%q: TimeReads = %v, %v, want %v, %v", c.query, validFrom, days, c.validFrom, c.days)
		}
		read := make([]MemoryTime, len(full))
		for i, m := range full {
			read[i].Memory = m.Memory
			if validFrom {
				read[i].ValidFrom = m.ValidFrom
			}
			if days {
				read[i].Dates = m.Dates
			}
		}
		var want, got rank.Signals
		TimeSignals(c.query, asked, full, c.w, &want)
		TimeSignals(c.query, asked, read, c.w, &got)
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%q: with what TimeReads names %+v, with everything %+v", c.query, got, want)
		}
	}
}

func TestWithoutTime(t *testing.T) {
	asked := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC)
	w := Default().Weights
	if got := WithoutTime("Was hat Murat letzte Woche notiert?", asked, w); strings.Contains(got, "Woche") || !strings.Contains(got, "Murat") || !strings.Contains(got, "notiert") {
		t.Errorf("relative: %q", got)
	}
	if got := WithoutTime("What did Maria do on 10 April, 2023?", asked, w); strings.Contains(got, "2023") || !strings.Contains(got, "Maria") {
		t.Errorf("written: %q", got)
	}
	w.RelativeDates = false
	if got := WithoutTime("Was hat Murat letzte Woche notiert?", asked, w); got != "Was hat Murat letzte Woche notiert?" {
		t.Errorf("without RelativeDates: %q", got)
	}
}

// "recently" names the month before the time of asking only with Weights.Recently (off by
// default); a bare weekday in a question told in the past names the last such day by default.
func TestQuestionTimeRecently(t *testing.T) {
	asked := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC) // a Wednesday
	w := Default().Weights
	if s, ok := QuestionTime("What did Mel buy at the market recently?", asked, w); ok {
		t.Fatalf("recently, by default: %+v, want no time", s)
	}
	if s, ok := QuestionTime("What did Mel buy at the market on Friday?", asked, w); !ok ||
		!s.From.Equal(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("on Friday, by default: %+v %v, want 6 March", s, ok)
	}
	w.Recently = true
	for _, q := range []string{"What did Mel buy at the market recently?", "Was hat Herr Yilmaz neulich gesagt?"} {
		s, ok := QuestionTime(q, asked, w)
		if !ok || !s.From.Equal(time.Date(2026, 2, 11, 0, 0, 0, 0, time.UTC)) || !s.To.Equal(time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%q with Recently: %+v %v, want 11 February to 11 March", q, s, ok)
		}
	}
	w.Weekdays = false
	if s, ok := QuestionTime("What did Mel buy at the market on Friday?", asked, w); ok {
		t.Fatalf("on Friday without Weekdays: %+v, want no time", s)
	}
}
