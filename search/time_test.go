package search

import (
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
