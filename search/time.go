package search

import (
	"time"

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

// TimeSignal scores the candidate memories for the time signal (rank.Signals.Time) and returns
// the signal's weight (0: off for this question):
//   - a question that names a time (timeq.Parse) against each memory's own time and, with
//     Weights.TextDates, the days its text names: the best match (timeq.Span.Match, TimeSlack);
//   - a question that asks for a time and names none ("When did …", "Wann …") with weight
//     Weights.AsksWhen: 1 for each memory whose text names a day, where such an answer stands.
func TimeSignal(query string, mems []MemoryTime, w Weights) (map[string]float64, float64) {
	span, named := timeq.Parse(query)
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
		return out, w.Time
	case !named && w.AsksWhen > 0 && timeq.AsksWhen(query):
		out := make(map[string]float64, len(mems))
		for _, m := range mems {
			if len(m.Dates) > 0 {
				out[m.Memory] = 1
			}
		}
		return out, w.AsksWhen
	}
	return nil, 0
}
