package search

import (
	"time"

	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/timeq"
)

// MemoryTime is what the time signal knows of a candidate memory: its own time (valid_from:
// when it was stored, or the time it is about) and the days its text names (Memory.dates,
// relative ones resolved against its own time at write time).
type MemoryTime struct {
	Memory    string
	ValidFrom *time.Time
	Dates     []time.Time
}

// QuestionTime is the time query names: a written date, or with Weights.RelativeDates a
// relative one ("last week", "gestern") resolved against asked, the time of asking
// (timeq.LocateAt).
func QuestionTime(query string, asked time.Time, w Weights) (timeq.Span, bool) {
	if !w.RelativeDates {
		asked = time.Time{}
	}
	s, _, _, ok := timeq.LocateAtWith(query, asked, timeq.Vague{Weekdays: w.Weekdays, Recently: w.Recently})
	return s, ok
}

// WithoutTime is query without the time it names (QuestionTime): the time signal matches it,
// not the memories' words (the floor's word coverage, Known, leaves it out).
func WithoutTime(query string, asked time.Time, w Weights) string {
	if !w.RelativeDates {
		asked = time.Time{}
	}
	if _, start, end, named := timeq.LocateAtWith(query, asked, timeq.Vague{Weekdays: w.Weekdays, Recently: w.Recently}); named {
		return query[:start] + " " + query[end:]
	}
	return query
}

// TimeReads tells what TimeSignals reads of the candidate memories for query asked at asked
// under w: their own time (validFrom) and the days their text names (dates). A question that
// names no time and does not ask for one reads neither, so recall does not ask Dgraph for them.
func TimeReads(query string, asked time.Time, w Weights) (validFrom, dates bool) {
	switch _, named := QuestionTime(query, asked, w); {
	case named && w.Time > 0:
		return true, w.TextDates
	case !named && w.AsksWhen > 0 && timeq.AsksWhen(query):
		return false, true
	}
	return false, false
}

// TimeSignals sets the time signals of one recall of query, asked at asked, in sig:
//   - a question that names a time (QuestionTime): rank.Signals.Time, each memory's own time
//     and, with Weights.TextDates, the days its text names matched against it (the best
//     match; timeq.Span.Match with TimeSlack), of weight Weights.Time;
//   - a question that asks for a time and names none ("When did …", "Wann …"):
//     rank.Signals.Dated, 1 for each memory whose text names a day (where such an answer
//     stands), a factor of weight Weights.AsksWhen.
func TimeSignals(query string, asked time.Time, mems []MemoryTime, w Weights, sig *rank.Signals) {
	span, named := QuestionTime(query, asked, w)
	switch {
	case named && w.Time > 0:
		out := make(map[string]float64, len(mems))
		for _, m := range mems {
			best := 0.0
			if m.ValidFrom != nil {
				best = span.Match(*m.ValidFrom, TimeSlack)
			}
			if w.TextDates {
				for _, d := range m.Dates {
					best = max(best, span.Match(d, TimeSlack))
				}
			}
			if best > 0 {
				out[m.Memory] = max(out[m.Memory], best)
			}
		}
		sig.Time, sig.TimeWeight = out, w.Time
	case !named && w.AsksWhen > 0 && timeq.AsksWhen(query):
		out := make(map[string]float64, len(mems))
		for _, m := range mems {
			if len(m.Dates) > 0 {
				out[m.Memory] = 1
			}
		}
		sig.Dated, sig.DatedWeight = out, w.AsksWhen
	}
}
