package search

import (
	"fmt"
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
	TimeSignals("What did Caroline do on 7 May 2023?", mems, w, &sig)
	if sig.Time["told"] != 1 || sig.Time["plain"] >= 1 || sig.Time["plain"] <= 0 || sig.TimeWeight != w.Time || sig.Dated != nil {
		t.Fatalf("a named day: %+v", sig)
	}
	w.TextDates = false
	sig = rank.Signals{}
	TimeSignals("What did Caroline do on 7 May 2023?", mems, w, &sig)
	if sig.Time["told"] != sig.Time["plain"] {
		t.Fatalf("without the text's days both match by their own time only: %+v", sig.Time)
	}
	sig = rank.Signals{}
	TimeSignals("When did Caroline go to the support group?", mems, Default().Weights, &sig)
	if sig.Dated["told"] != 1 || sig.Dated["plain"] != 0 || sig.DatedWeight != Default().Weights.AsksWhen || sig.Time != nil {
		t.Fatalf("a when-question: %+v", sig)
	}
	sig = rank.Signals{}
	TimeSignals("What did Caroline research?", mems, Default().Weights, &sig)
	if sig.Time != nil || sig.Dated != nil {
		t.Fatalf("a question without time: %+v", sig)
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
	}
	for _, c := range cases {
		validFrom, days := TimeReads(c.query, c.w)
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
		TimeSignals(c.query, full, c.w, &want)
		TimeSignals(c.query, read, c.w, &got)
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%q: with what TimeReads names %+v, with everything %+v", c.query, got, want)
		}
	}
}
