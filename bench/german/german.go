// Package german is a German retrieval check: a small company's memory written for it (a
// handbook, customer notes, meeting minutes, personal notes), questions that ask for it in other
// words — compounds against their parts, separable verbs against their other forms, umlauts
// written ae/oe/ue, inflected forms, English loanwords — and off-topic questions that no memory
// answers. It scores rankings (recall@k, MRR) per kind of question; knowmind-bench german runs
// it against the service.
package german

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	germanwords "github.com/knowmind/knowmind/german"
)

//go:embed corpus.json
var corpusJSON []byte

// Memory is one stored memory of the corpus. Seq names the sequence it belongs to (a document
// and its sections, one meeting's minutes, one person's notes), in corpus order.
type Memory struct {
	ID    string `json:"id"`
	Seq   string `json:"seq"`
	Date  string `json:"date"` // YYYY-MM-DD: when it was written (the memory's occurred_at)
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Time is the memory's date as a time (noon UTC).
func (m Memory) Time() (time.Time, error) {
	d, err := time.Parse("2006-01-02", m.Date)
	return d.Add(12 * time.Hour), err
}

// Question asks for the memories IDs (any of them answers it). Kind names what makes it hard,
// joined by "+" (compound, verb, spelling, inflection, loanword, plain; date: the question names
// or asks for a day its memory states relative to when it was written; relative: the question
// names a time relative to when it is asked, "letzte Woche", "gestern"). Asked is the day it is
// asked (YYYY-MM-DD; empty: the corpus' Asked).
type Question struct {
	Text  string   `json:"q"`
	IDs   []string `json:"ids"`
	Kind  string   `json:"kind"`
	Asked string   `json:"asked,omitempty"`
}

// Corpus is the whole check. Asked is the day its questions are asked unless one names its
// own, after the newest memory.
type Corpus struct {
	Asked     string     `json:"asked"`
	Memories  []Memory   `json:"memories"`
	Questions []Question `json:"questions"`
	OffTopic  []string   `json:"offtopic"`
}

// AskedAt is when q is asked (noon UTC of its day, or of the corpus' day).
func (c Corpus) AskedAt(q Question) (time.Time, error) {
	day := cmp.Or(q.Asked, c.Asked)
	d, err := time.Parse("2006-01-02", day)
	if err != nil {
		return time.Time{}, fmt.Errorf("asked %q: %w", day, err)
	}
	return d.Add(12 * time.Hour), nil
}

// Load returns the corpus.
func Load() (Corpus, error) {
	var c Corpus
	if err := json.Unmarshal(corpusJSON, &c); err != nil {
		return c, fmt.Errorf("german corpus: %w", err)
	}
	return c, nil
}

// Ks are the cut-offs recall is reported at; MRR is cut at the last one.
var Ks = [3]int{1, 5, 10}

// Metrics are the scores over a set of questions.
type Metrics struct {
	Questions int
	Recall    [len(Ks)]float64 // share of questions with a memory that answers them in the top k
	MRR       float64
}

// Report is Evaluate's result: metrics per kind (a question of two kinds counts in both), over
// all questions, and how many off-topic questions got any hit.
type Report struct {
	ByKind        map[string]Metrics
	Overall       Metrics
	OffTopic      int // off-topic questions asked
	OffTopicHits  int // of those, how many got at least one hit
	OffTopicTotal int // hits over all off-topic questions
}

// Ranker returns the ids of the memories that best answer q asked at asked, best first, after
// the floor.
type Ranker func(ctx context.Context, q string, asked time.Time) ([]string, error)

// Evaluate asks rank every question and every off-topic question.
func Evaluate(ctx context.Context, c Corpus, rank Ranker) (Report, error) {
	type sums struct {
		n      int
		recall [len(Ks)]float64
		rr     float64
	}
	by := map[string]*sums{}
	var all sums
	for _, q := range c.Questions {
		asked, err := c.AskedAt(q)
		if err != nil {
			return Report{}, err
		}
		ranked, err := rank(ctx, q.Text, asked)
		if err != nil {
			return Report{}, fmt.Errorf("%q: %w", q.Text, err)
		}
		ranked = ranked[:min(len(ranked), Ks[len(Ks)-1])]
		first := slices.IndexFunc(ranked, func(id string) bool { return slices.Contains(q.IDs, id) })
		accs := []*sums{&all}
		for _, k := range strings.Split(q.Kind, "+") {
			if by[k] == nil {
				by[k] = &sums{}
			}
			accs = append(accs, by[k])
		}
		for _, s := range accs {
			s.n++
			if first >= 0 {
				s.rr += 1 / float64(first+1)
				for i, k := range Ks {
					if first < k {
						s.recall[i]++
					}
				}
			}
		}
	}
	finish := func(s *sums) Metrics {
		m := Metrics{Questions: s.n}
		if s.n > 0 {
			for i := range Ks {
				m.Recall[i] = s.recall[i] / float64(s.n)
			}
			m.MRR = s.rr / float64(s.n)
		}
		return m
	}
	rep := Report{ByKind: map[string]Metrics{}, Overall: finish(&all), OffTopic: len(c.OffTopic)}
	for k, s := range by {
		rep.ByKind[k] = finish(s)
	}
	for _, q := range c.OffTopic {
		asked, err := c.AskedAt(Question{})
		if err != nil {
			return Report{}, err
		}
		ranked, err := rank(ctx, q, asked)
		if err != nil {
			return Report{}, fmt.Errorf("%q: %w", q, err)
		}
		if len(ranked) > 0 {
			rep.OffTopicHits++
			rep.OffTopicTotal += len(ranked)
		}
	}
	return rep, nil
}

// WriteTable writes r as a Markdown table, one row per kind and one overall, and the off-topic
// line.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintln(w, "| kind | n | R@1 | R@5 | R@10 | MRR@10 |\n|---|--:|--:|--:|--:|--:|")
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	row := func(name string, m Metrics) {
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", name, m.Questions, m.Recall[0], m.Recall[1], m.Recall[2], m.MRR)
	}
	for _, k := range kinds {
		row(k, r.ByKind[k])
	}
	row("overall", r.Overall)
	fmt.Fprintf(w, "\noff-topic: %d of %d questions got hits (%d hits in all)\n", r.OffTopicHits, r.OffTopic, r.OffTopicTotal)
}

// Named is a report with the name of what produced it.
type Named struct {
	Name   string
	Report Report
}

// WriteSummary writes one row per report: overall metrics, R@10 per kind, off-topic hits.
func WriteSummary(w io.Writer, reports []Named) {
	if len(reports) == 0 {
		return
	}
	var kinds []string
	for k := range reports[0].Report.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprint(w, "| ranking | R@1 | R@5 | R@10 | MRR@10 |")
	for _, k := range kinds {
		fmt.Fprintf(w, " R@10 %s |", k)
	}
	fmt.Fprint(w, " off-topic with hits |\n|---|--:|--:|--:|--:|")
	for range kinds {
		fmt.Fprint(w, "--:|")
	}
	fmt.Fprintln(w, "--:|")
	for _, n := range reports {
		m := n.Report.Overall
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f |", n.Name, m.Recall[0], m.Recall[1], m.Recall[2], m.MRR)
		for _, k := range kinds {
			fmt.Fprintf(w, " %.3f |", n.Report.ByKind[k].Recall[2])
		}
		fmt.Fprintf(w, " %d/%d |\n", n.Report.OffTopicHits, n.Report.OffTopic)
	}
}

// SystemWordsLen is how many words the installed German word list holds (0: none), for the
// benchmark's header.
func SystemWordsLen() int { return germanwords.SystemWords().Len() }
