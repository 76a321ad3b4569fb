package timeq

import (
	"testing"
	"time"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		q        string
		from, to time.Time
		month    time.Month
	}{
		{"What painting did Melanie show to Caroline on October 13, 2023?", day(2023, 10, 13), day(2023, 10, 14), 0},
		{"What did Gina find for her clothing store on 1 February, 2023?", day(2023, 2, 1), day(2023, 2, 2), 0},
		{"Which book did Tim finish on 8th December, 2023?", day(2023, 12, 8), day(2023, 12, 9), 0},
		{"Was hat Anna am 14. März 2026 entschieden?", day(2026, 3, 14), day(2026, 3, 15), 0},
		{"Stand vom 14.03.2026", day(2026, 3, 14), day(2026, 3, 15), 0},
		{"state at 2026-03-14", day(2026, 3, 14), day(2026, 3, 15), 0},
		{"What setback did Melanie face in October 2023?", day(2023, 10, 1), day(2023, 11, 1), 0},
		{"Welche Tarife galten im März 2026?", day(2026, 3, 1), day(2026, 4, 1), 0},
		{"How many times has Melanie gone to the beach in 2023?", day(2023, 1, 1), day(2024, 1, 1), 0},
		{"When did Melanie go camping in June?", time.Time{}, time.Time{}, time.June},
	} {
		s, ok := Parse(tc.q)
		if !ok || !s.From.Equal(tc.from) || !s.To.Equal(tc.to) || s.Month != tc.month {
			t.Errorf("Parse(%q) = %+v %v", tc.q, s, ok)
		}
	}
	for _, q := range []string{"What did Caroline research?", "Who may attend?", "Wer ist Ansprechpartnerin?", "on 31 February, 2023"} {
		if s, ok := Parse(q); ok && !s.From.IsZero() && s.From.Month() == 2 && s.From.Day() == 31 {
			t.Errorf("Parse(%q) = %+v: impossible date", q, s)
		} else if ok && q != "on 31 February, 2023" {
			t.Errorf("Parse(%q) = %+v, want no time", q, s)
		}
	}
}

func TestMatch(t *testing.T) {
	s, _ := Parse("on 13 October, 2023")
	slack := 72 * time.Hour
	if got := s.Match(day(2023, 10, 13).Add(15*time.Hour), slack); got != 1 {
		t.Fatalf("inside = %v", got)
	}
	if got := s.Match(day(2023, 10, 17), slack); got < 0.45 || got > 0.55 {
		t.Fatalf("three days after = %v, want about half", got)
	}
	if got := s.Match(day(2023, 6, 1), slack); got > 0.01 {
		t.Fatalf("months away = %v", got)
	}
	if s.Match(time.Time{}, slack) != 0 {
		t.Fatal("no time must not match")
	}
	june, _ := Parse("in June")
	if june.Match(day(2021, 6, 20), slack) != 1 || june.Match(day(2023, 8, 20), slack) > 0.01 {
		t.Fatal("month without a year")
	}
}

func TestLocate(t *testing.T) {
	for _, tc := range []struct{ q, named string }{
		{"What did Nate do for Joanna on 25 May, 2022?", "25 May, 2022"},
		{"Where did Joanna travel to in July 2022?", "July 2022"},
		{"Was passiert im April 2026 mit dem Server?", "April 2026"},
		{"When did Melanie go camping in June?", "in June"},
		{"Stand vom 14.03.2026", "14.03.2026"},
	} {
		_, start, end, ok := Locate(tc.q)
		if !ok || tc.q[start:end] != tc.named {
			t.Errorf("Locate(%q) = %q %v, want %q", tc.q, tc.q[start:end], ok, tc.named)
		}
	}
	if _, _, _, ok := Locate("What did Caroline research?"); ok {
		t.Error("a question naming no time located one")
	}
}
