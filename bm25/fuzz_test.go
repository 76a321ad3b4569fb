package bm25_test

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/knowmind/knowmind/bm25"
)

// FuzzAnalyze: the analysers take any text without panicking and give
// non-empty, valid UTF-8 terms for valid input; AnalyzeForSearch starts with Analyze's tokens.
func FuzzAnalyze(f *testing.F) {
	f.Add("Die Einarbeitungen laufen jährlich; QM-Schulung für Müller GmbH.")
	f.Add("The onboarding process starts on day one, doesn't it?")
	f.Add("ǅ ﬁ ß ẞ İ ı \u0301e\u0308 日本語 🙂 \x00\xff")
	f.Add("Die Reisekosten-Abrechnung reicht man ein, die Gebuehren ruft sie an. Straße an")
	f.Fuzz(func(t *testing.T, text string) {
		for _, lang := range []string{"de", "", "en"} {
			base, search := bm25.Analyze(lang, text), bm25.AnalyzeForSearch(lang, text, func(string) bool { return true })
			if len(search) < len(base) || !slices.Equal(search[:len(base)], base) {
				t.Fatalf("lang %q: AnalyzeForSearch %q does not start with Analyze %q", lang, search, base)
			}
			for _, term := range append(append(base, search...), bm25.Terms(lang, text)...) {
				if term == "" || (utf8.ValidString(text) && !utf8.ValidString(term)) {
					t.Fatalf("lang %q: bad term %q", lang, term)
				}
			}
		}
	})
}
