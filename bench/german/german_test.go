package german

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCorpus: every question names memories that exist, every memory has a date, and the set
// is as large as the check promises (60 questions at least, off-topic ones beside).
func TestCorpus(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range c.Memories {
		if ids[m.ID] {
			t.Errorf("memory %s twice", m.ID)
		}
		ids[m.ID] = true
		if _, err := m.Time(); err != nil || m.Text == "" || m.Seq == "" {
			t.Errorf("memory %s: date %q, seq %q, text %q", m.ID, m.Date, m.Seq, m.Text)
		}
	}
	for _, q := range c.Questions {
		if _, err := c.AskedAt(q); err != nil {
			t.Errorf("%q: %v", q.Text, err)
		}
		if len(q.IDs) == 0 || q.Kind == "" {
			t.Errorf("%q: ids %v, kind %q", q.Text, q.IDs, q.Kind)
		}
		for _, id := range q.IDs {
			if !ids[id] {
				t.Errorf("%q names unknown memory %s", q.Text, id)
			}
		}
	}
	if len(c.Questions) < 60 || len(c.OffTopic) < 10 {
		t.Errorf("%d questions, %d off-topic", len(c.Questions), len(c.OffTopic))
	}
}

// TestEvaluate scores a ranker that knows the answers of half the questions.
func TestEvaluate(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string][]string{}
	for i, q := range c.Questions {
		if i%2 == 0 {
			answers[q.Text] = []string{"x", q.IDs[0]} // rank 2
		}
	}
	rep, err := Evaluate(context.Background(), c, func(_ context.Context, q string, _ time.Time) ([]string, error) {
		if strings.HasPrefix(q, "Wie hoch ist der Mount") {
			return []string{"hb01"}, nil
		}
		return answers[q], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := float64(len(answers)) / float64(len(c.Questions))
	if rep.Overall.Recall[0] != 0 || rep.Overall.Recall[1] != want || rep.Overall.MRR != want/2 {
		t.Errorf("overall %+v, want R@5 %.3f", rep.Overall, want)
	}
	if rep.OffTopicHits != 1 {
		t.Errorf("off-topic hits %d, want 1", rep.OffTopicHits)
	}
}
