package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/knowmind/knowmind/bench/locomo"
)

// scoredHit is one hit of a ranking with its score.
type scoredHit struct {
	id    string
	score float64
}

// scoredRanker ranks a question's answers in conv with their scores, without a floor.
type scoredRanker func(ctx context.Context, conv *locomo.Conversation, q string) ([]scoredHit, error)

// writeScoreReport prints where the scores of answers and of off-topic hits lie, a diagnosis of
// the floor: the score of each question's first evidence turn in the top 10, and the best score
// each off-topic question reaches, as counts below a few floors and quantiles.
func writeScoreReport(ctx context.Context, w io.Writer, convs []locomo.Conversation, rank scoredRanker) error {
	var answers, firsts, offTopic []float64
	var offHits []string
	for ci := range convs {
		conv := &convs[ci]
		for _, q := range conv.Questions {
			if q.Category < 1 || q.Category > 4 || len(q.Evidence) == 0 {
				continue
			}
			hits, err := rank(ctx, conv, q.Text)
			if err != nil {
				return err
			}
			for i, h := range hits[:min(len(hits), 10)] {
				if slices.Contains(q.Evidence, h.id) {
					answers = append(answers, h.score)
					if i == 0 {
						firsts = append(firsts, h.score)
					}
					break
				}
			}
		}
		for _, q := range locomo.OffTopic {
			hits, err := rank(ctx, conv, q)
			if err != nil {
				return err
			}
			best := 0.0
			if len(hits) > 0 {
				best = hits[0].score
				offHits = append(offHits, fmt.Sprintf("- %s %q: %s %.3f", conv.SampleID, q, hits[0].id, best))
			}
			offTopic = append(offTopic, best)
		}
	}
	fmt.Fprintln(w, "## Scores (default ranking, no floor)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| scores | n | < 0.02 | < 0.05 | < 0.1 | p5 | p10 | p25 | p50 | max |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	row := func(name string, s []float64) {
		slices.Sort(s)
		below := func(f float64) int {
			return len(slices.DeleteFunc(slices.Clone(s), func(v float64) bool { return v >= f }))
		}
		q := func(p float64) float64 {
			if len(s) == 0 {
				return 0
			}
			return s[min(int(p*float64(len(s))), len(s)-1)]
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f |\n", name, len(s),
			below(0.02), below(0.05), below(0.1), q(0.05), q(0.1), q(0.25), q(0.5), q(1))
	}
	row("first evidence turn in the top 10", answers)
	row("evidence turn at rank 1", firsts)
	row("off-topic question's best hit (0: none)", offTopic)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Off-topic questions' best hits:")
	fmt.Fprintln(w)
	for _, l := range offHits {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	return nil
}
