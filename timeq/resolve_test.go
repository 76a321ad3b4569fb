package timeq

import (
	"testing"
	"time"
)

func TestDates(t *testing.T) {
	// Monday 8 May 2023, 13:56: a LoCoMo session's date.
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	for _, tc := range []struct {
		text string
		want []time.Time
	}{
		{"I went to a LGBTQ support group yesterday and it was so powerful.", []time.Time{day(2023, 5, 7)}},
		{"I ran a charity race last Sunday.", []time.Time{day(2023, 5, 7)}},
		{"We're going camping next month!", []time.Time{day(2023, 6, 1)}},
		{"I painted that lake sunrise last year.", []time.Time{day(2022, 1, 1)}},
		{"the day after tomorrow we fly", []time.Time{day(2023, 5, 10)}},
		{"I met them two days ago, and again the day before yesterday", []time.Time{day(2023, 5, 6)}},
		{"The conference is in two weeks.", []time.Time{day(2023, 5, 22)}},
		{"I signed up 3 weeks ago", []time.Time{day(2023, 4, 17)}},
		{"last Friday we talked; next Friday we meet; this Friday is off", []time.Time{day(2023, 5, 5), day(2023, 5, 12)}},
		{"Last week was busy, next week too.", []time.Time{day(2023, 5, 1), day(2023, 5, 15)}},
		{"Letzten Freitag war das Treffen, nächsten Monat die Abnahme.", []time.Time{day(2023, 5, 5), day(2023, 6, 1)}},
		{"Übermorgen kommt der Techniker, gestern war er nicht da.", []time.Time{day(2023, 5, 10), day(2023, 5, 7)}},
		{"Die Lieferung kommt morgen.", []time.Time{day(2023, 5, 9)}},
		{"Heute Morgen rief Anna an.", []time.Time{day(2023, 5, 8)}},
		{"Guten Morgen zusammen", nil},
		{"Vor zwei Wochen haben wir bestellt, in einem Monat ist Abgabe.", []time.Time{day(2023, 4, 24), day(2023, 6, 8)}},
		{"Vergangene Woche und vorigen Monat", []time.Time{day(2023, 5, 1), day(2023, 4, 1)}},
		{"The release on 13 October 2023 and the audit on 2023-11-02, see 14.03.2026.", []time.Time{day(2023, 10, 13), day(2023, 11, 2), day(2026, 3, 14)}},
		{"Started in May 2021, back in 2019.", []time.Time{day(2021, 5, 1), day(2019, 1, 1)}},
		{"Nothing about time here, just a daybook and a todayish word.", nil},
		{"Resturlaub verfällt am 31. März des Folgejahres.", []time.Time{day(2023, 3, 31)}},
		{"Die Preisliste gilt ab 1. März; der Umzug ist für Oktober geplant.", []time.Time{day(2023, 3, 1), day(2023, 10, 1)}},
		{"Der Vertrag läuft bis Ende Juni.", []time.Time{day(2023, 6, 1)}},
		{"Das Gespräch ist am Montag, die Frist endet am 30.06. um zwölf.", []time.Time{day(2023, 5, 15), day(2023, 6, 30)}},
		{"We met on May 2nd and again on 5 May.", []time.Time{day(2023, 5, 2), day(2023, 5, 5)}},
	} {
		got := Dates(tc.text, at, 8)
		if len(got) != len(tc.want) {
			t.Errorf("Dates(%q) = %v, want %v", tc.text, got, tc.want)
			continue
		}
		for i := range got {
			if !got[i].Equal(tc.want[i]) {
				t.Errorf("Dates(%q) = %v, want %v", tc.text, got, tc.want)
				break
			}
		}
	}
}

// A text's day is the one on its writer's calendar: the zone of its time decides "today".
func TestDatesOnTheWritersCalendar(t *testing.T) {
	for _, tc := range []struct {
		at   string
		want time.Time
	}{
		{"2023-05-08T21:30:00-07:00", day(2023, 5, 7)}, // 9 May 04:30 UTC
		{"2023-05-09T00:30:00+02:00", day(2023, 5, 8)}, // 8 May 22:30 UTC
		{"2023-05-08T10:00:00Z", day(2023, 5, 7)},
	} {
		at, err := time.Parse(time.RFC3339, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := Dates("Gestern war Lisa beim Kunden.", at, 4); len(got) != 1 || !got[0].Equal(tc.want) {
			t.Errorf("gestern at %s = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestDatesBounded(t *testing.T) {
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	text := ""
	for y := 1990; y < 2030; y++ {
		text += " in " + time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Format("2006")
	}
	if got := Dates(text, at, 5); len(got) != 5 {
		t.Fatalf("Dates kept %d dates, want the limit 5", len(got))
	}
	if got := Dates("yesterday", time.Time{}, 5); got != nil {
		t.Fatalf("Dates without a time of its own = %v, want none", got)
	}
}

func TestAsksWhen(t *testing.T) {
	for q, want := range map[string]bool{
		"When did Caroline go to the LGBTQ support group?": true,
		"What date is the audit?":                          true,
		"How long ago was Caroline's 18th birthday?":       true,
		"Wann kommt der Techniker?":                        true,
		"Seit wann gilt die neue Reisekostenregel?":        true,
		"An welchem Tag ist die Abnahme?":                  true,
		"What did Caroline research?":                      false,
		"Wie reiche ich die Reisekostenabrechnung ein?":    false,
	} {
		if got := AsksWhen(q); got != want {
			t.Errorf("AsksWhen(%q) = %v, want %v", q, got, want)
		}
	}
}
