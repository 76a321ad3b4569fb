package locomo

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// Ks are the cut-offs recall is reported at; MRR is cut at the last one (MRR@10).
var Ks = [3]int{1, 5, 10}

// Ranker returns the dia_ids of conv's turns that best answer q, best first. It may return
// fewer than Ks' largest (a text ranker returns only turns sharing a term with the question);
// only the first Ks[len(Ks)-1] are scored.
type Ranker func(ctx context.Context, conv *Conversation, q Question) ([]string, error)

// Metrics are the scores over a set of questions.
type Metrics struct {
	Questions int
	Any       [len(Ks)]float64 // share of questions with at least one evidence turn in the top k
	All       [len(Ks)]float64 // share with every evidence turn in the top k
	MRR       float64          // mean of 1/rank of the first evidence turn within the top 10, else 0
}

// Report is Evaluate's result: metrics per category (1–4) and over all scored questions.
type Report struct {
	ByCategory map[int]Metrics
	Overall    Metrics
	// Skipped counts category 1–4 questions left out because none of their evidence ids names a
	// turn of the conversation (the data has a handful).
	Skipped int
	// OffTopic: the off-topic questions that got hits (EvaluateOffTopic; zero when not asked).
	OffTopic OffTopicReport
}

// Evaluate asks rank every question of categories 1–4 of every conversation and scores the
// rankings against the evidence turns.
func Evaluate(ctx context.Context, convs []Conversation, rank Ranker) (Report, error) {
	type sums struct {
		n        int
		any, all [len(Ks)]float64
		rr       float64
	}
	byCat := map[int]*sums{}
	var overall sums
	rep := Report{ByCategory: map[int]Metrics{}}
	depth := Ks[len(Ks)-1]
	for ci := range convs {
		conv := &convs[ci]
		for _, q := range conv.Questions {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			if len(q.Evidence) == 0 {
				rep.Skipped++
				continue
			}
			ranked, err := rank(ctx, conv, q)
			if err != nil {
				return Report{}, fmt.Errorf("locomo: %s %q: %w", conv.SampleID, q.Text, err)
			}
			ranked = ranked[:min(len(ranked), depth)]
			first := -1 // rank (0-based) of the first evidence turn
			for i, id := range ranked {
				if slices.Contains(q.Evidence, id) {
					first = i
					break
				}
			}
			s := byCat[q.Category]
			if s == nil {
				s = &sums{}
				byCat[q.Category] = s
			}
			for _, acc := range []*sums{s, &overall} {
				acc.n++
				if first >= 0 {
					acc.rr += 1 / float64(first+1)
				}
				for i, k := range Ks {
					top := ranked[:min(len(ranked), k)]
					if first >= 0 && first < k {
						acc.any[i]++
					}
					if containsAll(top, q.Evidence) {
						acc.all[i]++
					}
				}
			}
		}
	}
	finish := func(s *sums) Metrics {
		m := Metrics{Questions: s.n}
		if s.n == 0 {
			return m
		}
		for i := range Ks {
			m.Any[i] = s.any[i] / float64(s.n)
			m.All[i] = s.all[i] / float64(s.n)
		}
		m.MRR = s.rr / float64(s.n)
		return m
	}
	for c, s := range byCat {
		rep.ByCategory[c] = finish(s)
	}
	rep.Overall = finish(&overall)
	return rep, nil
}

func containsAll(list, want []string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

// WriteTable writes r as a Markdown table, one row per category and one overall.
func (r Report) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "| category | n | R@1 | R@5 | R@10 | all@1 | all@5 | all@10 | MRR@10 |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n"); err != nil {
		return err
	}
	row := func(name string, m Metrics) error {
		_, err := fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
			name, m.Questions, m.Any[0], m.Any[1], m.Any[2], m.All[0], m.All[1], m.All[2], m.MRR)
		return err
	}
	for _, c := range Categories {
		if m, ok := r.ByCategory[c.ID]; ok {
			if err := row(fmt.Sprintf("%d %s", c.ID, c.Name), m); err != nil {
				return err
			}
		}
	}
	return row("overall", r.Overall)
}

// Named is a report with the name of what produced it, for WriteSummary.
type Named struct {
	Name   string
	Report Report
}

// WriteSummary writes one Markdown row per report with its overall metrics and R@10 per
// category, so that ablations of one run sit side by side.
func WriteSummary(w io.Writer, reports []Named) error {
	header := "| ranker | R@1 | R@5 | R@10 | all@10 | MRR@10 |"
	rule := "|---|--:|--:|--:|--:|--:|"
	for _, c := range Categories {
		header += fmt.Sprintf(" R@10 c%d |", c.ID)
		rule += "--:|"
	}
	header += " all@10 c1 | off-topic with hits |"
	rule += "--:|--:|"
	if _, err := fmt.Fprintf(w, "%s\n%s\n", header, rule); err != nil {
		return err
	}
	for _, n := range reports {
		m := n.Report.Overall
		line := fmt.Sprintf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |", n.Name, m.Any[0], m.Any[1], m.Any[2], m.All[2], m.MRR)
		for _, c := range Categories {
			line += fmt.Sprintf(" %.3f |", n.Report.ByCategory[c.ID].Any[2])
		}
		line += fmt.Sprintf(" %.3f |", n.Report.ByCategory[1].All[2])
		if o := n.Report.OffTopic; o.Asked > 0 {
			line += fmt.Sprintf(" %d/%d |", o.WithHits, o.Asked)
		} else {
			line += " – |"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
