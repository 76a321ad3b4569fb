package bm25

import (
	"slices"
	"testing"

	"github.com/knowmind/knowmind/german"
)

// TestAnalyzeForSearchGerman: the pairs of the German check — a question's compound or verb
// form against the memory's split words and other verb form — share their terms under
// AnalyzeForSearch, where Analyze keeps them apart. Documents get the verb and spelling terms;
// a query (with the vocabulary of the documents) the compound's parts too.
func TestAnalyzeForSearchGerman(t *testing.T) {
	if german.SystemWords().Len() == 0 {
		t.Skip("no German word list installed (apt-get install wngerman)")
	}
	tests := []struct {
		text  string
		query bool     // analysed as a query against vocab below
		want  []string // terms AnalyzeForSearch must add
		not   []string // terms it must not add
	}{
		{"Wann muss ich die Reisekostenabrechnung einreichen?", true, []string{"reisekost", "abrechnung"}, nil},
		{"Wann muss ich die Reisekostenabrechnung einreichen?", false, nil, []string{"reisekost", "abrechnung"}},
		{"Die Abrechnung der Reisekosten reicht man innerhalb von vier Wochen ein.", false, []string{"einreich"}, []string{"reis"}},
		{"Sie hat die Unterlagen gestern eingereicht.", false, []string{"einreich"}, nil},
		{"Bitte rufen Sie den Kunden morgen an, und notieren Sie den Termin.", false, []string{"anruf"}, nil},
		{"Wie lang ist die Kündigungsfrist?", true, []string{"kundigung", "frist"}, nil},
		{"Wann läuft die Probezeit ab?", true, nil, []string{"probezeit"}}, // the vocabulary knows no joined word
		{"Die Gebuehren werden monatlich berechnet.", false, []string{"gebuhr"}, nil},
		{"Schicken Sie es an die E-Mail-Adresse des Teams.", false, []string{"emailadress", "email"}, nil},
		{"Das Teammeeting findet in der Strasse statt.", true, []string{"team", "meeting"}, nil},
		{"Die Straße ist gesperrt.", false, []string{"strass"}, nil},
		{"Belege werden als Foto hochgeladen.", false, []string{"hochlad"}, []string{"hoch"}},
		// The known compound adds no parts; two words of the query make a known compound.
		{"Wer prüft die Qualitätssicherung?", true, nil, []string{"qualitat"}},
		{"Wer macht die Planung der Touren?", true, []string{"tourenplanung"}, nil},
	}
	vocab := map[string]bool{"reisekost": true, "abrechnung": true, "kundigung": true, "frist": true, "team": true,
		"meeting": true, "qualitatssicherung": true, "qualitat": true, "tourenplanung": true}
	known := func(term string) bool { return vocab[term] }
	for _, tt := range tests {
		base := Analyze("de", tt.text)
		k := known
		if !tt.query {
			k = nil
		}
		got := AnalyzeForSearch("de", tt.text, k)
		if !slices.Equal(got[:len(base)], base) {
			t.Errorf("%q: Analyze's tokens %q are not the start of %q", tt.text, base, got)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q (query %v): %q lacks %q", tt.text, tt.query, got, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(got[len(base):], w) {
				t.Errorf("%q (query %v): %q adds %q", tt.text, tt.query, got, w)
			}
		}
	}
}

// TestAnalyzeDocLength: the terms a document gains do not make it longer for BM25.
func TestAnalyzeDocLength(t *testing.T) {
	text := "Die Abrechnung reicht man ein; die Gebuehren auch."
	tokens, length := AnalyzeDocForSearch("de", text)
	if base := Analyze("de", text); length != len(base) || len(tokens) <= length {
		t.Errorf("tokens %q, length %d; want the %d tokens of Analyze as the length, and more tokens", tokens, length, len(base))
	}
}

// TestAnalyzeForSearchVocabulary: at query time the tenant's vocabulary splits compounds the
// word list does not know.
func TestAnalyzeForSearchVocabulary(t *testing.T) {
	vocab := map[string]bool{"knowmind": true, "servic": true}
	known := func(term string) bool { return vocab[term] }
	got := AnalyzeForSearch("de", "Wer betreut den Knowmindservice?", known)
	if !slices.Contains(got, "knowmind") || !slices.Contains(got, "servic") {
		t.Errorf("%q: want knowmind and servic", got)
	}
	if got := AnalyzeForSearch("de", "Wer betreut den Knowmindservice?", nil); slices.Contains(got, "knowmind") {
		t.Errorf("without the vocabulary: %q", got)
	}
}

// TestAnalyzeForSearchEnglish: English and untagged text are analysed as Analyze does.
func TestAnalyzeForSearchEnglish(t *testing.T) {
	for _, lang := range []string{"", "en"} {
		text := "She called the customer back about the e-mail address."
		if got, want := AnalyzeForSearch(lang, text, nil), Analyze(lang, text); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", lang, got, want)
		}
	}
}

func BenchmarkAnalyzeForSearchGerman(b *testing.B) {
	text := "Die Abrechnung der Reisekosten reicht man innerhalb von vier Wochen ein. Die Kündigungsfrist beträgt drei Monate zum Quartalsende."
	german.SystemWords()
	for b.Loop() {
		AnalyzeForSearch("de", text, nil)
	}
}

func BenchmarkAnalyzeGerman(b *testing.B) {
	text := "Die Abrechnung der Reisekosten reicht man innerhalb von vier Wochen ein. Die Kündigungsfrist beträgt drei Monate zum Quartalsende."
	for b.Loop() {
		Analyze("de", text)
	}
}
