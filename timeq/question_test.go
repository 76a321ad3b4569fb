package timeq

import (
	"strings"
	"testing"
	"time"
)

func TestParseAtResolvesRelativeTimesAgainstTheTimeOfAsking(t *testing.T) {
	wed := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC) // a Wednesday
	thu := wed.AddDate(0, 0, 1)
	sun := wed.AddDate(0, 0, 4)
	for _, tc := range []struct {
		q        string
		now      time.Time
		from, to time.Time
	}{
		{"What did I do last week?", wed, day(2026, 3, 2), day(2026, 3, 9)},
		{"Was habe ich letzte Woche gemacht?", wed, day(2026, 3, 2), day(2026, 3, 9)},
		{"Was war in der vergangenen Woche los?", wed, day(2026, 3, 2), day(2026, 3, 9)},
		{"Was hat Lena gestern notiert?", wed, day(2026, 3, 10), day(2026, 3, 11)},
		{"What happened yesterday?", wed, day(2026, 3, 10), day(2026, 3, 11)},
		{"Wer hat vorgestern angerufen?", wed, day(2026, 3, 9), day(2026, 3, 10)},
		{"What is planned for the day after tomorrow?", wed, day(2026, 3, 13), day(2026, 3, 14)},
		{"Was steht morgen an?", wed, day(2026, 3, 12), day(2026, 3, 13)},
		{"Was war heute Morgen?", wed, day(2026, 3, 11), day(2026, 3, 12)},
		{"Was haben wir vor zwei Wochen verschickt?", wed, day(2026, 2, 22), day(2026, 3, 1)},
		{"What did we send two weeks ago?", wed, day(2026, 2, 22), day(2026, 3, 1)},
		{"Was war vor 3 Tagen?", wed, day(2026, 3, 8), day(2026, 3, 9)},
		{"What did I buy last month?", wed, day(2026, 2, 1), day(2026, 3, 1)},
		{"Was wurde letzten Monat beschlossen?", wed, day(2026, 2, 1), day(2026, 3, 1)},
		{"Was ist für nächsten Monat geplant?", wed, day(2026, 4, 1), day(2026, 5, 1)},
		{"What have we decided this year?", wed, day(2026, 1, 1), day(2027, 1, 1)},
		{"Was haben wir dieses Jahr entschieden?", wed, day(2026, 1, 1), day(2027, 1, 1)},
		{"Was war letzten Freitag?", wed, day(2026, 3, 6), day(2026, 3, 7)},
		{"What happened last Friday?", wed, day(2026, 3, 6), day(2026, 3, 7)},
		{"Was habe ich am Wochenende gemacht?", wed, day(2026, 3, 7), day(2026, 3, 9)},
		{"Was mache ich am Wochenende?", thu, day(2026, 3, 14), day(2026, 3, 16)},
		{"Was war am Wochenende?", sun, day(2026, 3, 14), day(2026, 3, 16)},
		{"What did I do over the weekend?", wed, day(2026, 3, 7), day(2026, 3, 9)},
		{"What did I do last weekend?", sun, day(2026, 3, 7), day(2026, 3, 9)},
		{"Was war letztes Wochenende?", wed, day(2026, 3, 7), day(2026, 3, 9)},
		{"Welche Tickets kamen in den letzten zwei Wochen?", wed, day(2026, 2, 25), day(2026, 3, 12)},
		{"What did I read in the past week?", wed, day(2026, 3, 4), day(2026, 3, 12)},
		{"Was kam in den letzten Tagen rein?", wed, day(2026, 3, 8), day(2026, 3, 12)},
		// A written day comes first; a month without a year stays any year's.
		{"What did Maria do last weekend before April 10, 2023?", wed, day(2023, 4, 10), day(2023, 4, 11)},
		{"Was war am 14.03.2026, also gestern?", wed, day(2026, 3, 14), day(2026, 3, 15)},
		// The calendar of the time of asking: 23:30 at -07:00 on 11 March is 12 March in UTC.
		{"Was war gestern?", time.Date(2026, 3, 11, 23, 30, 0, 0, time.FixedZone("", -7*3600)), day(2026, 3, 10), day(2026, 3, 11)},
	} {
		s, start, end, ok := LocateAt(tc.q, tc.now)
		if !ok || !s.From.Equal(tc.from) || !s.To.Equal(tc.to) {
			t.Errorf("LocateAt(%q, %s) = %s..%s %v, want %s..%s", tc.q, tc.now.Format("Mon 2 Jan"), s.From.Format(time.DateOnly), s.To.Format(time.DateOnly), ok,
				tc.from.Format(time.DateOnly), tc.to.Format(time.DateOnly))
			continue
		}
		if strings.TrimSpace(tc.q[start:end]) == "" {
			t.Errorf("LocateAt(%q): empty location %d..%d", tc.q, start, end)
		}
	}
	if s, start, end, _ := LocateAt("Was haben wir vor zwei Wochen verschickt?", wed); !strings.Contains(s.From.String(), "2026") ||
		!strings.Contains("Was haben wir vor zwei Wochen verschickt?"[start:end], "vor zwei Wochen") {
		t.Errorf("location %q", "Was haben wir vor zwei Wochen verschickt?"[start:end])
	}
	if s, ok := ParseAt("When did Melanie go camping in June?", wed); !ok || s.Month != time.June {
		t.Errorf("a month without a year: %+v %v", s, ok)
	}
	for _, q := range []string{"Wie lange dauert die Probezeit?", "What is her morning routine?", "Guten Morgen, wer ist zuständig?",
		"Wer hat am Montag Teamtag?", "What did Caroline research?"} {
		if s, ok := ParseAt(q, wed); ok {
			t.Errorf("ParseAt(%q) = %+v, want no time", q, s)
		}
	}
	// Without a time of asking a relative time names nothing.
	if s, ok := ParseAt("What did I do last week?", time.Time{}); ok {
		t.Errorf("ParseAt without now = %+v", s)
	}
}

// A bare weekday in a question told in the past is the last such day before the time of
// asking, a weekday in a stated week that week's day; "recently" and its kin the month before.
// A weekday in a habit or a plan, and "every Friday", name no day.
func TestParseAtBareWeekdayAndRecently(t *testing.T) {
	wed := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC) // a Wednesday
	thu := wed.AddDate(0, 0, 1)
	recent := []time.Time{day(2026, 2, 11), day(2026, 3, 12)}
	for _, tc := range []struct {
		q        string
		now      time.Time
		from, to time.Time
	}{
		{"What did Caroline do on Friday?", wed, day(2026, 3, 6), day(2026, 3, 7)},
		{"Was hat Herr Yilmaz am Montag gesagt?", wed, day(2026, 3, 9), day(2026, 3, 10)},
		{"Was hat Herr Yilmaz am Mittwoch gesagt?", wed, day(2026, 3, 4), day(2026, 3, 5)},
		{"Who called on Tuesday evening?", wed, day(2026, 3, 10), day(2026, 3, 11)},
		{"Was ist am Freitagabend passiert?", wed, day(2026, 3, 6), day(2026, 3, 7)},
		{"Was war Sonntag los?", wed, day(2026, 3, 8), day(2026, 3, 9)},
		{"What was decided at Monday's meeting?", wed, day(2026, 3, 9), day(2026, 3, 10)},
		{"What did Mel do on Monday last week?", thu, day(2026, 3, 2), day(2026, 3, 3)},
		{"What happened last week on Tuesday?", thu, day(2026, 3, 3), day(2026, 3, 4)},
		{"What is planned for Friday next week?", thu, day(2026, 3, 20), day(2026, 3, 21)},
		{"Was hat Murat letzte Woche am Dienstag notiert?", thu, day(2026, 3, 3), day(2026, 3, 4)},
		{"Was hat Murat am Dienstag der letzten Woche notiert?", thu, day(2026, 3, 3), day(2026, 3, 4)},
		{"Was ist diese Woche am Montag passiert?", thu, day(2026, 3, 9), day(2026, 3, 10)},
		{"Was steht nächste Woche am Freitag an?", thu, day(2026, 3, 20), day(2026, 3, 21)},
		{"What did Mel buy recently?", wed, recent[0], recent[1]},
		{"What has John been doing lately?", wed, recent[0], recent[1]},
		{"What was the focus of John's recent research?", wed, recent[0], recent[1]},
		{"Was ist neulich passiert?", wed, recent[0], recent[1]},
		{"Was ist kürzlich passiert?", wed, recent[0], recent[1]},
		{"Was hat Lena vor kurzem erzählt?", wed, recent[0], recent[1]},
		{"Was war in letzter Zeit bei Hofmann los?", wed, recent[0], recent[1]},
		// A written or a relative time names more than "recently".
		{"What charity event did John organize recently in 2024?", wed, day(2024, 1, 1), day(2025, 1, 1)},
		{"What did Joanna recently watch on February 7, 2022?", wed, day(2022, 2, 7), day(2022, 2, 8)},
		{"Was hat Lena kürzlich, also gestern, erzählt?", wed, day(2026, 3, 10), day(2026, 3, 11)},
	} {
		s, start, end, ok := LocateAt(tc.q, tc.now)
		if !ok || !s.From.Equal(tc.from) || !s.To.Equal(tc.to) {
			t.Errorf("LocateAt(%q, %s) = %s..%s %v, want %s..%s", tc.q, tc.now.Format("Mon 2 Jan"), s.From.Format(time.DateOnly), s.To.Format(time.DateOnly), ok,
				tc.from.Format(time.DateOnly), tc.to.Format(time.DateOnly))
			continue
		}
		if strings.TrimSpace(tc.q[start:end]) == "" {
			t.Errorf("LocateAt(%q): empty location %d..%d", tc.q, start, end)
		}
	}
	if s, ok := ParseAt("What filling did Joanna use in the cake she made recently in May?", wed); !ok || s.Month != time.May {
		t.Errorf("a month without a year before recently: %+v %v", s, ok)
	}
	for _, q := range []string{"Wer hat am Montag Teamtag?", "Who works on Fridays?", "What does Caroline do every Friday?",
		"Was steht am Freitag an?", "Was ist am Montag geplant?", "Who is responsible on Monday?", "Was machen wir jeden Montag?",
		"Wer ist am Dienstag im Büro?", "What is planned on Friday?", "Was gibt es am Montag in der Kantine?"} {
		if s, ok := ParseAt(q, wed); ok {
			t.Errorf("ParseAt(%q) = %s..%s, want no time", q, s.From.Format(time.DateOnly), s.To.Format(time.DateOnly))
		}
	}
	if s, ok := ParseAt("What did Mel buy recently?", time.Time{}); ok {
		t.Errorf("recently without a time of asking = %+v", s)
	}
	// Without the vague words (the benchmark's ablation) they name nothing; the rest stays.
	for _, q := range []string{"What did Caroline do on Friday?", "Was ist kürzlich passiert?"} {
		if s, _, _, ok := LocateAtWith(q, wed, Vague{}); ok {
			t.Errorf("LocateAtWith(%q, without vague words) = %+v", q, s)
		}
	}
	if s, _, _, ok := LocateAtWith("What did Mel do on Monday last week?", thu, Vague{}); !ok || !s.From.Equal(day(2026, 3, 2)) {
		t.Errorf("a weekday in a stated week without vague words: %+v %v", s, ok)
	}
}
