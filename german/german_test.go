package german

import (
	"slices"
	"strings"
	"testing"
)

// words is a small lexicon written for the tests, so that they do not depend on an installed
// word list (TestSystemWords checks that one where it is installed).
func words(ws ...string) *WordList {
	l, _ := ReadWordList(strings.NewReader(strings.Join(ws, "\n")))
	return l
}

var lex = words("reise", "reisen", "kosten", "abrechnung", "kündigung", "frist", "arbeit", "vertrag",
	"schule", "buch", "kinder", "garten", "tages", "ordnung", "firma", "firmen", "wagen", "team",
	"meeting", "urlaub", "antrag", "einreichen", "anrufen", "ausfüllen", "anmelden", "ändern",
	"gebühren", "kündigen", "zurückrufen", "abrechnungen", "fahrt", "rathaus", "haus", "mail",
	"adresse", "kunden", "service", "ordner", "anfangen", "teilnehmen", "leiter", "mitarbeiter", "mitarbeit", "rinnen", "innen", "suppe", "ort", "meister", "schaft")

func TestSplit(t *testing.T) {
	tests := []struct {
		word string
		want []string
	}{
		{"reisekostenabrechnung", []string{"reise", "kosten", "abrechnung"}},
		{"kündigungsfrist", []string{"kündigung", "frist"}}, // linking -s-
		{"arbeitsvertrag", []string{"arbeit", "vertrag"}},   // linking -s-
		{"schulbuch", []string{"schule", "buch"}},           // dropped e
		{"kindergarten", []string{"kinder", "garten"}},      //
		{"tagesordnung", []string{"tages", "ordnung"}},      // modifier as a word form
		{"firmenwagen", []string{"firmen", "wagen"}},        // -en- (firmen is a word)
		{"teammeeting", []string{"team", "meeting"}},        // English loanwords
		{"urlaubsantrag", []string{"urlaub", "antrag"}},     //
		{"kundenserviceordner", []string{"kunden", "service", "ordner"}},
		{"reisekostenabrechnungen", []string{"reise", "kosten", "abrechnungen"}},
		{"teamleiterinnen", []string{"team", "leiter"}}, // a feminine form, split as its base
		{"mitarbeiterinnen", nil},                       // not mitarbeit-rinnen
		{"support", nil},                                // not supp(e)-ort: a dropped e needs a longer modifier
		{"meisterschaft", nil},                          // -schaft is a suffix, not a word of the compound
		{"abrechnung", nil},                             // a word, no split into words of the lexicon
		{"rathaus", nil},                                // "rat" is shorter than a modifier may be
		{"reise", nil},                                  // too short to be a compound
		{"xyzreisekosten", nil},                         // a part the lexicon does not know
		{"reisekostenxyz", nil},                         // a head the lexicon does not know
		{strings.Repeat("reise", 9), nil},               // beyond maxWordRunes
	}
	for _, tt := range tests {
		if got := Split(tt.word, lex); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := Split("reisekosten", nil); got != nil {
		t.Errorf("Split without a lexicon = %q, want nil", got)
	}
}

func TestSeparable(t *testing.T) {
	tests := []struct {
		word string
		lex  Lexicon
		want string
	}{
		{"eingereicht", lex, "einreichen"},
		{"einzureichen", lex, "einreichen"},
		{"angerufen", lex, "anrufen"},
		{"ausgefüllt", lex, "ausfüllen"},
		{"angemeldet", lex, "anmelden"},
		{"zurückgerufen", lex, "zurückrufen"},
		{"teilzunehmen", lex, "teilnehmen"},
		{"angefangen", lex, "anfangen"},
		{"eingereicht", nil, "einreichen"}, // no lexicon: the first guess
		{"angeln", lex, ""},                // not a particle and ge/zu
		{"ausgezeichnet", words("x"), ""},  // lexicon without the verb
		{"abrechnung", lex, ""},
	}
	for _, tt := range tests {
		if got := Separable(tt.word, tt.lex); got != tt.want {
			t.Errorf("Separable(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestInfinitives(t *testing.T) {
	tests := []struct {
		form string
		want string // among the guesses
	}{
		{"reicht", "reichen"}, {"ruft", "rufen"}, {"meldet", "melden"}, {"ändert", "ändern"},
		{"füllst", "füllen"}, {"reichte", "reichen"}, {"reichten", "reichen"}, {"rufe", "rufen"},
	}
	for _, tt := range tests {
		if got := Infinitives(tt.form); !slices.Contains(got, tt.want) {
			t.Errorf("Infinitives(%q) = %q, want %q among them", tt.form, got, tt.want)
		}
	}
}

func TestUmlauts(t *testing.T) {
	tests := []struct{ word, want string }{
		{"gebuehren", "gebühren"},
		{"kuendigung", "kündigung"},
		{"aendern", "ändern"},
		{"steuer", ""}, // no spelling with ü is a word
		{"quelle", ""}, // que is never an umlaut
		{"kosten", ""}, // no pair at all
	}
	for _, tt := range tests {
		if got := Umlauts(tt.word, lex); got != tt.want {
			t.Errorf("Umlauts(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestReadWordList(t *testing.T) {
	// A hunspell .dic: a count first, affix flags after "/".
	l, err := ReadWordList(strings.NewReader("3\nReise/NS\nKosten/N\nab\n2000er\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Has("reise") || !l.Has("kosten") || l.Has("ab") || l.Has("3") || l.Len() != 2 {
		t.Errorf("read %d words: %v", l.Len(), l.words)
	}
	var none *WordList
	if none.Has("reise") || none.Len() != 0 {
		t.Error("a nil list holds words")
	}
}

// TestSystemWords splits with the installed word list (Debian's wngerman), where there is one.
func TestSystemWords(t *testing.T) {
	sys := SystemWords()
	if sys.Len() == 0 {
		t.Skip("no German word list installed (apt-get install wngerman)")
	}
	for word, want := range map[string][]string{
		"reisekostenabrechnung": {"reisekosten", "reise", "kosten", "abrechnung"},
		"kündigungsfrist":       {"kündigung", "frist"},
	} {
		if got := Split(word, sys); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Separable("eingereicht", sys); got != "einreichen" {
		t.Errorf("Separable(eingereicht) = %q", got)
	}
}

func BenchmarkSplit(b *testing.B) {
	sys := SystemWords()
	if sys.Len() == 0 {
		b.Skip("no German word list installed")
	}
	for b.Loop() {
		Split("reisekostenabrechnung", sys)
	}
}
